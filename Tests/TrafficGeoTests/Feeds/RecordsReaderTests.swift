import Foundation
import Testing
@testable import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoPROJ

/// Documents of a publisher's own schema, XML or JSON (issue 63: "whoever published it"): the
/// records are found by the document's shape, their fields recognised as a CSV file's columns.
/// Every document here is made for its rule.
struct RecordsReaderTests {
    @Test func xmlElementsOfRepeatedRecords() throws {
        let xml = """
        <?xml version="1.0"?>
        <Closures xmlns:x="urn:example"><Updated>2026-03-01T08:00:00Z</Updated><Agency>Example DOT</Agency>
        <List>
          <x:Closure><x:ClosureId>c-1</x:ClosureId><x:Road>I-90</x:Road><x:Headline>I-90 eastbound closed at exit 12</x:Headline>
            <x:Begins>2026-03-01T06:00:00Z</x:Begins><x:Ends>2026-03-02T06:00:00Z</x:Ends><x:Where><x:Lat>42.10</x:Lat><x:Lon>-72.60</x:Lon></x:Where></x:Closure>
          <x:Closure><x:ClosureId>c-2</x:ClosureId><x:Road>US-20</x:Road><x:Headline>Bridge work</x:Headline>
            <x:Begins>2026-03-01T07:00:00Z</x:Begins><x:Where><x:Lat>42.20</x:Lat><x:Lon>-72.50</x:Lon></x:Where></x:Closure>
          <x:Closure><x:ClosureId>c-3</x:ClosureId><x:Road>MA-2</x:Road><x:Headline>Crash, left lane blocked</x:Headline>
            <x:Where><x:Lat>42.30</x:Lat><x:Lon>-72.40</x:Lon></x:Where></x:Closure>
        </List></Closures>
        """
        #expect(FeedFormat.detect(Data(xml.utf8)) == .records)
        let incidents = try TestSupport.read(xml).incidents
        try #require(incidents.count == 3, "\(incidents)")
        #expect(incidents.map(\.id) == ["c-1", "c-2", "c-3"])
        #expect(incidents[0].title == "I-90 eastbound closed at exit 12")
        #expect(incidents[0].road == "I-90" && incidents[2].road == "MA-2", "\(incidents.map(\.road))")
        #expect(incidents[0].position == Coordinate(latitude: 42.10, longitude: -72.60))
        #expect(incidents[0].properties["valid_from"] == "2026-03-01T06:00:00Z", "\(incidents[0].properties)")
        #expect(incidents[0].expires != nil)
    }

    /// Fields in attributes, the message in the element's text.
    @Test func attributesAndText() throws {
        let xml = """
        <msgs><m id="17" road="A2" lat="52.30" lon="10.50">Stau zwischen Braunschweig und Peine, 5 km</m>
        <m id="18" road="A7" lat="53.50" lon="9.90">Baustelle, rechter Fahrstreifen gesperrt</m></msgs>
        """
        let incidents = try TestSupport.read(xml).incidents
        try #require(incidents.count == 2)
        #expect(incidents[0].id == "17" && incidents[0].road == "A2")
        #expect(incidents[0].summary == "Stau zwischen Braunschweig und Peine, 5 km")
        #expect(incidents[0].title.contains("A2"), "\(incidents[0].title)")
        #expect(incidents[1].position == Coordinate(latitude: 53.50, longitude: 9.90))
    }

    /// A JSON answer: the records are the largest list of objects with fields, nested objects
    /// flattened (location.lat).
    @Test func jsonObjectsNestedInAnAnswer() throws {
        let json = """
        {"status": "ok", "meta": {"count": 2, "generated": "2026-03-01T08:00:00Z"},
         "data": {"items": [
           {"itemId": 901, "roadName": "SH 1", "title": "Crash near Taupo", "location": {"lat": -38.69, "lng": 176.07}, "active": true},
           {"itemId": 902, "roadName": "SH 2", "title": "Slip, one lane", "location": {"lat": -39.49, "lng": 176.91}, "active": false}
         ]}}
        """
        #expect(FeedFormat.detect(Data(json.utf8)) == .records)
        let incidents = try TestSupport.read(json).incidents
        try #require(incidents.count == 2, "\(incidents)")
        #expect(incidents.map(\.id) == ["901", "902"])
        #expect(incidents[0].title == "Crash near Taupo")
        #expect(incidents[0].position == Coordinate(latitude: -38.69, longitude: 176.07))
        #expect(incidents[0].road == "SH-1", "\(incidents[0].road ?? "nil")")
    }

    /// A record with a GML geometry in a projected CRS: brought to WGS84 by the CRS it names.
    @Test func gmlGeometryInARecord() throws {
        let xml = """
        <wfs:FeatureCollection xmlns:wfs="http://www.opengis.net/wfs" xmlns:gml="http://www.opengis.net/gml" xmlns:b="urn:example">
        <gml:featureMember><b:works><b:name>A3 Baustelle</b:name><b:geom><gml:Point srsName="urn:ogc:def:crs:EPSG::25832"><gml:pos>356000 5645000</gml:pos></gml:Point></b:geom></b:works></gml:featureMember>
        <gml:featureMember><b:works><b:name>A4 Sperrung</b:name><b:geom><gml:LineString srsName="EPSG:25832"><gml:posList>357000 5646000 358000 5647000</gml:posList></gml:LineString></b:geom></b:works></gml:featureMember>
        </wfs:FeatureCollection>
        """
        let incidents = try TestSupport.read(xml, format: .records).incidents
        try #require(incidents.count == 2, "\(incidents)")
        let utm = try Projector(source: "EPSG:25832", target: "EPSG:4326")
        for (incident, (x, y)) in zip(incidents, [(356000.0, 5645000.0), (357000.0, 5646000.0)]) {
            let expected = try utm.transform(x: x, y: y)
            let p = try #require(incident.position)
            #expect(abs(p.longitude - expected.x) < 1e-7 && abs(p.latitude - expected.y) < 1e-7, "\(p)")
        }
        #expect(incidents[1].segment?.count == 2)
        #expect(incidents[0].title == "A3 Baustelle")
    }

    /// XML turned into JSON by xml2js: `$` holds the attributes, `_` the text, every child a list.
    @Test func xml2jsJSON() throws {
        let json = """
        {"wfs:FeatureCollection": {"$": {"xmlns:gml": "http://www.opengis.net/gml"}, "gml:featureMember": [
          {"ex:incident": [{"$": {"fid": "inc.1"}, "ex:geom": [{"gml:Point": [{"$": {"srsName": "http://www.opengis.net/gml/srs/epsg.xml#4326"},
             "gml:coordinates": [{"_": "2.10,41.40", "$": {"cs": ","}}]}]}], "ex:info": ["Obres a la C-32 entre Sitges i Vilanova"], "ex:carretera": ["C-32"]}]},
          {"ex:incident": [{"$": {"fid": "inc.2"}, "ex:geom": [{"gml:Point": [{"$": {"srsName": "http://www.opengis.net/gml/srs/epsg.xml#4326"},
             "gml:coordinates": [{"_": "2.20,41.50"}]}]}], "ex:info": ["Retenció a l'AP-7 per un accident"], "ex:carretera": ["AP-7"]}]}
        ]}}
        """
        let incidents = try TestSupport.read(json).incidents
        try #require(incidents.count == 2, "\(incidents)")
        #expect(incidents[0].position == Coordinate(latitude: 41.40, longitude: 2.10))
        #expect(incidents[1].road == "AP-7" || incidents[1].road == "AP7", "\(incidents[1].road ?? "nil")")
        // No column named as a text: the longest texts are the summary, whatever the column's language.
        #expect(incidents[0].summary == "Obres a la C-32 entre Sitges i Vilanova", "\(incidents[0])")
    }

    /// Projected x/y fields with the CRS given; without it, no coordinate is taken from them.
    @Test func projectedFieldsWithTheirCRS() throws {
        let xml = "<evs><ev r=\"A1\" x=\"539007\" y=\"5257837\">Roadworks near St. Gallen</ev><ev r=\"A13\" x=\"533526\" y=\"5257414\">Lane closed</ev></evs>"
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(xml, name: "evs.xml", in: folder)
        var incidents: [Incident] = []
        try RecordsReader(crs: "EPSG:32632").read(FeedInput(localFile: url.path), source: "t") { if case let .incident(i) = $0 { incidents.append(i) } }
        let expected = try Projector(source: "EPSG:32632", target: "EPSG:4326").transform(x: 539007, y: 5257837)
        let p = try #require(incidents.first?.position)
        #expect(abs(p.longitude - expected.x) < 1e-7 && abs(p.latitude - expected.y) < 1e-7, "\(p)")
        let unplaced = try TestSupport.read(xml).incidents
        #expect(unplaced.count == 2 && unplaced.allSatisfy { $0.position == nil }, "metres are no latitudes")
    }

    /// A document without records of several fields is refused, saying what it is.
    @Test func noRecordsIsRefused() {
        #expect { try TestSupport.read(#"{"status": "ok", "count": 0}"#) } throws: { "\($0)".contains("no repeated records") }
        #expect { try TestSupport.read("<a><b>1</b></a>") } throws: { "\($0)".contains("no repeated records") }
    }
}

/// GeoJSON whose properties have other names than title/description (a city's, an authority's
/// own): they are recognised as a CSV file's columns are.
struct GeoJSONPropertiesTests {
    @Test func propertiesOfOtherNamesAreRecognised() throws {
        let json = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [174.64, -36.85]},
           "properties": {"eventId": "e-1", "eventType": "Road Work", "motorway": "SH 16", "eventComments": "Lane closed overnight for resurfacing",
                          "eventModified": "2026-03-01T08:00:00Z"}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [174.70, -36.80]},
           "properties": {"eventId": "e-2", "eventType": "Crash", "motorway": "SH 1", "eventComments": "Two vehicles, left lane blocked",
                          "eventModified": "2026-03-01T09:00:00Z"}}
        ]}
        """
        let incidents = try TestSupport.read(json).incidents
        try #require(incidents.count == 2)
        #expect(incidents[0].id == "e-1", "\(incidents[0].id)")
        #expect(incidents[0].road == "SH-16", "\(incidents[0].road ?? "nil")")
        #expect(incidents[0].summary == "Lane closed overnight for resurfacing")
        #expect(incidents[0].title == "Roadworks on SH 16", "\(incidents[0].title)")
        #expect(incidents[1].updated == ISO8601DateFormatter().date(from: "2026-03-01T09:00:00Z"))
    }

    /// A document that names its fields as trafficgeo does reads as it always has.
    @Test func theNamesGeoJSONAlwaysReadStillWin() throws {
        let json = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": "a", "geometry": {"type": "Point", "coordinates": [7, 50]}, "properties": {"title": "A4 Stau", "description": "3 km", "headline": "other"}}]}"#
        let incident = try #require(try TestSupport.read(json).incidents.first)
        #expect(incident.title == "A4 Stau" && incident.summary == "3 km" && incident.id == "a")
    }
}
