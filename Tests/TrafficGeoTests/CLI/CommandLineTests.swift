import Foundation
import Testing
@testable import TrafficGeoOutput
@testable import TrafficGeoQuery
@testable import TrafficGeoSupport

/// The `trafficgeo` executable as a user runs it: arguments, exit codes, stdout and stderr.
@Suite("Command line", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct CommandLineTests {
    let folder = TestSupport.temporaryDirectory()
    var db: String { folder.appendingPathComponent("db.sqlite").path }

    func cli(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let exe = try #require(TestSupport.cliExecutable, "the trafficgeo executable is not built")
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        return try TestSupport.run(exe.path, arguments, stdin: stdin, environment: environment)
    }

    func ingestSample() throws {
        let sample = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path
        let r = try cli(["ingest", "--db", db, sample])
        #expect(r.status == 0, Comment(rawValue: r.stderr))
        #expect(r.stderr.contains("12 read, 12 new"))
    }

    @Test func inputIsCheckedBeforeWork() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        for args in [["near", "--lat", "95", "--lon", "7"], ["near", "--lat", "nan", "--lon", "7"], ["near", "--lat", "50", "--lon", "inf"],
                     ["near", "--lat", "50", "--lon", "7", "--limit", "0"], ["within", "--lat", "50", "--lon", "7", "--radius=-5km"],
                     ["within", "--lat", "50", "--lon", "7", "--radius", "5 parsecs"], ["near", "--lat", "50", "--lon", "7", "--active-at", "soon"],
                     ["near", "--lat", "50", "--lon", "7", "--category", "aliens"], ["bbox", "--west", "0", "--south", "10", "--east", "1", "--north", "5"]] {
            let r = try cli(args + ["--db", db])
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("Error:"))
        }
    }

    @Test func nearWithinAndFilters() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let near = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--limit", "3", "--format", "json"])
        let nearest = try JSONSerialization.jsonObject(with: Data(near.stdout.utf8)) as! [[String: Any]]
        #expect(nearest.count == 3)
        #expect(nearest[0]["title"] as? String == "A3 : Koeln - Frankfurt")
        let distances = nearest.map { $0["distanceMeters"] as! Double }
        #expect(distances == distances.sorted())

        // Longitude 366.96 is refused, as serve and a watches file refuse it (the query model).
        let outside = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "366.96", "--limit", "3", "--format", "json"])
        #expect(outside.status == 64 && outside.stderr.contains("--lon '366.96' is not a longitude: use degrees from -180 to 180"), Comment(rawValue: outside.stderr))

        let within = try cli(["within", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "10km", "--format", "csv"])
        #expect(within.stdout.split(separator: "\r\n").count == 3)  // header + A3 + A59
        let inMiles = try cli(["within", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "6.22mi", "--format", "csv"])
        #expect(inMiles.stdout == within.stdout)

        let search = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--search", "falschfahrer KÖLN", "--format", "json"])
        let found = try JSONSerialization.jsonObject(with: Data(search.stdout.utf8)) as! [[String: Any]]
        #expect(found.map { $0["title"] as? String } == ["A4 : Koeln - Olpe"])

        let road = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--road", "A 4", "--format", "json"])
        let onA4 = try JSONSerialization.jsonObject(with: Data(road.stdout.utf8)) as! [[String: Any]]
        #expect(onA4.count == 2 && onA4.allSatisfy { $0["road"] as? String == "A4" })

        // The sample feed's clock: 06:00 on 2025-05-19. At 06:00, the 1-hour incidents updated before 05:00 have expired.
        let active = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--limit", "50", "--active-at", "2025-05-19T06:00:00Z", "--format", "json"])
        let activeCount = (try JSONSerialization.jsonObject(with: Data(active.stdout.utf8)) as! [Any]).count
        let late = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--limit", "50", "--active-at", "2025-06-19T06:00:00Z", "--format", "json"])
        #expect(activeCount == 12)
        #expect(late.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")

        let byTitle = try cli(["within", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "1000km", "--sort", "title", "--format", "json"])
        let titles = (try JSONSerialization.jsonObject(with: Data(byTitle.stdout.utf8)) as! [[String: Any]]).map { $0["title"] as! String }
        #expect(zip(titles, titles.dropFirst()).allSatisfy { TextFolding.fold($0) <= TextFolding.fold($1) })
        #expect(titles.count == 12)
    }

    @Test func batchQueriesEqualSingleQueries() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let points = try TestSupport.write("qid,lat,lon\nk1,50.94,6.96\nk2,51.3,7.5\n", name: "q.csv", in: folder)
        let batch = try cli(["near", "--db", db, "--queries", points.path, "--limit", "3", "--timing"])
        #expect(batch.status == 0, Comment(rawValue: batch.stderr))
        let rows = batch.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
        #expect(rows.count == 6 && rows.prefix(3).allSatisfy { $0[0] == "k1" })
        let single = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--limit", "3", "--format", "json"])
        let nearest = try JSONSerialization.jsonObject(with: Data(single.stdout.utf8)) as! [[String: Any]]
        #expect(rows.prefix(3).map { $0[1] } == nearest.map { $0["id"] as! String })
        for (row, n) in zip(rows, nearest) { #expect(abs(Double(row[2])! - (n["distanceMeters"] as! Double)) < 0.05) }
        #expect(batch.stderr.contains("timing: 2 queries"))
        let json = batch.stderr.split(separator: "\n").first { $0.hasPrefix("{") }.map { String($0) } ?? "{}"
        #expect((try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["lat_ms"] as? [Double] != nil)
        let within = try cli(["within", "--db", db, "--queries", points.path, "--radius", "10km"])
        #expect(within.stdout.split(separator: "\n").count == 1 + 2)   // header, then A3 and A59 for k1; nothing near k2

        let piped = try cli(["within", "--db", db, "--queries", "-", "--radius", "10km"], stdin: "qid,lat,lon\nk1,50.94,6.96\nk2,51.3,7.5\n")
        #expect(piped.status == 0 && piped.stdout == within.stdout, Comment(rawValue: piped.stderr))
        let keys = json.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(keys == ["lat_ms", "queries", "rows", "threads", "total_s"], "the timing line's keys, sorted")
    }

    /// A queries file that cannot be used is a data error naming the file and the line; an empty
    /// one says so; `-o` says what it wrote.
    @Test func badQueriesFilesAreDataErrorsThatNameTheLine() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let cases: [(String, String)] = [
            ("qid,lat,lon\na,50.9,6.9\nb,95,6.9\n", "line 3: "),
            ("qid,lat,lon\na,50.9,6.9\nb,51,7\na,52,8\n", "line 4: the qid 'a' is also on line 2"),
            ("name,x,y\na,50.9,6.9\n", "needs a header with qid (or id), lat and lon"),
            ("qid;lat;lon\na;50.9;6.9\n", "has no qid, lat, lon (separated by ';'? trafficgeo reads commas)"),
            ("qid,lat,lon\na,50.9,6.9,7\n", "line 2: has 4 fields, the header has 3"),
            ("qid,lat,lon\n ,50.9,6.9\n", "line 2: the qid is empty"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let file = try TestSupport.write(text, name: "bad\(index).csv", in: folder)
            let r = try cli(["near", "--db", db, "--queries", file.path])
            #expect(r.status == 65 && r.stderr.contains("\(file.path)") && r.stderr.contains(message), Comment(rawValue: r.stderr))
            #expect(r.stdout.isEmpty)
        }
        let missing = try cli(["near", "--db", db, "--queries", folder.appendingPathComponent("none.csv").path])
        #expect(missing.status == 66 && missing.stderr.contains("no such file"))
        let empty = try TestSupport.write("qid,lat,lon\n", name: "empty.csv", in: folder)
        let nothing = try cli(["near", "--db", db, "--queries", empty.path])
        #expect(nothing.status == 0 && nothing.stdout == "qid,id,distance_m\n" && nothing.stderr.contains("holds no query points"), Comment(rawValue: nothing.stderr))
        let good = try TestSupport.write("qid,lat,lon\nk1,50.94,6.96\n", name: "good.csv", in: folder)
        let out = folder.appendingPathComponent("rows.csv").path
        let wrote = try cli(["near", "--db", db, "--queries", good.path, "--limit", "3", "-o", out])
        #expect(wrote.status == 0 && wrote.stderr.contains("wrote 3 rows for 1 point to \(out)"), Comment(rawValue: wrote.stderr))
        // A point without an answer has no row, and the batch says how many.
        let far = try TestSupport.write("qid,lat,lon\nk1,50.94,6.96\nsea,55.0,3.0\n", name: "far.csv", in: folder)
        let unanswered = try cli(["within", "--db", db, "--queries", far.path, "--radius", "10km"])
        #expect(unanswered.status == 0 && unanswered.stderr.contains("1 of 2 points have no answer"), Comment(rawValue: unanswered.stderr))
        // What shapes incidents' output does not apply to rows of distances: refused, not ignored.
        for option in [["--sort", "title"], ["--crs", "EPSG:25832"], ["--geometry", "segment"]] {
            let r = try cli(["near", "--db", db, "--queries", good.path] + option)
            #expect(r.status == 64 && r.stderr.contains("\(option[0]) does not apply to --queries"), Comment(rawValue: r.stderr))
        }
    }

    /// Several threads answer a batch (`--threads`, default one per core) with the same rows in
    /// the same order as one thread.
    @Test func batchQueriesOnSeveralThreadsWriteTheSameRows() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let points = (0..<150).map { "p\($0),\(49 + Double($0 % 30) / 10),\(6 + Double($0 / 30) / 2)" }
        let file = try TestSupport.write("qid,lat,lon\n" + points.joined(separator: "\n") + "\n", name: "many.csv", in: folder)
        for command in [["near", "--limit", "4"], ["within", "--radius", "60km"]] {
            let one = try cli(command + ["--db", db, "--queries", file.path, "--threads", "1"])
            #expect(one.status == 0, Comment(rawValue: one.stderr))
            #expect(one.stdout.split(separator: "\n").count > 150)
            for threads in [["--threads", "3"], []] {
                let many = try cli(command + ["--db", db, "--queries", file.path] + threads)
                #expect(many.status == 0 && many.stdout == one.stdout, "\(command) \(threads)")
            }
        }
        let refused = try cli(["near", "--db", db, "--queries", file.path, "--threads", "0"])
        #expect(refused.status != 0 && refused.stderr.contains("--threads must be 1"))
        let alone = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--threads", "2"])
        #expect(alone.status != 0 && alone.stderr.contains("--threads is for batch queries"))
        let timing = try cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--timing"])
        #expect(timing.status == 64 && timing.stderr.contains("--timing is for batch queries"))
        let negative = try cli(["near", "--db", db, "--queries", file.path, "--threads", "-1"])
        #expect(negative.status == 64 && negative.stderr.contains("--threads must be 1"), Comment(rawValue: negative.stderr))
        let json = try cli(["near", "--db", db, "--queries", file.path, "-o", folder.appendingPathComponent("rows.json").path])
        #expect(json.status == 64 && json.stderr.contains("name the file .csv"), Comment(rawValue: json.stderr))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("rows.json").path))
    }

    @Test func exportWritesAFileThatOgrinfoReads() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let out = folder.appendingPathComponent("incidents.geojson").path
        let r = try cli(["export", "--db", db, "-o", out])
        #expect(r.status == 0, Comment(rawValue: r.stderr))
        #expect(r.stdout.isEmpty)
        try OutputFormatTests.validateRFC7946(try String(contentsOfFile: out, encoding: .utf8), expectedFeatures: 12)
        if let ogrinfo = TestSupport.which("ogrinfo") {
            let info = try TestSupport.run(ogrinfo, ["-ro", "-al", "-so", out])
            #expect(info.stdout.contains("Feature Count: 12"), Comment(rawValue: info.stdout + info.stderr))
        }
        // Reading our own export back gives the same positions.
        let reread = try cli(["ingest", "--db", folder.appendingPathComponent("again.sqlite").path, out])
        #expect(reread.stderr.contains("12 read, 12 new"))
    }

    @Test func ingestFromStdinAndPartialFailure() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let feed = "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"id\":\"x\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[7,50]},\"properties\":{}}]}"
        let piped = try cli(["ingest", "--db", db, "-"], stdin: feed)
        #expect(piped.status == 0, Comment(rawValue: piped.stderr))
        #expect(piped.stderr.contains("stdin (geojson): 1 read, 1 new"))
        let partial = try cli(["ingest", "--db", db, TestSupport.repositoryRoot.appendingPathComponent("data/sample/incidents.rss").path, "/no/such/feed.xml"])
        #expect(partial.status == 3)
        #expect(partial.stderr.contains("/no/such/feed.xml: no such file"))
        let missing = try cli(["ingest", "--db", db, "/no/such/feed.xml"])
        #expect(missing.status == 66)
        let stats = try cli(["stats", "--db", db, "--check"])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("incidents:       13"))
        #expect(stats.stdout.contains("check:           ok"))
    }

    /// Junction knowledge and confidence as a user meets them: learn from positioned warnings,
    /// place a title-only message from it, see precision and confidence, filter on them.
    @Test func junctionsConfidenceAndTheirFilters() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let history = try TestSupport.write(RoadKnowledgeTests.autobahnHistory(count: 5), name: "history.json", in: folder)
        let learned = try cli(["ingest", "--db", db, history.path])
        #expect(learned.status == 0 && learned.stderr.contains("10 junction positions learned"), Comment(rawValue: learned.stdout + learned.stderr))
        let list = try cli(["junctions", "list", "--db", db, "--road", "A 4"])
        #expect(list.status == 0 && list.stdout.contains("Krombach") && list.stdout.contains("Wenden"), Comment(rawValue: list.stderr))
        let csvPath = folder.appendingPathComponent("j.csv").path
        let export = try cli(["junctions", "export", "--db", db, "-o", csvPath])
        #expect(export.status == 0)
        #expect((try? String(contentsOfFile: csvPath, encoding: .utf8))?.hasPrefix("road,name,kind,latitude,longitude,support,spread_m,learned_from") == true)
        let bad = try cli(["junctions", "import", "--db", db, history.path + ".missing"])
        #expect(bad.status == 66 && bad.stderr.contains("cannot read"))

        let atom = try TestSupport.write("""
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>later</id><title>A4 : Krombach - Wenden</title>
            <summary>A4: Olpe -&gt; Köln, zwischen 1.0 km hinter AS Krombach und 0.3 km vor AS Wenden Unfall</summary></entry></feed>
            """, name: "later.xml", in: folder)
        let ingest = try cli(["ingest", "--db", db, "--geocoder", "gazetteer", atom.path])
        #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let near = ["near", "--db", db, "--lat", "50.99", "--lon", "7.95", "--limit", "50"]
        let json = try cli(near + ["--format", "json", "--min-confidence", "0.9"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let later = try #require(rows.first { $0["id"] as? String == "later" })
        #expect(later["precision"] as? String == "junction" && (later["confidence"] as? Double ?? 0) >= 0.9)
        #expect(rows.count == 6)   // the five feed positions always pass
        let csv = try cli(near + ["--format", "csv", "--precision", "town,road"])
        #expect(csv.stdout.hasPrefix("id,title,subtitle,latitude,longitude,distance_m,bearing_deg,pin_color,road,category,updated,expires,weblink,source,position_source,precision,confidence"))
        #expect(!csv.stdout.contains("later"))
        let cards = try cli(near + ["--format", "annotations", "--limit", "1", "--search", "unfall"])
        #expect(cards.stdout.contains("geocoded: junction, confidence 0.9"), Comment(rawValue: cards.stdout))
        for args in [["--min-confidence", "2"], ["--precision", "street"]] {
            let r = try cli(near + args)
            #expect(r.status == 64 && r.stderr.contains(args[0]), Comment(rawValue: r.stderr))
        }
    }

    /// West of Greenwich and south of the equator, typed as people type them (issue 15, point 1).
    @Test func negativeNumbersAreValuesNotOptions() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let london = try cli(["near", "--db", db, "--lat", "51.5", "--lon", "-0.12", "--limit", "1", "--format", "json"])
        #expect(london.status == 0, Comment(rawValue: london.stderr))
        let nearest = try #require((try JSONSerialization.jsonObject(with: Data(london.stdout.utf8)) as? [[String: Any]])?.first)
        // Cologne's incidents lie ~500 km east of London: had -0.12 been lost, this would not hold.
        #expect(((nearest["distanceMeters"] as? Double) ?? 0) > 400_000 && (nearest["bearingDegrees"] as? Double ?? 0) > 45)
        for args in [["near", "--lat", "-33.9", "--lon", "151.2"], ["bbox", "--west", "-10", "--south", "-34", "--east", "8", "--north", "52"],
                     ["near", "--lat", "50.94", "--lon", "6.96", "--since", "-3d"], ["near", "--lat", "50.94", "--lon", "6.96", "--until", "-1h"],
                     ["within", "--lat", "-33.9", "--lon", "-70.6", "--radius", "25km"], ["prune", "--expired", "--before", "-2d"]] {
            let r = try cli(args + ["--db", db])
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let missing = try cli(["near", "--db", db, "--lat", "--lon", "7"])
        #expect(missing.status == 64 && missing.stderr.contains("--lat"))
    }

    /// `-o out.geojson` writes GeoJSON, `-o out.csv` CSV, as ogr2ogr chooses (issue 15, point 5).
    @Test func theOutputFileExtensionChoosesTheFormat() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        let within = ["within", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "200km"]
        let cases: [(args: [String], file: String, starts: String)] = [
            (within, "out.geojson", "{\"type\":\"FeatureCollection\""), (within, "out.csv", "id,title,subtitle,latitude"),
            (within, "out.json", "["), (within, "out.geojsons", "\u{1E}{\"type\":\"Feature\""),
            (["export", "--db", db], "all.csv", "id,title,subtitle,latitude"), (["export", "--db", db], "all.geojson", "{\"type\":\"FeatureCollection\""),
            (within + ["--format", "json"], "forced.geojson", "["),
        ]
        for c in cases {
            let path = folder.appendingPathComponent(c.file).path
            let r = try cli(c.args + ["-o", path])
            #expect(r.status == 0, Comment(rawValue: r.stderr))
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            #expect(text.hasPrefix(c.starts), "\(c.file): \(text.prefix(60))")
        }
        if let ogrinfo = TestSupport.which("ogrinfo") {
            let r = try TestSupport.run(ogrinfo, ["-ro", "-so", "-al", folder.appendingPathComponent("out.geojson").path])
            #expect(r.status == 0 && r.stdout.contains("Feature Count"), Comment(rawValue: r.stdout + r.stderr))
        }
    }

    /// Filters as people type them (issue 15, point 9): any case, lists, repeats, German names, time words.
    @Test func filtersAcceptWhatPeopleType() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingestSample()
        func count(_ args: [String]) throws -> Int {
            let r = try cli(["export", "--db", db, "--format", "csv"] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
            return r.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count - 1
        }
        let a4 = try count(["--road", "A4"]), a45 = try count(["--road", "A45"])
        #expect(a4 > 0 && a45 > 0)
        #expect(try count(["--road", "a4"]) == a4 && count(["--road", "bab 4"]) == a4)
        #expect(try count(["--road", "A4,A45"]) == a4 + a45 && count(["--road", "A4", "--road", "a45"]) == a4 + a45)
        let accidents = try count(["--category", "accident"]), roadworks = try count(["--category", "roadworks"])
        #expect(try count(["--category", "Unfall"]) == accidents && count(["--category", "Baustelle"]) == roadworks)
        #expect(try count(["--category", "Unfall", "--category", "roadworks"]) == accidents + roadworks)
        #expect(try count(["--category", "wrong-way"]) == count(["--category", "wrong-way driver"]))
        // Mühlhausen typed without umlauts, either way.
        let muehlhausen = try count(["--search", "Mühlhausen"])
        let plain = try count(["--search", "muhlhausen"]), spelled = try count(["--search", "MUEHLHAUSEN"])
        #expect(muehlhausen > 0 && plain == muehlhausen && spelled == muehlhausen)
        for args in [["--since", "yesterday"], ["--since", "-1w"], ["--until", "today"], ["--format", "GeoJSON"]] {
            let r = try cli(["export", "--db", db] + args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        for args in [["--road", "A4,401;DROP"], ["--category", "Unfall,aliens"], ["--since", "last tuesday"]] {
            let r = try cli(["export", "--db", db] + args)
            #expect(r.status == 64 && r.stderr.contains(args[0]), "\(args): \(r.stderr)")
        }
    }
}
