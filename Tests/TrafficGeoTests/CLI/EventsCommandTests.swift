import Foundation
import Testing
import TrafficGeoTestSupport

/// One event, one pin (docs/conflation.md), as a desk meets it on the command line: three feeds
/// of one accident answer once, with its three reports, in every format; `--reports` lists them;
/// `watch` enters once; a publisher's saved updates are one incident per situation.
@Suite("Events on the command line", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct EventsCommandTests {
    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = nil
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, environment: environment)
    }

    static func json(_ text: String) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    /// An accident on the A4 towards Köln near Wenden in the Autobahn API's JSON, a GeoJSON feed
    /// and DATEX II, each its own ids, words, point and time; and one the other way round.
    static func feeds(in folder: URL) throws -> [URL] {
        let autobahn = """
            {"warning":[{"identifier":"api-1","title":"A4 | Wenden - Krombach","subtitle":" Olpe -> Köln",
              "description":["Beginn: 19.05.25 um 08:00 Uhr","A4: Olpe -> Köln, zwischen AS Wenden und AS Krombach Unfall"],
              "coordinate":{"lat":"50.9800","long":"7.8900"},"extent":"50.9800,7.8900,50.9890,7.8700","startTimestamp":"2025-05-19T06:00:00Z"},
             {"identifier":"api-2","title":"A4 | Krombach - Wenden","subtitle":" Köln -> Olpe",
              "description":["Beginn: 19.05.25 um 08:05 Uhr","A4: Köln -> Olpe, zwischen AS Krombach und AS Wenden Unfall"],
              "coordinate":{"lat":"50.9892","long":"7.8702"},"extent":"50.9892,7.8702,50.9802,7.8902","startTimestamp":"2025-05-19T06:05:00Z"}]}
            """
        let geojson = """
            {"type":"FeatureCollection","features":[{"type":"Feature","id":"police-17","geometry":{"type":"Point","coordinates":[7.8920,50.9810]},
              "properties":{"title":"A4 : Olpe - Köln","summary":"Unfall zwischen AS Wenden und AS Krombach, Richtung Köln","road":"A4",
              "updated":"2025-05-19T06:07:00Z"}}]}
            """
        let datex = #"<?xml version="1.0" encoding="UTF-8"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><payloadPublication xsi:type="SituationPublication" lang="en"><publicationTime>2025-05-19T06:10:00Z</publicationTime><publicationCreator><country>de</country><nationalIdentifier>VIZ</nationalIdentifier></publicationCreator><situation id="VIZ-9" version="1"><situationRecord xsi:type="Accident" id="VIZ-9-1" version="1"><situationRecordVersionTime>2025-05-19T06:09:00Z</situationRecordVersionTime><validity><validityStatus>active</validityStatus><validityTimeSpecification><overallStartTime>2025-05-19T06:02:00Z</overallStartTime></validityTimeSpecification></validity><generalPublicComment><comment><values><value lang="en">Accident on the A4 between Wenden and Krombach, direction Köln.</value></values></comment></generalPublicComment><groupOfLocations xsi:type="Point"><locationForDisplay><latitude>50.9820</latitude><longitude>7.8880</longitude></locationForDisplay><linearWithinLinearElement><linearElement><roadNumber>A4</roadNumber></linearElement></linearWithinLinearElement></groupOfLocations><accidentType>collision</accidentType></situationRecord></situation></payloadPublication></d2LogicalModel>"#
        return [try TestSupport.write(autobahn, name: "autobahn.json", in: folder), try TestSupport.write(geojson, name: "police.geojson", in: folder),
                try TestSupport.write(datex, name: "viz.xml", in: folder)]
    }

    @Test func threeFeedsOfOneAccidentAnswerOnceEverywhere() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let feeds = try Self.feeds(in: folder)
        let state = folder.appendingPathComponent("state.json").path
        let execLog = folder.appendingPathComponent("exec.ndjson").path
        let watch = ["watch", "--db", db, "--lat", "50.98", "--lon", "7.89", "--radius", "10km", "--once", "--state", state,
                     "--format", "ndjson", "--exec", "cat >> '\(execLog)'"]
        #expect(try cli(["ingest", "--db", db, feeds[0].path]).status == 0)
        let first = try cli(watch)
        #expect(first.stdout.components(separatedBy: "\"event\":\"enter\"").count - 1 == 2, Comment(rawValue: first.stdout + first.stderr))
        for feed in feeds.dropFirst() {
            let ingested = try cli(["ingest", "--db", db, feed.path])
            #expect(ingested.status == 0 && ingested.stderr.contains("1 merged into events other feeds report"), Comment(rawValue: ingested.stderr))
        }
        let second = try cli(watch)
        #expect(!second.stdout.contains("\"event\":\"enter\""), "the same accident does not enter again: \(second.stdout)")
        #expect(second.stdout.contains("\"event\":\"change\""), Comment(rawValue: second.stdout))

        // Nearest: two events (this way and the other), the first with its three reports.
        let near = Self.json(try cli(["near", "--db", db, "--lat", "50.98", "--lon", "7.89", "--format", "json"]).stdout)
        #expect(near.count == 2)
        let event = try #require(near.first { ($0["reports"] as? [[String: Any]])?.count == 3 })
        let reports = try #require(event["reports"] as? [[String: Any]])
        #expect(Set(reports.compactMap { $0["source"] as? String }) == ["autobahn", "police.geojson", "de/VIZ"])
        #expect(Set(reports.compactMap { $0["id"] as? String }) == ["api-1", "police-17", "VIZ-9"])
        #expect(event["id"] as? String == "api-1" && event["category"] as? String == "accident")
        let eventID = try #require(event["event"] as? Int)
        // --reports: every report, each naming its event.
        let all = Self.json(try cli(["near", "--db", db, "--lat", "50.98", "--lon", "7.89", "--reports", "--format", "json"]).stdout)
        #expect(all.count == 4 && all.filter { $0["event"] as? Int == eventID }.count == 3)
        // GeoJSON: `reports` on every feature, an event of one report too; CSV: the event and its reports.
        let geojson = try cli(["export", "--db", db, "--format", "geojson"])
        let features = try #require((try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])?["features"] as? [[String: Any]])
        #expect(features.count == 2)
        for feature in features {
            let properties = try #require(feature["properties"] as? [String: Any])
            let list = try #require(properties["reports"] as? [[String: Any]])
            #expect(!list.isEmpty && list.allSatisfy { $0["source"] is String && $0["id"] is String })
        }
        let csv = try cli(["export", "--db", db, "--format", "csv"]).stdout
        #expect(csv.split(separator: "\r\n").first?.hasSuffix(",event,reports") == true && csv.contains("police-17"), Comment(rawValue: csv))
        let cards = try cli(["near", "--db", db, "--lat", "50.98", "--lon", "7.89", "--limit", "1", "--format", "annotations"]).stdout
        #expect(cards.contains("3 reports: autobahn"), Comment(rawValue: cards))
        let stats = try cli(["events", "--db", db]).stdout
        #expect(stats.contains("4 reports make 2 events; 1 events have more than one report"), Comment(rawValue: stats))
        // Why: the rule's own words.
        let explained = try cli(["events", "--db", db, "--explain", "autobahn#api-1", "autobahn#api-2"])
        #expect(explained.status == 0 && explained.stdout.contains("two events: same source"), Comment(rawValue: explained.stdout + explained.stderr))
        let other = try cli(["events", "--db", db, "--explain", "police.geojson#police-17", "autobahn#api-2"])
        #expect(other.status == 0 && other.stdout.contains("two events: opposite carriageway"), Comment(rawValue: other.stdout + other.stderr))
        let same = try cli(["events", "--db", db, "--explain", "police.geojson#police-17", "de/VIZ#VIZ-9"])
        #expect(same.stdout.contains("one event"), Comment(rawValue: same.stdout + same.stderr))
    }

    /// National Highways' DATEX II, saved one file per fetch (Event_Data_*.xml) and read in order:
    /// one incident per situation, at its latest version, under the publication's own name.
    @Test func savedUpdatesOfOnePublicationAreOneIncidentPerSituation() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        var files: [String] = []
        // Ten situations over three fetches: each file lists some of them, at rising versions.
        for fetch in 1...3 {
            let listed = (1...10).filter { ($0 + fetch) % 3 != 0 || fetch == 3 }
            let body = listed.map { Self.nationalHighwaysSituation($0, version: fetch) }.joined()
            let file = try TestSupport.write(Self.nationalHighwaysHeader(fetch) + body + "</payloadPublication></d2LogicalModel>",
                                             name: String(format: "Event_Data_%03d.xml", fetch), in: folder)
            files.append(file.path)
        }
        for file in files {
            let out = try cli(["ingest", "--db", db, "--no-geocode", file])
            #expect(out.status == 0 && out.stderr.contains("source gb/NTIS"), Comment(rawValue: out.stderr))
        }
        let stored = Self.json(try cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json"]).stdout)
        #expect(stored.count == 10, "\(stored.count) incidents for 10 situations")
        #expect(Set(stored.compactMap { $0["source"] as? String }) == ["gb/NTIS"])
        #expect(stored.allSatisfy { ($0["subtitle"] as? String)?.contains("version 3") == true }, "each at its latest version")
    }

    static func nationalHighwaysHeader(_ fetch: Int) -> String {
        #"<?xml version="1.0" encoding="UTF-8"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><exchange><supplierIdentification><country>gb</country><nationalIdentifier>NTIS</nationalIdentifier></supplierIdentification></exchange><payloadPublication xsi:type="SituationPublication" lang="en"><publicationTime>2026-11-2\#(fetch)T08:00:00Z</publicationTime><publicationCreator><country>gb</country><nationalIdentifier>NTIS</nationalIdentifier></publicationCreator>"#
    }

    /// A situation in National Highways' shape: an abnormal-traffic record whose comment is
    /// `key : value` lines.
    static func nationalHighwaysSituation(_ n: Int, version: Int) -> String {
        let comment = "TYPE : GDP\nEvent Location : The M1 southbound between J\(20 + n) and J\(21 + n)\nEvent Reason : Congestion\nEvent Status : version \(version)"
        return """
            <situation id="GUID-NH-\(n)" version="\(version)"><overallSeverity>medium</overallSeverity><situationVersionTime>2026-11-2\(version)T07:5\(n % 10):00Z</situationVersionTime>\
            <situationRecord xsi:type="AbnormalTraffic" id="GUID-NH-\(n)-1" version="\(version)"><situationRecordVersionTime>2026-11-2\(version)T07:50:00Z</situationRecordVersionTime>\
            <probabilityOfOccurrence>certain</probabilityOfOccurrence><validity><validityStatus>active</validityStatus><validityTimeSpecification>\
            <overallStartTime>2026-11-21T06:00:00Z</overallStartTime></validityTimeSpecification></validity>\
            <generalPublicComment><comment><values><value lang="en">\(comment)</value></values></comment></generalPublicComment>\
            <groupOfLocations xsi:type="Point"><locationForDisplay><latitude>\(52.0 + Double(n) / 20)</latitude><longitude>-1.2</longitude></locationForDisplay>\
            </groupOfLocations><abnormalTrafficType>queuingTraffic</abnormalTrafficType></situationRecord></situation>
            """
    }
}
