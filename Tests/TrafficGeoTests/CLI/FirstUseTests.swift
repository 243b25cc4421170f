import Foundation
import Testing

/// What a new user tripped over on the release binary (issue 38, points 1–9), each through the
/// command line as typed. Points 10 and 11 (the collection's extent, the map settling) are in
/// ServeAPITests and ServeClientsTests; the README as written in EveryCommandTests.
@Suite("First use: what a new user tripped over", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct FirstUseTests {
    let folder = TestSupport.temporaryDirectory()
    var db: String { folder.appendingPathComponent("db.sqlite").path }
    static let sample = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml")

    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = db
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, environment: environment)
    }

    func withSamples(_ body: () throws -> Void) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let ingest = try cli(["ingest", Self.sample.path])
        try #require(ingest.status == 0, Comment(rawValue: ingest.stderr))
        try body()
    }

    /// Point 1: a sequence number past the feed's end follows from the end; "next" never skips.
    @Test func changesSincePastTheEndFollowsFromTheEnd() throws {
        try withSamples {
            let past = try cli(["changes", "--since", "1234"])
            #expect(past.status == 0 && past.stdout.isEmpty, Comment(rawValue: past.stderr))
            #expect(past.stderr.contains("--since 1234 is past the newest event (12)"), Comment(rawValue: past.stderr))
            #expect(past.stderr.contains("next: --since 12)"), Comment(rawValue: past.stderr))
            let feed = try TestSupport.write(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"n1","geometry":{"type":"Point","coordinates":[7,50.9]},"properties":{"title":"A4 : Koeln - Olpe"}}]}"#,
                                             name: "next.geojson", in: folder)
            #expect(try cli(["ingest", feed.path]).status == 0)
            let next = try cli(["changes", "--since", "12"])
            #expect(next.stdout.split(separator: "\n").count == 1 && next.stdout.contains("\"n1\""), Comment(rawValue: next.stdout + next.stderr))
        }
    }

    /// Point 3: incidents that are over say so in every format, and stderr says how to leave them out.
    @Test func answersSayWhichIncidentsAreOver() throws {
        try withSamples {
            let json = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--limit", "3", "--format", "json"])
            #expect(json.stdout.components(separatedBy: "\"state\":\"expired\"").count - 1 == 3, Comment(rawValue: json.stdout))
            #expect(json.stderr.contains("3 of 3 incidents have expired or ended") && json.stderr.contains("--active-at now"), Comment(rawValue: json.stderr))
            let cards = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--limit", "1", "--format", "annotations"])
            #expect(cards.stdout.contains("· expired]") && cards.stdout.contains("expired 2025-05-19T"), Comment(rawValue: cards.stdout))
            let table = try cli(["bbox", "--west", "6", "--south", "50", "--east", "8", "--north", "52", "--format", "table"])
            #expect(table.stdout.contains("STATE") && table.stdout.contains("expired"), Comment(rawValue: table.stdout))
            let geojson = try cli(["export", "--format", "geojson"])
            #expect(geojson.stdout.contains("\"state\":\"expired\""))
            let csv = try cli(["export", "--format", "csv"])
            // The state, then the details official feeds give (empty for these), then the event and its reports.
            #expect(csv.stdout.hasPrefix("id,") && csv.stdout.split(whereSeparator: \.isNewline).first?
                .hasSuffix(",ended,state,last_heard,severity,severity_level,probability,valid_from,record_types,road_name,other_roads,direction,delay_minutes,lanes_restricted,location,reason,event_status,return_to_normal,schedule,event,reports") == true)
            let then = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--limit", "3", "--active-at", "2025-05-19T06:00:00Z", "--format", "json"])
            #expect(then.status == 0 && !then.stderr.contains("have expired"), "asked for a time: no note")
            let now = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--active-at", "now"])
            #expect(now.stdout.contains("No incidents found") || now.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        }
    }

    /// Point 4: Köln, Koeln and Koln find the same incidents (the feeds spell it Koeln).
    @Test func everySpellingOfKoelnFindsTheSameIncidents() throws {
        try withSamples {
            func ids(_ words: String) throws -> [String] {
                let r = try cli(["export", "--search", words, "--format", "csv"])
                #expect(r.status == 0, Comment(rawValue: r.stderr))
                return r.stdout.split(whereSeparator: \.isNewline).dropFirst().map { String($0.split(separator: ",")[0]) }.sorted()
            }
            let koeln = try ids("koeln unfall")
            #expect(koeln.count >= 1)
            #expect(try ids("koeln").count >= 5)
            #expect(try ids("koln unfall") == koeln)
            #expect(try ids("Köln Unfall") == koeln)
            #expect(try ids("KOELN") == ids("koln"))
        }
    }

    /// Point 6: an unknown command is named, with the nearest real one.
    @Test func anUnknownCommandIsNamedWithTheNearestOne() throws {
        let typo = try cli(["neer", "--lat", "50.94", "--lon", "6.96"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("'neer' is not a trafficgeo command. Did you mean 'near'?"), Comment(rawValue: typo.stderr))
        let unknown = try cli(["frobnicate"])
        #expect(unknown.status == 64 && unknown.stderr.contains("'frobnicate' is not a trafficgeo command.") && !unknown.stderr.contains("Did you mean"))
        #expect(try cli(["help", "near"]).status == 0)
    }

    /// Point 7: -o names its format or is refused, messages go to stderr, silence is explained.
    @Test func commandsSayWhatTheyDidOnStderr() throws {
        try withSamples {
            let xml = try cli(["near", "--lat", "50.94", "--lon", "6.96", "-o", folder.appendingPathComponent("out.xml").path])
            #expect(xml.status == 64 && xml.stderr.contains("'.xml' names no output format"), Comment(rawValue: xml.stderr))
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.xml").path))
            let near = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--limit", "4", "-o", folder.appendingPathComponent("out.geojson").path])
            #expect(near.status == 0 && near.stdout.isEmpty && near.stderr.contains("wrote 4 incidents to"), Comment(rawValue: near.stderr))
            let dash = try cli(["near", "--lat", "50.94", "--lon", "6.96", "--limit", "2", "--format", "csv", "-o", "-"])
            #expect(dash.status == 0 && dash.stdout.hasPrefix("id,title"), "-o - is stdout: \(dash.stderr)")
            let pending = try cli(["geocode", "pending"])
            #expect(pending.status == 0 && pending.stderr.contains("nothing to geocode"), Comment(rawValue: pending.stderr))
            // An option before the subcommand's name makes it the default command's query: say so.
            let misplaced = try cli(["geocode", "--db", db, "pending"])
            #expect(misplaced.status == 64 && misplaced.stderr.contains("'pending' is a geocode command: put its name first"), Comment(rawValue: misplaced.stderr))
            let junctions = try TestSupport.write("name,road,lat,lon\nWenden,A4,50.98,7.9\n", name: "junctions.csv", in: folder)
            let imported = try cli(["junctions", "import", junctions.path])
            #expect(imported.status == 0 && imported.stdout.isEmpty && imported.stderr.contains("imported"), Comment(rawValue: imported.stdout + imported.stderr))
            let pruned = try cli(["prune", "--expired"])
            #expect(pruned.status == 0 && pruned.stdout.isEmpty && pruned.stderr.contains("pruned 12 expired incidents"), Comment(rawValue: pruned.stdout + pruned.stderr))
        }
    }

    /// Point 8: a distance without its unit is refused the same way everywhere; an empty circle
    /// says how far the nearest match is.
    @Test func aDistanceNeedsItsUnit() throws {
        try withSamples {
            let bare = try cli(["within", "--lat", "50.94", "--lon", "6.96", "--radius", "25"])
            #expect(bare.status == 64 && bare.stderr.contains("a distance needs its unit: 25m or 25km"), Comment(rawValue: bare.stderr))
            let small = try cli(["within", "--lat", "50.94", "--lon", "6.96", "--radius", "25m"])
            #expect(small.status == 0 && small.stderr.contains("nothing within 25 m; the nearest match is 7.0 km away"), Comment(rawValue: small.stderr))
            let watches = try TestSupport.write(#"[{"name": "home", "lat": 50.94, "lon": 6.96, "radius": 30000}]"#, name: "watches.json", in: folder)
            let watch = try cli(["watch", "--watches", watches.path, "--once"])
            #expect(watch.status == 64 && watch.stderr.contains("a distance needs its unit: 30000m or 30000km"), Comment(rawValue: watch.stderr))
            // Lengths of time follow the same rule.
            for arguments in [["watch", "--lat", "50.94", "--lon", "6.96", "--radius", "1km", "--every", "5", "--once"],
                              ["ingest", "--every", "5", Self.sample.path], ["geocode", "--timeout", "5", "Köln"], ["serve", "--timeout", "5"]] {
                let r = try cli(arguments)
                #expect(r.status == 64 && r.stderr.contains("a length of time needs its unit: 5s or 5m"), "\(arguments.joined(separator: " ")): \(r.stderr)")
            }
        }
    }

    /// Numbers at the integer extremes on the command line are refused (64) with the option's
    /// range, never a trap (132) (issue 39).
    @Test func extremeNumbersAreRefusedNotTrapped() throws {
        try withSamples {
            let max = "9223372036854775807"
            let cases: [[String]] = [
                ["near", "--lat", "50", "--lon", "7", "-k", max], ["changes", "--since", "-5"],
                ["watch", "--lat", "50", "--lon", "7", "--radius", "1km", "--every", max + "w", "--once"],
                ["ingest", "autobahn:A1", "--autobahn-timeout", max + "w"], ["serve", "--timeout", max + "w"],
                ["ingest", "--keep-changes", max + "d", Self.sample.path], ["within", "--lat", "50", "--lon", "7", "--radius", "1e999km"],
            ]
            for arguments in cases {
                let r = try cli(arguments)
                #expect(r.status == 64, "\(arguments.joined(separator: " ")): \(r.status) \(r.stderr.prefix(300))")
            }
            let far = try cli(["changes", "--since", max])
            #expect(far.status == 0 && far.stderr.contains("past the newest event"), Comment(rawValue: far.stderr))
        }
    }

    /// A cached answer is the answer to the same question: the address without its comma (which
    /// the gazetteer does not find) must not answer the one with it (found by a new user's trial).
    @Test func anAddressWithItsCommaIsNotAnsweredFromTheCacheOfOneWithout() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try cli(["geocode", "Hauptstraße 5 69117 Heidelberg"]).status == 2)
        let comma = try cli(["geocode", "Hauptstraße 5, 69117 Heidelberg"])
        #expect(comma.status == 0 && comma.stdout.contains("Heidelberg"), Comment(rawValue: comma.stdout + comma.stderr))
        #expect(try cli(["geocode", "HAUPTSTRASSE 5,  69117 heidelberg"]).status == 0, "case, ß and spaces still ask once")
    }

    /// Point 9: GeoPackage datetimes in the form the encoding requires (GDAL warned of
    /// "non-conformant content" for 2025-05-19T05:50:00Z).
    @Test func geoPackageDatetimesConform() throws {
        try withSamples {
            let gpkg = folder.appendingPathComponent("out.gpkg").path
            #expect(try cli(["export", "-o", gpkg]).status == 0)
            let sqlite = try #require(TestSupport.which("sqlite3") ?? TestSupport.which("python3"))
            let read = sqlite.hasSuffix("sqlite3")
                ? try TestSupport.run(sqlite, [gpkg, "SELECT updated, expires FROM incidents"])
                : try TestSupport.run(sqlite, ["-c", "import sqlite3,sys; [print(a, b, sep='|') for a, b in sqlite3.connect(sys.argv[1]).execute('SELECT updated, expires FROM incidents')]", gpkg])
            let values = read.stdout.split(whereSeparator: { $0 == "|" || $0.isNewline }).map(String.init)
            #expect(values.count == 24, Comment(rawValue: read.stdout + read.stderr))
            let form = #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/#
            #expect(values.allSatisfy { $0.wholeMatch(of: form) != nil }, Comment(rawValue: read.stdout))
            if let ogrinfo = TestSupport.which("ogrinfo") {
                let info = try TestSupport.run(ogrinfo, ["-ro", "-al", "-so", gpkg])
                #expect(info.status == 0 && !info.stderr.lowercased().contains("non-conformant"), Comment(rawValue: info.stderr))
            }
        }
    }
}

/// Garbage offered as a feed (issue 39): refused early, in bounded memory and with bounded
/// warnings, storing nothing.
@Suite("Garbage as a feed", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"),
       .enabled(if: TestSupport.which("python3") != nil, "needs python3 (it measures the child's memory)"))
struct GarbageFeedTests {
    /// Runs the CLI under python3, which reports the child's peak memory (KiB) on its last line.
    static func measured(_ arguments: [String], db: String) throws -> (status: Int32, stderr: String, peakKiB: Int) {
        let script = "import resource, subprocess, sys\nr = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
            + "sys.stderr.buffer.write(r.stderr)\nprint(r.returncode)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        var environment = ProcessInfo.processInfo.environment
        environment["TRAFFICGEO_DB"] = db
        let r = try TestSupport.run(TestSupport.which("python3")!, ["-c", script, TestSupport.cliExecutable!.path] + arguments, environment: environment)
        let lines = r.stdout.split(separator: "\n")
        return (Int32(lines.first ?? "") ?? -1, r.stderr, Int(lines.last ?? "") ?? -1)
    }

    @Test(.timeLimit(.minutes(2)), arguments: ["a,b,c", "title,x", "title,lat,lon"])
    func randomBytesWithACSVLookingFirstLineAreRefused(header: String) throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let junk = folder.appendingPathComponent("junk.csv")
        var generator = SystemRandomNumberGenerator()
        var data = Data((header + "\n").utf8)
        data.append(contentsOf: (0..<(48 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
        try data.write(to: junk)
        let db = folder.appendingPathComponent("db.sqlite").path
        let started = ContinuousClock.now
        let r = try Self.measured(["ingest", junk.path], db: db)
        #expect(r.status == 65, Comment(rawValue: String(r.stderr.suffix(1000))))
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(r.peakKiB > 0 && r.peakKiB < 300 * 1024, "peak \(r.peakKiB) KiB")
        #expect(r.stderr.split(separator: "\n").count < 1000, "\(r.stderr.split(separator: "\n").count) lines of warnings")
        #expect(r.stderr.contains("not a readable csv feed"), Comment(rawValue: String(r.stderr.suffix(500))))
        var environment = ProcessInfo.processInfo.environment
        environment["TRAFFICGEO_DB"] = db
        let stats = try TestSupport.run(TestSupport.cliExecutable!.path, ["stats", "--format", "json"], environment: environment)
        let total = (try? JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])?["incidents"] as? Int
        #expect(total == 0 || stats.status != 0, "nothing stored: \(stats.stdout.prefix(300))")
    }

    /// Hostile XML refused before any entry is bad feed data (exit 65, as docs/errors.md says),
    /// not a partial ingest (3).
    @Test func hostileXMLIsBadFeedData() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let laughs = try TestSupport.write(#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><feed xmlns="http://www.w3.org/2005/Atom"><entry><title>&lol2;</title></entry></feed>"#,
                                           name: "laughs.xml", in: folder)
        let deep = try TestSupport.write("<feed xmlns=\"http://www.w3.org/2005/Atom\">" + String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000) + "</feed>",
                                         name: "deep.xml", in: folder)
        for file in [laughs, deep] {
            let r = try Self.measured(["ingest", file.path], db: folder.appendingPathComponent("db.sqlite").path)
            #expect(r.status == 65 && r.stderr.contains("not a readable atom feed"), Comment(rawValue: r.stderr))
        }
    }
}

