import Testing
@testable import TrafficGeoFeeds
import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// A CSV feed's columns: named by the user, else recognised by the words of their names and by
/// what they hold (`CSVColumns`); a WKT column places its rows by the geometry rule.
@Suite("CSV columns recognised by name and content")
struct CSVColumnsTests {
    @Test(arguments: [
        ("head_latitude", ["head", "latitude"]), ("fechaFin", ["fecha", "fin"]), ("Road Event ID", ["road", "event", "id"]),
        ("startTimestamp", ["start", "timestamp"]), ("lat", ["lat"]), ("the-geom", ["the", "geom"]),
    ])
    func namesAreReadAsWords(name: String, words: [String]) {
        #expect(CSVColumns.words(name) == words)
    }

    /// Columns named in other ways than trafficgeo's own, in English and Spanish.
    @Test func rolesFromTheWordsOfTheNames() throws {
        let header = ["data_source_id", "road_event_id", "road_name", "head_latitude", "head_longitude", "tail_latitude", "tail_longitude",
                      "event_type", "start_date", "end_date", "description", "direction"]
        let row = ["src", "E1", "I-35", "30.1", "-97.7", "30.2", "-97.8", "work-zone", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z", "Lane closed", "northbound"]
        let c = try CSVColumns.choose(header: header, sample: [row])
        func column(_ role: CSVColumns.Role) -> String? { c[role].map { header[$0] } }
        #expect(column(.id) == "road_event_id")
        #expect(column(.road) == "road_name")
        #expect(column(.latitude) == "head_latitude")
        #expect(column(.longitude) == "head_longitude")
        #expect(column(.category) == "event_type")
        #expect(column(.starts) == "start_date")
        #expect(column(.expires) == "end_date")
        #expect(column(.summary) == "description")
        #expect(column(.title) == nil)
        #expect(c.describe(header: header).contains("latitude ← head_latitude"))

        let spanish = ["carretera", "descripcion", "tipo", "fecha", "fechaFin", "latitud", "longitud", "provincia"]
        let s = try CSVColumns.choose(header: spanish, sample: [["A-7", "Obras", "OBRAS", "2024-02-11 19:00", "2024-02-12 19:00", "36.7", "-4.4", "Málaga"]])
        func sp(_ role: CSVColumns.Role) -> String? { s[role].map { spanish[$0] } }
        #expect(sp(.road) == "carretera")
        #expect(sp(.summary) == "descripcion")
        #expect(sp(.category) == "tipo")
        #expect(sp(.updated) == "fecha")
        #expect(sp(.expires) == "fechaFin")
        #expect(sp(.latitude) == "latitud" && sp(.longitude) == "longitud")
    }

    /// A column is a coordinate only if it holds coordinates; a named column wins.
    @Test func contentsAndNamesDecide() throws {
        let header = ["lat_zone", "latitude_deg", "longitude_deg", "advisorymessage", "shape"]
        let row = ["north", "52.1", "0.5", "M11 closed", "POINT (0.5 52.1)"]
        let c = try CSVColumns.choose(header: header, sample: [row], named: [.title: "advisorymessage"])
        #expect(c[.latitude] == 1 && c[.longitude] == 2)
        #expect(c[.title] == 3)
        #expect(c[.geometry] == 4)
        #expect(!c.guessed.contains(.title))
        #expect(throws: CSVColumns.Problem.self) { try CSVColumns.choose(header: header, sample: [row], named: [.road: "carretera"]) }
        #expect(throws: CSVColumns.Problem.self) { try CSVColumns.mapping(["colour=red"]) }
        #expect(try CSVColumns.mapping(["lat=y_wgs84", "title = headline"]) == [.latitude: "y_wgs84", .title: "headline"])
    }

    /// A column of WKT, whatever its name: points, lines and polygons placed as GeoJSON's are;
    /// the file's id column is the id; a row without a title is named by its kind and road.
    @Test func wktGeometryPlacesRows() throws {
        let csv = """
        objectid,event_type,road_name,location,end_date
        7,work-zone,US-59,"LINESTRING (-95.40 29.70, -95.41 29.71, -95.42 29.72)",2024-01-05T00:00:00Z
        8,work-zone,I-10,"SRID=4326;POINT (-95.3 29.8)",2024-01-05T00:00:00Z
        9,closure,FM 1960,"MULTIPOLYGON (((-95.5 30.0, -95.4 30.0, -95.4 30.1, -95.5 30.1, -95.5 30.0)))",
        10,closure,,"POINT EMPTY",
        """
        let incidents = try TestSupport.read(csv, name: "wz.csv").incidents
        #expect(incidents.map(\.id) == ["7", "8", "9", "10"])
        #expect(incidents[0].position == Coordinate(latitude: 29.70, longitude: -95.40))
        #expect(incidents[0].segment?.count == 3)
        #expect(incidents[0].title == "Roadworks on US-59")
        #expect(incidents[0].road == "US-59")
        #expect(incidents[1].position == Coordinate(latitude: 29.8, longitude: -95.3))
        let area = try #require(incidents[2].position)
        #expect((29.99...30.11).contains(area.latitude) && (-95.51 ... -95.39).contains(area.longitude))
        #expect(incidents[3].position == nil && incidents[3].properties[Incident.positionProblemProperty] != nil)
        #expect(incidents[0].expires != nil)
    }

    /// Two WKT columns, one filled a row; markup in a text column is no part of it; a row with
    /// no kind column is named by what its text says.
    @Test func theFirstFilledGeometryAndPlainText() throws {
        let csv = """
        id,road_name,description,geometry_linestring,geometry_multipoint
        a,LP-375,"<b>Left lane closed</b> for repairs",,"MULTIPOINT ((-106.3 31.7))"
        b,I-10,Shoulder work,"LINESTRING (-106.4 31.8, -106.5 31.9)",
        """
        let incidents = try TestSupport.read(csv, name: "two.csv").incidents
        #expect(incidents.map(\.position) == [Coordinate(latitude: 31.7, longitude: -106.3), Coordinate(latitude: 31.8, longitude: -106.4)])
        #expect(incidents[0].summary == "Left lane closed for repairs")
        #expect(incidents[0].title == "Closure on LP-375", "\(incidents[0].title)")
    }

    /// A column the first rows leave empty loses to one they fill; GDAL's date text reads; a row
    /// without title, road or kind column is named by the kind its text says.
    @Test func filledColumnsAndGDALDatesAndTheKindOfTheText() throws {
        let csv = "begin,end,start_time,end_time,lat,lon,notes\n,,2025/06/02 18:00:00+00,2025/06/03 06:00:00+02,50.9,6.9,Stau zwischen Köln-Ost und Kreuz Köln\n"
        let incident = try #require(try TestSupport.read(csv, name: "kml-like.csv").incidents.first)
        #expect(incident.properties["valid_from"] == "2025-06-02T18:00:00Z", "\(incident.properties)")
        #expect(incident.expires == ISO8601DateFormatter().date(from: "2025-06-03T04:00:00Z"))
        #expect(incident.title == "Queue", "\(incident.title)")
        #expect(CSVDates.yearFirstWithSlashes("2025/06/02") == "2025-06-02T00:00:00Z")
        #expect(CSVDates.yearFirstWithSlashes("02/06/2025") == nil)
    }

    /// Unix time in a date column (seconds or milliseconds) is a date; in another column a number.
    @Test func unixTimeInADateColumnIsADate() throws {
        let csv = "id,title,lat,lon,start_time,end_time,count\na,Works,40.4,-3.7,1717344000,1717430400000,1717344000\n"
        let incident = try #require(try TestSupport.read(csv, name: "epoch.csv").incidents.first)
        #expect(incident.properties["valid_from"] == "2024-06-02T16:00:00Z", "\(incident.properties)")
        #expect(incident.expires == Date(timeIntervalSince1970: 1_717_430_400))
        #expect(incident.properties["count"] == "1717344000")
        #expect(TimestampParser.parseDateField("12345") == nil && TimestampParser.parseDateField("99999999999999") == nil)
        #expect(TimestampParser.parseDateField("0000000001") == nil, "before 1990: no date a feed means")
    }

    /// A column named as a measure (`--field delay=Verzug`) fills the measure's property, which
    /// the filters read as a number; a column already called `delay_minutes` is the measure as it is.
    @Test func aNamedMeasureColumnFillsTheMeasure() throws {
        #expect(try CSVColumns.mapping(["delay=Verzug", "lanes=Spuren"]) == [.delay: "Verzug", .lanesRestricted: "Spuren"])
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write("id,title,lat,lon,Verzug,Spuren\na,Stau,50.9,6.9,15-20,1 of 3\nb,Stau,50.9,6.9,,\n", name: "named.csv", in: folder)
        var incidents: [Incident] = []
        let reader = FeedReading.reader(for: .csv, fields: [.delay: "Verzug", .lanesRestricted: "Spuren"])
        try reader.read(FeedInput(localFile: url.path), source: "test") { if case let .incident(i) = $0 { incidents.append(i) } }
        #expect(incidents.count == 2)
        #expect(incidents[0].properties[IncidentMeasure.delayMinutes.property] == "15-20", "\(incidents[0].properties)")
        #expect(incidents[0].properties[IncidentMeasure.lanesRestricted.property] == "1 of 3")
        #expect(incidents[0].properties["Verzug"] == nil, "a named column is the field, not kept twice")
        #expect(incidents[1].properties[IncidentMeasure.delayMinutes.property] == nil, "an empty cell is no measure")
        let plain = try TestSupport.read("id,title,lat,lon,delay_minutes\na,Stau,50.9,6.9,12\n", name: "plain.csv").incidents
        #expect(plain.first?.properties[IncidentMeasure.delayMinutes.property] == "12")
    }

    /// A start that is no date skips its row under its own name, not as an unreadable update.
    @Test func anUnreadableStartIsSaidAsTheStart() throws {
        let csv = "id,title,lat,lon,start_date\na,Obras,40.4,-3.7,2024-02-11T18:00:00Z\nb,Obras,40.4,-3.7,pronto\nc,Obras,40.4,-3.7,2024-02-12T08:00:00Z\n"
        let read = try TestSupport.read(csv, name: "dgt.csv")
        #expect(read.incidents.map(\.id) == ["a", "c"])
        #expect(read.skipped.first?.reason == "starts: unreadable date 'pronto'", "\(read.skipped)")
    }

    /// A geometry column empty in every row read ahead is still tried, once another column holds WKT.
    @Test func aGeometryColumnFilledOnlyFurtherDown() throws {
        var csv = "id,road_name,geometry_linestring,geometry_multipoint\n"
        for k in 0..<(TabularIncidents.sampleRows + 10) { csv += "p\(k),I-10,,\"MULTIPOINT ((-106.3 31.7))\"\n" }
        csv += "last,I-10,\"LINESTRING (-106.4 31.8, -106.5 31.9)\",\n"
        let incidents = try TestSupport.read(csv, name: "late.csv").incidents
        #expect(incidents.last?.id == "last")
        #expect(incidents.last?.position == Coordinate(latitude: 31.8, longitude: -106.4))
    }

    @Test(arguments: [
        "POINT (1 2)", "POINT Z (1 2 3)", "LINESTRING(1 2,3 4)", "MULTIPOINT ((1 2), (3 4))", "MULTIPOINT (1 2, 3 4)",
        "POLYGON ((0 0, 1 0, 1 1, 0 0))", "MULTILINESTRING ((1 2, 3 4), (5 6, 7 8))", "srid=31467;POINT (1 2)",
    ])
    func wellKnownTextReads(text: String) {
        #expect(WKTGeometry.looksLikeWKT(text))
        guard case let .success(geometry) = WKTGeometry.geoJSON(text) else { Issue.record("\(text) not read"); return }
        #expect(GeoJSONGeometry.placement(geometry).isSuccess, "\(text)")
    }

    @Test(arguments: ["POINT", "POINT (1)", "LINESTRING (1 2, 3 4", "CIRCLE (1 2)", "Point of interest", "POLYGON ((a b))"])
    func notWellKnownText(text: String) {
        if case .success = WKTGeometry.geoJSON(text) { Issue.record("\(text) read as WKT") }
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
