import AsyncHTTPClient
import Foundation
import Testing
import TrafficGeoStore
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoTestSupport

/// Other authorities' words, severities and schedules as the command line reads them: National
/// Highways' comment lines, one severity scale, Open511's recurring schedules.
extension StandardsFeedTests {
    /// National Highways' shape, written from its description: no road number, the location,
    /// reason and status in the comment's `key : value` lines, a record type that says no more
    /// than "unspecified abnormal traffic". The title names the kind, the road, the direction and
    /// the place; the lines are details; a road filter and a search for the junction find it.
    @Test(.timeLimit(.minutes(2))) func nationalHighwaysCommentLinesGiveTitlesRoadsAndDetails() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        func situation(_ id: String, type: String, subtype: String, comment: String, lat: Double, lon: Double) -> String {
            """
            <situation id="\(id)" version="2"><overallSeverity>high</overallSeverity><situationVersionTime>2026-11-26T07:50:00Z</situationVersionTime>\
            <situationRecord xsi:type="\(type)" id="\(id)-1" version="2"><situationRecordCreationTime>2026-11-26T07:00:00Z</situationRecordCreationTime>\
            <situationRecordVersionTime>2026-11-26T07:50:00Z</situationRecordVersionTime><probabilityOfOccurrence>certain</probabilityOfOccurrence>\
            <validity><validityStatus>active</validityStatus><validityTimeSpecification><overallStartTime>2026-11-26T06:40:00Z</overallStartTime>\
            </validityTimeSpecification></validity><generalPublicComment><comment><values><value lang="en">\(comment)</value></values></comment></generalPublicComment>\
            <groupOfLocations xsi:type="Point"><locationForDisplay><latitude>\(lat)</latitude><longitude>\(lon)</longitude></locationForDisplay></groupOfLocations>\
            \(subtype)</situationRecord></situation>
            """
        }
        let header = #"<?xml version="1.0" encoding="UTF-8"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><exchange><supplierIdentification><country>gb</country><nationalIdentifier>NTIS</nationalIdentifier></supplierIdentification></exchange><payloadPublication xsi:type="SituationPublication" lang="en"><publicationTime>2026-11-26T08:00:00Z</publicationTime><publicationCreator><country>gb</country><nationalIdentifier>NTIS</nationalIdentifier></publicationCreator>"#
        let body = [
            situation("GUID-1", type: "AbnormalTraffic", subtype: "<abnormalTrafficType>unspecifiedAbnormalTraffic</abnormalTrafficType>",
                      comment: "TYPE : GDP\nEvent Location : The M1 southbound between J29A and J30\nEvent Reason : Congestion\nEvent Status : Currently Active\nReturn To Normal : Normal traffic conditions are expected between 09:15 and 09:30 on 26 November 2026.",
                      lat: 53.21, lon: -1.34),
            situation("GUID-2", type: "Accident", subtype: "<accidentType>collision</accidentType>",
                      comment: "TYPE : UNPLANNED\nEvent Location : The A1(M) northbound at J7\nEvent Reason : Collision\nEvent Status : Currently Active\nDelay : 1 hour 15 mins",
                      lat: 51.87, lon: -0.21),
            // Prose with a colon stays prose: its first line is the headline.
            situation("GUID-3", type: "Roadworks", subtype: "", comment: "Lane closures: overnight resurfacing near Leeds", lat: 53.8, lon: -1.55),
        ].joined()
        let file = try TestSupport.write(header + body + "</payloadPublication></d2LogicalModel>", name: "Event_Data_001.xml", in: folder)
        let db = folder.appendingPathComponent("nh.sqlite").path
        let ingest = try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder)
        #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let stored = try await Self.exported(db: db, folder: folder)
        let m1 = try #require(stored["GUID-1"]), a1m = try #require(stored["GUID-2"]), leeds = try #require(stored["GUID-3"])
        #expect(m1["title"] as? String == "Congestion – M1 southbound between J29A and J30")
        #expect(m1["road"] as? String == "M1" && m1["direction"] as? String == "southbound")
        #expect(m1["location"] as? String == "The M1 southbound between J29A and J30" && m1["reason"] as? String == "Congestion")
        #expect(m1["eventStatus"] as? String == "Currently Active")
        #expect((m1["returnToNormal"] as? String)?.hasPrefix("Normal traffic conditions are expected between 09:15") == true)
        #expect(a1m["title"] as? String == "Collision – A1(M) northbound at J7")
        #expect(a1m["road"] as? String == "A1(M)" && a1m["direction"] as? String == "northbound")
        #expect(a1m["delayMinutes"] as? String == "75", "a Delay line is the delay")
        #expect(m1["delayMinutes"] == nil)
        #expect(leeds["title"] as? String == "Roadworks – Lane closures: overnight resurfacing near Leeds")
        #expect(leeds["location"] == nil)
        for (arguments, expected) in [(["--road", "M1"], ["GUID-1"]), (["--road", "a1(m)"], ["GUID-2"]), (["--search", "J29A"], ["GUID-1"]),
                                      (["--search", "resurfacing leeds"], ["GUID-3"])] {
            let out = try await Self.cli(["export", "--db", db, "--reports", "--format", "json"] + arguments, folder: folder)
            let ids = (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(out.status == 0 && ids == expected, "\(arguments): \(ids) \(out.stderr)")
        }
    }

    /// One severity scale for every feed's words: a filter (`--min-severity`, serve's
    /// `min-severity=`) and an order (`--sort severity`), the same text on both.
    @Test(.timeLimit(.minutes(2))) func severityIsOneScaleToFilterAndSortBy() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        func event(_ n: Int, _ severity: String?) -> String {
            """
            {"id": "t/\(n)", "status": "ACTIVE", "updated": "2026-11-26T07:00:00Z", "event_type": "INCIDENT",\
            \(severity.map { "\"severity\": \"\($0)\"," } ?? "") "headline": "Incident \(n) on I-5 N",\
            "roads": [{"name": "I-5", "direction": "N"}], "geography": {"type": "Point", "coordinates": [-122.3\(n), 47.6\(n)]}}
            """
        }
        let feed = #"{"meta": {"version": "v1"}, "events": ["# + [event(1, "MINOR"), event(2, "MAJOR"), event(3, "MODERATE"), event(4, nil), event(5, "MAJOR")].joined(separator: ",") + "]}"
        let file = try TestSupport.write(feed, name: "open511.json", in: folder)
        let db = folder.appendingPathComponent("s.sqlite").path
        #expect(try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder).status == 0)
        func ids(_ arguments: [String]) async throws -> [String] {
            let out = try await Self.cli(["near", "--db", db, "--lat", "47.6", "--lon", "-122.3", "--format", "json", "--reports"] + arguments, folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        #expect(Set(try await ids(["--min-severity", "high"])) == ["t/2", "t/5"])
        #expect(Set(try await ids(["--min-severity", "moderate"])) == ["t/2", "t/3", "t/5"])
        #expect(Set(try await ids(["--min-severity", "low"])) == ["t/1", "t/2", "t/3", "t/5"])
        let sorted = try await ids(["--sort", "severity"])
        #expect(sorted.count == 5 && Set(sorted.prefix(2)) == ["t/2", "t/5"] && sorted[2] == "t/3" && sorted[3] == "t/1" && sorted[4] == "t/4", "\(sorted)")
        let wrong = try await Self.cli(["near", "--db", db, "--lat", "47.6", "--lon", "-122.3", "--min-severity", "bad"], folder: folder)
        #expect(wrong.status == 64 && wrong.stderr.contains("is not a severity"), Comment(rawValue: wrong.stderr))
        // Shown on the one scale in every format, beside the feed's word.
        func show(_ format: String) async throws -> String {
            let out = try await Self.cli(["near", "--db", db, "--lat", "47.62", "--lon", "-122.32", "--limit", "1", "--reports", "--format", format], folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return out.stdout
        }
        #expect(try await show("json").contains(#""severity":"major","severityLevel":"high""#))
        #expect(try await show("geojson").contains(#""severityLevel":"high""#))
        let csv = try await show("csv").split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let column = try #require(csv.first?.firstIndex(of: "severity_level"))
        #expect(csv.count == 2 && csv[1][column] == "high")
        #expect(try await show("annotations").contains("severity high (major)"))
        let table = try await show("table").split(separator: "\n")
        #expect(table.first?.contains("SEVERITY") == true && table.count == 2 && table[1].contains(" high "), "\(table)")
    }

    /// Open511 recurring schedules give the validity (from the first start date at its daily
    /// start to the last end date at its daily end, in the feed's offset) and decide
    /// `--active-at` by weekday, daily hours and exceptions, on the command line and in serve:
    /// roadworks of 2013 marked ACTIVE are not "active now", works Monday to Friday 08:00–17:00
    /// are not in effect on a Saturday, in the evening or on a day the feed excepts.
    @Test(.timeLimit(.minutes(3))) func open511RecurringSchedulesDecideWhenWorksAreInEffect() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let feed = #"""
            {"meta": {"version": "v1"}, "events": [
             {"id": "qc/1", "status": "ACTIVE", "updated": "2013-04-20T10:00:00-04:00", "event_type": "CONSTRUCTION", "headline": "Fermeture complète",
              "schedule": {"recurring_schedules": [{"start_date": "2013-05-01", "end_date": "2013-06-30", "daily_start_time": "08:00", "daily_end_time": "17:00", "days": [1, 2, 3, 4, 5]}],
                           "exceptions": ["2013-05-06", "2013-05-08 10:00-12:00"]},
              "roads": [{"name": "A-40"}], "geography": {"type": "Point", "coordinates": [-73.6, 45.5]}},
             {"id": "qc/2", "status": "ACTIVE", "updated": "2013-04-20T10:00:00-04:00", "event_type": "CONSTRUCTION", "headline": "Travaux",
              "schedule": {"recurring_schedules": [{"start_date": "2013-05-01"}]},
              "roads": [{"name": "A-20"}], "geography": {"type": "Point", "coordinates": [-73.5, 45.5]}}]}
            """#
        let file = try TestSupport.write(feed, name: "quebec.open511.json", in: folder)
        let db = folder.appendingPathComponent("q.sqlite").path
        #expect(try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder).status == 0)
        let stored = try await Self.exported(db: db, folder: folder)
        #expect(stored["qc/1"]?["validFrom"] as? String == "2013-05-01T12:00:00Z")
        #expect(stored["qc/1"]?["expires"] as? String == "2013-06-30T21:00:00Z" && stored["qc/1"]?["state"] as? String == "expired")
        #expect(stored["qc/2"]?["validFrom"] as? String == "2013-05-01T04:00:00Z" && stored["qc/2"]?["expires"] == nil)
        #expect((stored["qc/1"]?["schedule"] as? String).flatMap(RecurringSchedule.init(text:))?.exceptions.count == 2)
        func inEffect(_ at: String, _ extra: [String] = []) async throws -> Set<String> {
            let out = try await Self.cli(["export", "--db", db, "--reports", "--format", "json", "--active-at", at] + extra, folder: folder)
            return Set((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }
        // Instants in Montréal's summer time (UTC−4): 13:00Z is 09:00 there.
        let cases: [(String, Set<String>, String)] = [
            ("2013-04-25T12:00:00Z", [], "before the first date"),
            ("2013-05-03T13:00:00Z", ["qc/1", "qc/2"], "a Friday morning: announced in April, news when they begin"),
            ("2013-05-03T22:00:00Z", ["qc/2"], "that Friday at 18:00: after the day's hours"),
            ("2013-05-04T13:00:00Z", ["qc/2"], "a Saturday"),
            ("2013-05-06T13:00:00Z", ["qc/2"], "a Monday the feed excepts"),
            ("2013-05-07T13:00:00Z", ["qc/1", "qc/2"], "the Tuesday after"),
            ("2013-05-08T13:00:00Z", ["qc/2"], "Wednesday 09:00: that day only 10:00–12:00"),
            ("2013-05-08T14:30:00Z", ["qc/1", "qc/2"], "Wednesday 10:30"),
        ]
        // (qc/2 gives no end: heard of when it began, it is in effect for 30 days here, not 7.)
        for (at, expected, why) in cases { #expect(try await inEffect(at, ["--unconfirmed-after", "30d"]) == expected, "\(at): \(why)") }
        // qc/2 gives no end and was last heard of when it began, two weeks before: a file read
        // once does not vouch for it for ever (docs/feeds.md), unless asked to.
        #expect(try await inEffect("2013-05-15T13:00:00Z") == ["qc/1"])
        #expect(try await inEffect("2013-05-15T13:00:00Z", ["--unconfirmed-after", "30d"]) == ["qc/1", "qc/2"])
        #expect(try await inEffect("2013-07-01T12:00:00Z", ["--unconfirmed-after", "never"]) == ["qc/2"])
        // The card says the schedule in words.
        let card = try await Self.cli(["near", "--db", db, "--lat", "45.5", "--lon", "-73.6", "--reports", "--limit", "1", "--format", "annotations"], folder: folder)
        #expect(card.stdout.contains("on schedule: Mon–Fri 08:00–17:00 from 2013-05-01 to 2013-06-30; not 2013-05-06; 2013-05-08 only 10:00–12:00"), "\(card.stdout)")

        // serve answers the same times.
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        #expect(server.port > 0, Comment(rawValue: server.stderr))
        for (at, expected, why) in cases {
            let served = try await Self.servedFeatures(server, "unconfirmed-after=30d&active-at=" + at)?.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String }
            #expect(served.map(Set.init) == expected, "serve at \(at): \(why)")
        }
    }
}
