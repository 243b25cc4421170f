import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoOutput
@testable import TrafficGeoQuery
@testable import TrafficGeoStore
@testable import TrafficGeoSupport

@Suite("Output formats")
struct OutputFormatTests {
    static func results() -> [QueryResult] {
        var a = Incident(source: "s", id: "a\"1", title: "A4 : Koeln - Olpe", summary: "Falschfahrer, \"bitte\" rechts\nfahren",
                         weblink: "http://x/?id=1", updated: Date(timeIntervalSince1970: 1240091915), road: "A4",
                         category: .wrongWayDriver, position: Coordinate(latitude: 50.991661234, longitude: 7.922761234))
        a.positionSource = .weblink
        var b = Incident(source: "s", id: "b", title: "=cmd|' /C calc'!A0", category: .roadworks,
                         position: Coordinate(latitude: 51, longitude: 7))
        b.segment = [Coordinate(latitude: 51, longitude: 7), Coordinate(latitude: 51.1, longitude: 7.2)]
        let c = Incident(source: "s", id: "c", title: "no position")
        return [a, b, c].enumerated().map { i, incident in
            QueryResult(stored: StoredIncident(storeID: Int64(i + 1), incident: incident, firstSeen: Date(), lastChanged: Date()),
                        distance: i == 2 ? nil : 1234.56 * Double(i + 1), bearing: i == 2 ? nil : 81.14)
        }
    }

    static func render(_ format: OutputFormat, color: Bool = false, geometry: GeometryChoice = .point) throws -> String {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out").path
        let sink = try TextSink(path: path)
        let writer = format.makeWriter(sink: sink, color: color, geometry: geometry)
        try writer.begin()
        for r in results() where geometry.fits(r.incident) { try writer.write(r) }
        try writer.end()
        try sink.commit()
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func jsonIsTheAnnotationModel() throws {
        let text = try Self.render(.json)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        #expect(array.count == 3)
        let a = array[0]
        #expect(a["id"] as? String == "a\"1")
        let coordinate = try #require(a["coordinate"] as? [String: Double])
        #expect(coordinate["latitude"] == 50.991661 && coordinate["longitude"] == 7.922761)
        #expect(a["title"] as? String == "A4 : Koeln - Olpe")
        #expect(a["subtitle"] as? String == "Falschfahrer, \"bitte\" rechts\nfahren")
        #expect(a["pinColor"] as? String == "red")
        #expect(a["distanceMeters"] as? Double == 1234.6)
        #expect(a["bearingDegrees"] as? Double == 81.1)
        #expect(a["road"] as? String == "A4")
        #expect(a["category"] as? String == "wrong-way driver")
        #expect(a["updated"] as? String == "2009-04-18T21:58:35Z")
        #expect(array[1]["pinColor"] as? String == "purple")
        #expect(array[2]["coordinate"] is NSNull)
        #expect(array[2]["pinColor"] as? String == "green")
        // Keys in the order of docs/architecture.md (annotations).
        #expect(text.range(of: "\"id\"")!.lowerBound < text.range(of: "\"coordinate\"")!.lowerBound)
        #expect(text.range(of: "\"title\"")!.lowerBound < text.range(of: "\"pinColor\"")!.lowerBound)
    }

    @Test func geoJSONFollowsRFC7946() throws {
        let text = try Self.render(.geojson)
        try Self.validateRFC7946(text, expectedFeatures: 3)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let features = try #require(object["features"] as? [[String: Any]])
        let point = try #require(features[0]["geometry"] as? [String: Any])
        #expect(point["type"] as? String == "Point")
        #expect(point["coordinates"] as? [Double] == [7.922761, 50.991661])  // longitude first
        let props = try #require(features[0]["properties"] as? [String: Any])
        #expect(props["marker-color"] as? String == PinColor.red.hex)
        #expect(props["title"] as? String == "A4 : Koeln - Olpe")
        #expect(props["description"] as? String != nil)
        // One geometry type by default: the incident with a segment is a Point where it starts.
        #expect((features[1]["geometry"] as? [String: Any])?["type"] as? String == "Point")
        #expect(features[2]["geometry"] is NSNull)
        let mixed = try #require(try JSONSerialization.jsonObject(with: Data(try Self.render(.geojson, geometry: .mixed).utf8)) as? [String: Any])
        #expect(((mixed["features"] as? [[String: Any]])?[1]["geometry"] as? [String: Any])?["type"] as? String == "LineString")
        let segments = try #require(try JSONSerialization.jsonObject(with: Data(try Self.render(.geojson, geometry: .segment).utf8)) as? [String: Any])
        #expect((segments["features"] as? [[String: Any]])?.map { $0["id"] as? String } == ["s#b"])
    }

    @Test(.enabled(if: TestSupport.which("ogr2ogr") != nil, "GDAL is not installed (apt install gdal-bin)"))
    func gdalSeesOneGeometryTypeAndWritesAShapefile() throws {
        let ogrinfo = try #require(TestSupport.which("ogrinfo")), ogr2ogr = try #require(TestSupport.which("ogr2ogr"))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (geometry, type) in [(GeometryChoice.point, "Point"), (.segment, "Line String")] {
            let url = try TestSupport.write(try Self.render(.geojson, geometry: geometry), name: "\(geometry).geojson", in: folder)
            let info = try TestSupport.run(ogrinfo, ["-ro", "-al", "-so", url.path])
            #expect(info.stdout.contains("Geometry: \(type)"), Comment(rawValue: info.stdout))
            let shp = folder.appendingPathComponent("\(geometry).shp").path
            let convert = try TestSupport.run(ogr2ogr, ["-f", "ESRI Shapefile", shp, url.path])
            #expect(convert.status == 0 && FileManager.default.fileExists(atPath: shp), Comment(rawValue: convert.stderr))
        }
    }

    @Test func emptyCollectionIsStillAFeatureCollection() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("empty.geojson").path
        let sink = try TextSink(path: path)
        let writer = OutputFormat.geojson.makeWriter(sink: sink)
        try writer.begin()
        try writer.end()
        try sink.commit()
        try Self.validateRFC7946(try String(contentsOfFile: path, encoding: .utf8), expectedFeatures: 0)
    }

    @Test(.enabled(if: TestSupport.which("ogrinfo") != nil, "ogrinfo is not installed (apt install gdal-bin)"))
    func ogrinfoReadsTheGeoJSON() throws {
        let ogrinfo = try #require(TestSupport.which("ogrinfo"))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(try Self.render(.geojson), name: "out.geojson", in: folder)
        let run = try TestSupport.run(ogrinfo, ["-ro", "-al", "-so", url.path])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Feature Count: 3"), Comment(rawValue: run.stdout))
        #expect(!run.stderr.contains("ERROR") && !run.stderr.contains("Warning"), Comment(rawValue: run.stderr))
        let seq = try TestSupport.write(try Self.render(.geojsonseq), name: "out.geojsons", in: folder)
        let seqRun = try TestSupport.run(ogrinfo, ["-ro", "-al", "-so", seq.path])
        #expect(seqRun.stdout.contains("Feature Count: 3"), Comment(rawValue: seqRun.stdout + seqRun.stderr))
    }

    @Test func geoJSONSequenceFramesEachFeature() throws {
        let text = try Self.render(.geojsonseq)
        let records = text.split(separator: "\u{1E}", omittingEmptySubsequences: true)
        #expect(records.count == 3)
        for record in records {
            #expect(record.hasSuffix("\n"))
            let feature = try JSONSerialization.jsonObject(with: Data(record.utf8)) as? [String: Any]
            #expect(feature?["type"] as? String == "Feature")
        }
    }

    @Test func csvQuotesAndDefusesFormulas() throws {
        let text = try Self.render(.csv)
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(text, name: "out.csv", in: folder)
        let reader = CSVRecordReader(stream: InputStream(url: url)!)
        var records: [[String]] = []
        while let r = try reader.next() { records.append(r.fields) }
        #expect(records.count == 4)
        #expect(records[0] == CSVResultWriter.header)
        #expect(records[1][0] == "a\"1")
        #expect(records[1][2] == "Falschfahrer, \"bitte\" rechts\nfahren")
        #expect(records[2][1] == "'=cmd|' /C calc'!A0")
        #expect(records[3][3] == "")
        // Quoting is decided on bytes: a CRLF (one Character in Swift) and a comma after a
        // combining mark are still quoted.
        #expect(CSVResultWriter.quote("a\r\nb") == "\"a\r\nb\"")
        #expect(CSVResultWriter.quote("e\u{301},x") == "\"e\u{301},x\"")
        #expect(CSVResultWriter.quote("-12.5") == "-12.5" && CSVResultWriter.quote("-x") == "'-x")
        #expect(CSVResultWriter.quote("plain id 42") == "plain id 42")
    }

    @Test func cardsAndTableAreReadable() throws {
        let cards = try Self.render(.annotations)
        // From 2009 with no end: not taken as in effect, and the card says why.
        #expect(cards.contains("● A4 : Koeln - Olpe  [red · wrong-way driver · unconfirmed]"))
        #expect(cards.contains("no end given, not heard of since 2009-04-18T21:58:35Z"))
        #expect(cards.contains("50.991661, 7.922761 · 1.2 km E (81°)"))
        #expect(!cards.contains("\u{1B}["))
        #expect(try Self.render(.annotations, color: true).contains("\u{1B}[31m●"))
        let table = try Self.render(.table)
        #expect(table.split(separator: "\n").count == 4)
        #expect(table.hasPrefix("DIST"))
    }

    @Test func failedOutputLeavesTheOldFileAlone() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write("old", name: "out.json", in: folder)
        let sink = try TextSink(path: url.path)
        try sink.write("partial")
        sink.abandon()
        #expect(try String(contentsOf: url, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.json"])
    }

    /// The reader of a pipe quits: the write fails with EPIPE (SIGPIPE ignored, as SwiftNIO
    /// ignores it in any process that opens a socket), and every later write or commit reports
    /// the same failure instead of piling up output.
    @Test func aReaderThatQuitStopsTheSink() throws {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let path = "/dev/fd/\(fds[1])"
        let sink = try TextSink(path: path)   // a pipe is written as it is, never renamed over
        close(fds[1])
        close(fds[0])
        try sink.write("first line\n")
        func failure(_ body: () throws -> Void) -> OutputError? {
            do { try body(); return nil } catch { return error as? OutputError }
        }
        guard case .readerGone(path)? = failure({ try sink.flush() }) else {
            Issue.record("the flush did not report the reader as gone")
            return
        }
        guard case .readerGone? = failure({ try sink.write(String(repeating: "x", count: 1 << 17)) }),
              case .readerGone? = failure({ try sink.commit() }) else {
            Issue.record("a later check or commit forgot the failure")
            return
        }
    }

    /// RFC 7946 checks: FeatureCollection, no crs, every feature an id, geometry null or valid with
    /// [longitude, latitude] in range.
    static func validateRFC7946(_ text: String, expectedFeatures: Int) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "FeatureCollection")
        #expect(object["crs"] == nil)
        let features = try #require(object["features"] as? [[String: Any]])
        #expect(features.count == expectedFeatures)
        var ids = Set<String>()
        for f in features {
            #expect(f["type"] as? String == "Feature")
            let id = try #require(f["id"] as? String)
            #expect(ids.insert(id).inserted)
            #expect(f["properties"] is [String: Any])
            guard let g = f["geometry"] as? [String: Any] else { #expect(f["geometry"] is NSNull); continue }
            let positions: [[Double]]
            switch g["type"] as? String {
            case "Point": positions = [try #require(g["coordinates"] as? [Double])]
            case "LineString": positions = try #require(g["coordinates"] as? [[Double]])
            default: Issue.record("unexpected geometry"); continue
            }
            for p in positions {
                #expect(p.count == 2 && abs(p[0]) <= 180 && abs(p[1]) <= 90)
            }
        }
    }
}
