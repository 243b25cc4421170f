import Foundation
import Testing
@testable import TrafficGeoFeeds
import TrafficGeoModel
@testable import TrafficGeoOGR
import TrafficGeoPROJ

/// GIS files read through GDAL/OGR (issue 63): KML, GML in its own CRS, a Shapefile (plain and
/// zipped), CSV with WKT; files the tests make. Polygons and multi-lines are placed by the rule
/// GeoJSON's are: a polygon's point on its surface, a line's first point with the line kept.
@Suite("GIS files through GDAL", .enabled(if: (try? OGRLibrary.shared()) != nil, "GDAL's library is not installed (apt install libgdal32, or gdal-bin)"))
struct OGRFeedReaderTests {
    let folder = TestSupport.temporaryDirectory()

    func read(_ url: URL, crs: String? = nil, fields: [CSVColumns.Role: String] = [:]) throws -> (incidents: [Incident], skipped: [SkippedEntry], notes: [String]) {
        var incidents: [Incident] = [], skipped: [SkippedEntry] = [], notes: [String] = []
        let reader = OGRFeedReader(crs: crs, fields: fields, note: { notes.append($0.text) })
        try reader.read(FeedInput(localFile: url.path), source: "test") { event in
            switch event {
            case let .incident(i): incidents.append(i)
            case let .skipped(s): skipped.append(s)
            }
        }
        return (incidents, skipped, notes)
    }

    static let kml = """
    <?xml version="1.0" encoding="UTF-8"?>
    <kml xmlns="http://www.opengis.net/kml/2.2"><Document><Folder><name>works</name>
    <Placemark><name>M25 clockwise between J9 and J10</name><description><![CDATA[<b>Lane closed</b> for resurfacing]]></description>
      <Point><coordinates>-0.35,51.30,0</coordinates></Point></Placemark>
    <Placemark><name>Baustelle Hardturmstrasse</name><description>Sperrung</description>
      <LineString><coordinates>8.5100,47.3900 8.5200,47.3920 8.5300,47.3950</coordinates></LineString></Placemark>
    <Placemark><name>Construction site Escher-Wyss</name>
      <Polygon><outerBoundaryIs><LinearRing><coordinates>8.50,47.38 8.54,47.38 8.54,47.39 8.51,47.39 8.51,47.42 8.50,47.42 8.50,47.38</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>
    <Placemark><name>Closure on both carriageways</name>
      <MultiGeometry><LineString><coordinates>8.60,47.40 8.61,47.41</coordinates></LineString><LineString><coordinates>8.62,47.42 8.63,47.43</coordinates></LineString></MultiGeometry></Placemark>
    </Folder></Document></kml>
    """

    @Test func kmlPointsLinesPolygonsAndMultiGeometries() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(Self.kml, name: "works.kml", in: folder)
        #expect(FeedFormat.detect(try FeedInput(localFile: url.path).head()) == .gis)
        let (incidents, skipped, notes) = try read(url)
        #expect(skipped.isEmpty, "\(skipped)")
        try #require(incidents.count == 4, "\(incidents.map(\.title))")
        let m25 = incidents[0]
        #expect(m25.title == "M25 clockwise between J9 and J10")
        #expect(m25.road == "M25")
        #expect(m25.summary == "Lane closed for resurfacing", "\(m25.summary ?? "nil")")
        #expect(m25.position == Coordinate(latitude: 51.30, longitude: -0.35))
        // A line: its first point, the line kept as the segment.
        let line = incidents[1]
        #expect(line.position == Coordinate(latitude: 47.39, longitude: 8.51))
        #expect(line.segment?.count == 3)
        // An L-shaped polygon: a point on its surface (its centroid would fall outside).
        let area = try #require(incidents[2].position)
        let ring = [(8.50, 47.38), (8.54, 47.38), (8.54, 47.39), (8.51, 47.39), (8.51, 47.42), (8.50, 47.42), (8.50, 47.38)].map { (x: $0.0, y: $0.1) }
        #expect(GeoJSONGeometry.contains(ring, (x: area.longitude, y: area.latitude)), "\(area)")
        #expect((incidents[2].segment?.count ?? 0) >= 4, "the outline is kept for the map")
        // Several lines: the first one's first point.
        #expect(incidents[3].position == Coordinate(latitude: 47.40, longitude: 8.60))
        #expect(notes.contains { $0.contains("title ← Name") || $0.contains("layer works") }, "\(notes)")
    }

    /// GML in ETRS89 / UTM 32N, as a WFS answers: brought to WGS84 by the file's own CRS.
    @Test func gmlInItsOwnCRS() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let gml = """
        <?xml version="1.0" encoding="utf-8" ?>
        <ogr:FeatureCollection xmlns:ogr="http://ogr.maptools.org/" xmlns:gml="http://www.opengis.net/gml">
          <gml:featureMember><ogr:baustellen fid="KB-17">
            <ogr:geometryProperty><gml:Point srsName="EPSG:25832"><gml:coordinates>356000,5645000</gml:coordinates></gml:Point></ogr:geometryProperty>
            <ogr:titel>A3 Köln Richtung Frankfurt: Baustelle</ogr:titel><ogr:kennung>KB-17</ogr:kennung>
          </ogr:baustellen></gml:featureMember>
          <gml:featureMember><ogr:baustellen fid="KB-18">
            <ogr:geometryProperty><gml:LineString srsName="EPSG:25832"><gml:coordinates>357000,5646000 358000,5647000</gml:coordinates></gml:LineString></ogr:geometryProperty>
            <ogr:titel>A4 Sperrung</ogr:titel><ogr:kennung>KB-18</ogr:kennung>
          </ogr:baustellen></gml:featureMember>
        </ogr:FeatureCollection>
        """
        let url = try TestSupport.write(gml, name: "baustellen.gml", in: folder)
        #expect(FeedFormat.detect(try FeedInput(localFile: url.path).head()) == .gis)
        let (incidents, _, _) = try read(url)
        try #require(incidents.count == 2)
        let utm = try Projector(source: "EPSG:25832", target: "EPSG:4326")
        for (incident, (x, y)) in zip(incidents, [(356000.0, 5645000.0), (357000.0, 5646000.0)]) {
            let expected = try utm.transform(x: x, y: y)
            let position = try #require(incident.position)
            #expect(abs(position.longitude - expected.x) < 1e-7 && abs(position.latitude - expected.y) < 1e-7, "\(position) vs \(expected)")
        }
        #expect(incidents.map(\.id) == ["KB-17", "KB-18"])
        #expect(incidents[0].road == "A3")
    }

    /// A Shapefile of lines in British National Grid, made by ogr2ogr; read as it is and zipped.
    @Test(.enabled(if: TestSupport.which("ogr2ogr") != nil, "ogr2ogr is not installed (apt install gdal-bin)"))
    func shapefilePlainAndZipped() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let geojson = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "properties": {"title": "A404(M) closed at J9A", "road": "A404(M)", "starts": "2024-05-01T20:00:00Z"},
           "geometry": {"type": "LineString", "coordinates": [[486000, 180000], [486500, 180200]]}},
          {"type": "Feature", "properties": {"title": "Roadworks", "road": "M4"},
           "geometry": {"type": "MultiLineString", "coordinates": [[[480000, 178000], [481000, 178500]], [[482000, 179000], [483000, 179500]]]}}
        ]}
        """
        let source = try TestSupport.write(geojson, name: "bng.geojson", in: folder)
        let shp = folder.appendingPathComponent("works.shp").path
        let made = try TestSupport.run(TestSupport.which("ogr2ogr")!, ["-f", "ESRI Shapefile", "-s_srs", "EPSG:27700", "-a_srs", "EPSG:27700", "-nlt", "PROMOTE_TO_MULTI", shp, source.path])
        try #require(made.status == 0, "\(made.stderr)")
        let bng = try Projector(source: "EPSG:27700", target: "EPSG:4326")
        let first = try bng.transform(x: 486000, y: 180000), second = try bng.transform(x: 480000, y: 178000)
        func check(_ incidents: [Incident]) throws {
            try #require(incidents.count == 2, "\(incidents)")
            #expect(incidents[0].title == "A404(M) closed at J9A" && incidents[0].road == "A404(M)", "\(incidents[0])")
            let p0 = try #require(incidents[0].position), p1 = try #require(incidents[1].position)
            #expect(abs(p0.longitude - first.x) < 1e-7 && abs(p0.latitude - first.y) < 1e-7, "\(p0)")
            #expect(abs(p1.longitude - second.x) < 1e-7 && abs(p1.latitude - second.y) < 1e-7, "\(p1)")
            #expect(incidents[1].segment?.count == 4, "a multi-line is the segment, its parts joined in order")
        }
        #expect(FeedFormat.detect(try FeedInput(localFile: shp).head()) == .gis)
        try check(try read(URL(fileURLWithPath: shp)).incidents)
        let zip = folder.appendingPathComponent("works.zip").path
        let zipped = try TestSupport.run("/usr/bin/env", ["python3", "-m", "zipfile", "-c", zip] + ["shp", "shx", "dbf", "prj"].map { folder.appendingPathComponent("works.\($0)").path })
        try #require(zipped.status == 0, "\(zipped.stderr)")
        #expect(FeedFormat.detect(try FeedInput(localFile: zip).head()) == .gis)
        try check(try read(URL(fileURLWithPath: zip)).incidents)
    }

    /// CSV with a WKT column, read through OGR (`--format gis`), and a field named by the user.
    @Test func csvWithWKTThroughOGR() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let csv = "WKT,ref,advisory\n\"LINESTRING (-106.4 31.8, -106.5 31.9)\",TX-1,I-10 right lane closed\n\"POINT (-97.7 30.3)\",TX-2,IH 35 frontage closed\n"
        let url = try TestSupport.write(csv, name: "txdot.csv", in: folder)
        let (incidents, _, _) = try read(url, fields: [.title: "advisory", .id: "ref"])
        try #require(incidents.count == 2, "\(incidents)")
        #expect(incidents[0].id == "TX-1" && incidents[0].title == "I-10 right lane closed")
        #expect(incidents[0].position == Coordinate(latitude: 31.8, longitude: -106.4))
        #expect(incidents[0].segment?.count == 2)
        #expect(incidents[1].position == Coordinate(latitude: 30.3, longitude: -97.7))
    }

    /// What GDAL cannot open is refused with GDAL's reason; the feed readers alone name GDAL.
    @Test func whatGDALCannotOpenIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let junk = folder.appendingPathComponent("junk.shp")
        try Data([0x00, 0x00, 0x27, 0x0A, 0xFF, 0x13, 0x00]).write(to: junk)
        #expect(FeedFormat.detect(try FeedInput(localFile: junk.path).head()) == .gis)
        #expect { try read(junk) } throws: { "\($0)".contains("GDAL opens no vector data") }
        let kml = try TestSupport.write(Self.kml, name: "works.kml", in: folder)
        #expect { try FeedReading.readAll(FeedInput(localFile: kml.path)) } throws: { "\($0)".contains("GDAL") }
        // A file that breaks off: the read fails with GDAL's reason, not an empty success.
        let cut = String(Self.kml.prefix(Self.kml.count * 2 / 3))
        let truncated = try TestSupport.write(cut, name: "cut.kml", in: folder)
        #expect { try read(truncated) } throws: { ($0 as? FeedError)?.code == .malformed }
    }
}
