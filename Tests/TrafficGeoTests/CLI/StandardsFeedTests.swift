import AsyncHTTPClient
import Foundation
import Testing
import TrafficGeoStore
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoTestSupport

/// The road authorities' standards (DATEX II, WZDx, Open511) as a user reads them: `trafficgeo
/// ingest FILE|URL` through the command line (scripts/test runs this suite on the release binary
/// too), every incident compared with an independent reading of the same file
/// (scripts/standards-oracle.py, Python's own XML and JSON parsers).
/// One test at a time: each runs dozens of processes, and beside the rest of the suite that load
/// made timing tests elsewhere (the geocoder's rate limit) see late arrivals.
@Suite("Official feeds: DATEX II, WZDx, Open511", .serialized, .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct StandardsFeedTests {
    static func cli(_ arguments: [String], folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await TestSupport.runCLI(arguments, folder: folder)
    }

    static var standardsFolder: URL? {
        TestSupport.sharedFolder.map { $0.appendingPathComponent("data/standards") }
    }

    /// What the store answers for every incident: `export` of all, as annotations.
    /// Every report the store holds (as each feed gave it), by feed id; of one source if given.
    static func exported(db: String, folder: URL, source: String? = nil) async throws -> [String: [String: Any]] {
        let out = try await cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json"], folder: folder)
        #expect(out.status == 0, Comment(rawValue: out.stderr))
        let list = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []
        var byID: [String: [String: Any]] = [:]
        for item in list where source == nil || item["source"] as? String == source { byID[item["id"] as! String] = item }
        return byID
    }

    /// The source an ingest's summary says it filed the feed under ("(datex2, source gb/NTIS)"),
    /// else the file's name.
    static func filedSource(_ summary: String, else name: String) -> String {
        guard let r = summary.range(of: ", source ") else { return name }
        return String(summary[r.upperBound...].prefix { $0 != ")" })
    }

    /// The features `serve` answers for an items query (every report), nil when the answer holds
    /// none (not a feature collection).
    static func servedFeatures(_ server: ServeLiveTests.ServeProcess, _ query: String, limit: Int = 1000) async throws -> [[String: Any]]? {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: server.base + "/collections/incidents/items?reports=true&limit=\(limit)&" + query),
                                                           timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 256 << 20)
        #expect(response.status == .ok, "\(query): \(response.status)")
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return object?["features"] as? [[String: Any]]
    }

    static func date(_ value: Any?) -> Double? {
        guard let text = value as? String else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return d.timeIntervalSince1970 }
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text)?.timeIntervalSince1970
    }

    static func oracle(_ file: URL, extra: [String] = []) throws -> [[String: Any]] {
        let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/standards-oracle.py").path
        let out = try TestSupport.run("/usr/bin/env", ["python3", script, file.path] + extra)
        #expect(out.status == 0, Comment(rawValue: out.stderr))
        return out.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Every incident the store holds agrees with the independent reading: position (to the
    /// 6 decimals outputs write), category, validity start and end, ended.
    /// `others`: the source may hold other documents' reports too (one publisher's two feeds in
    /// one database), so only the file's own are compared.
    static func compare(_ stored: [String: [String: Any]], with expected: [[String: Any]], file: String, others: Bool = false) {
        #expect(others ? stored.count >= expected.count : stored.count == expected.count, "\(file): \(stored.count) stored, \(expected.count) in the file")
        for want in expected {
            let id = want["id"] as! String
            guard let got = stored[id] else {
                Issue.record("\(file): \(id) was not stored")
                continue
            }
            if let position = want["position"] as? [Double] {
                let c = got["coordinate"] as? [String: Double]
                #expect(abs((c?["latitude"] ?? 999) - position[0]) < 1.5e-6 && abs((c?["longitude"] ?? 999) - position[1]) < 1.5e-6,
                        "\(file) \(id): at \(String(describing: c)), the file says \(position)")
            } else {
                #expect(got["coordinate"] is NSNull, "\(file) \(id): placed at \(String(describing: got["coordinate"])) but the file gives no coordinates")
            }
            #expect(got["category"] as? String == want["category"] as? String, "\(file) \(id): category \(String(describing: got["category"])), expected \(String(describing: want["category"]))")
            for (mine, theirs) in [("validFrom", "valid_from"), ("expires", "expires")] {
                let a = date(got[mine]), b = want[theirs] as? Double
                #expect((a == nil) == (b == nil) && abs((a ?? 0) - (b ?? 0)) < 0.002, "\(file) \(id): \(mine) \(String(describing: got[mine])), the file says \(String(describing: b))")
            }
            #expect((got["state"] as? String == "ended") == (want["ended"] as? Bool == true),
                    "\(file) \(id): state \(String(describing: got["state"])), the file says ended=\(String(describing: want["ended"]))")
        }
    }

    @Test(.enabled(if: standardsFolder != nil, "../shared/data/standards is not there"),
          // A hang guard: some 60 ingests and exports of the debug build, beside 3 other tests, take 4–5 minutes.
          .timeLimit(.minutes(10)))
    func everyPublishedSampleIngestsAsTypedAndMatchesAnIndependentReading() async throws {
        try await everyPublishedSample(database: nil)
    }

    /// The same into one PostGIS database: the stores agree on every incident.
    @Test(.enabled(if: standardsFolder != nil, "../shared/data/standards is not there"),
          .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason), .timeLimit(.minutes(10)))
    func everyPublishedSampleOnPostGIS() async throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        try await everyPublishedSample(database: url)
    }

    private func everyPublishedSample(database: String?) async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [URL] = []
        for sub in ["datex2", "wzdx", "open511"] {
            let dir = Self.standardsFolder!.appendingPathComponent(sub)
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() where name.hasSuffix(".xml") || name.hasSuffix(".json") || name.hasSuffix(".geojson") {
                files.append(dir.appendingPathComponent(name))
            }
        }
        #expect(files.count >= 14)
        let expectedFormat = ["datex2": "datex2", "wzdx": "wzdx", "open511": "open511"]
        for (n, file) in files.enumerated() {
            let db = database ?? folder.appendingPathComponent("s\(n).sqlite").path
            let out = try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder)
            #expect(out.status == 0, "\(file.lastPathComponent): \(out.stderr)")
            let format = expectedFormat[file.deletingLastPathComponent().lastPathComponent]!
            #expect(out.stderr.contains("(\(format)"), "\(file.lastPathComponent) detected as \(format): \(out.stderr)")
            let source = Self.filedSource(out.stderr, else: file.lastPathComponent)
            let stored = try await Self.exported(db: db, folder: folder, source: source)
            let expected = try Self.oracle(file)
            Self.compare(stored, with: expected, file: file.lastPathComponent, others: database != nil)
            try await Self.inEffect(expected, db: db, source: source, folder: folder, file: file.lastPathComponent)
            // An export without --include-unlocated says what it left out.
            let unplaced = expected.filter { $0["position"] == nil || $0["position"] is NSNull }.count
            if database == nil, unplaced > 0 {
                let plain = try await Self.cli(["export", "--db", db, "--reports", "--format", "json"], folder: folder)
                #expect(plain.stderr.contains("without a position left out"), "\(file.lastPathComponent): \(plain.stderr)")
            }
            // `stats` counts each event once, in one state.
            let stats = try await Self.cli(["stats", "--db", db, "--format", "json"], folder: folder)
            let counts = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any] ?? [:]
            let states = ["active", "upcoming", "expired", "ended", "unconfirmed"].map { counts[$0] as? Int ?? -1 }
            #expect(states.allSatisfy { $0 >= 0 } && states.reduce(0, +) == counts["incidents"] as? Int,
                    "\(file.lastPathComponent): states \(states) do not add up to \(String(describing: counts["incidents"]))")
        }
    }

    /// Every published document in one store, asked through the command line and `serve` alike:
    /// a road filter on every road a record names (as the oracle reads the file: DATEX II
    /// `roadNumber`, WZDx `road_names`, Open511 `roads`; a WZDx zone on I-80 and I-35 on either),
    /// with the publication's country where it names one (and not with another's), and
    /// `--active-at` / `active-at=` inside records' validity.
    @Test(.enabled(if: standardsFolder != nil, "../shared/data/standards is not there"), .timeLimit(.minutes(3)))
    func everyDocumentsRoadsAndTimesThroughTheCommandLineAndServe() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("all.sqlite").path
        var documents: [(file: URL, source: String, expected: [[String: Any]])] = []
        for sub in ["datex2", "wzdx", "open511"] {
            let dir = Self.standardsFolder!.appendingPathComponent(sub)
            for name in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() where name.hasSuffix(".xml") || name.hasSuffix(".json") || name.hasSuffix(".geojson") {
                let file = dir.appendingPathComponent(name)
                let out = try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder)
                #expect(out.status == 0, "\(name): \(out.stderr)")
                documents.append((file, Self.filedSource(out.stderr, else: name), try Self.oracle(file)))
            }
        }
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        #expect(server.port > 0, Comment(rawValue: server.stderr))
        // Answers as (source, id) pairs.
        func byCLI(_ arguments: [String]) async throws -> Set<String> {
            let out = try await Self.cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json"] + arguments, folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return Set((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []).map { "\($0["source"] ?? "") \($0["id"] ?? "")" })
        }
        func byServe(_ query: String) async throws -> Set<String> {
            Set((try await Self.servedFeatures(server, query) ?? []).map { feature in
                let p = feature["properties"] as? [String: Any] ?? [:]
                return "\(p["source"] ?? "") \(p["id"] ?? "")"
            })
        }
        var roadsAsked = 0
        for (file, source, expected) in documents {
            let name = file.lastPathComponent
            func ours(_ answers: Set<String>) -> Set<String> { answers.filter { $0.hasPrefix(source + " ") } }
            var roads: Set<String> = []
            for record in expected { for raw in record["roads"] as? [String] ?? [] { if let c = RoadCondition(raw) { roads.insert(c.road) } } }
            for road in roads.sorted() {
                roadsAsked += 1
                let inFile = Set(expected.filter { r in (r["roads"] as? [String] ?? []).contains { RoadCondition($0)?.road == road } }
                    .map { "\(source) \($0["id"] as! String)" })
                let cli = ours(try await byCLI(["--road", road])), served = ours(try await byServe("road=" + road))
                #expect(cli == inFile && served == inFile, "\(name) --road \(road): file \(inFile.count), CLI \(cli.count), serve \(served.count)")
                if let country = expected.first?["country"] as? String {
                    let own = ours(try await byCLI(["--road", "\(country):\(road)"]))
                    let other = ours(try await byServe("road=" + (country == "de" ? "fr" : "de") + ":" + road))
                    #expect(own == inFile && other.isEmpty, "\(name) \(country):\(road): \(own.count) of \(inFile.count); another country's: \(other.count)")
                }
            }
            // In effect at times inside records' validity, through serve as through the CLI.
            let spans = expected.compactMap { r -> Double? in
                guard let from = r["valid_from"] as? Double, r["ended"] as? Bool != true else { return nil }
                let to = r["expires"] as? Double ?? from + 7200
                return to > from ? from + (to - from) / 2 : nil
            }
            for t in Set(spans).sorted().prefix(2) {
                let at = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t.rounded(.down)))
                let cli = ours(try await byCLI(["--active-at", at])), served = ours(try await byServe("active-at=" + at))
                #expect(!cli.isEmpty && cli == served, "\(name) at \(at): CLI \(cli.count), serve \(served.count)")
            }
        }
        #expect(roadsAsked >= 15, "roads asked: \(roadsAsked)")
    }

    /// Colorado's real WZDx feed asked as a desk asks it, through the command line and `serve`
    /// alike: a road filter on every road `stats` lists, a search for a place named in the
    /// records' words, and `--active-at` / `active-at=` inside their validity, each counted
    /// against the file as this test reads it (JSONSerialization, not the feed reader).
    @Test(.enabled(if: standardsFolder != nil, "../shared/data/standards is not there"), .timeLimit(.minutes(3)))
    func roadsWordsAndTimesOfARealFeedThroughTheCommandLineAndServe() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = Self.standardsFolder!.appendingPathComponent("wzdx/cdot-production-2023.json")
        let db = folder.appendingPathComponent("co.sqlite").path
        #expect(try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder).status == 0)
        // The file, read here.
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any] ?? [:]
        let features = (document["features"] as? [[String: Any]] ?? []).map { $0["properties"] as? [String: Any] ?? [:] }
        func core(_ p: [String: Any]) -> [String: Any] { p["core_details"] as? [String: Any] ?? [:] }
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        #expect(server.port > 0, Comment(rawValue: server.stderr))
        func cliCount(_ arguments: [String]) async throws -> Int {
            let out = try await Self.cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json"] + arguments, folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [Any])?.count ?? -1
        }
        func serveCount(_ query: String) async throws -> Int { try await Self.servedFeatures(server, query)?.count ?? -1 }
        func answers(_ arguments: [String]) async throws -> [[String: Any]] {
            let out = try await Self.cli(arguments + ["--db", db, "--format", "json"], folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []
        }
        // Every road `stats` lists: the count it gives, the file's, the command line's and serve's.
        let stats = try JSONSerialization.jsonObject(with: Data(try await Self.cli(["stats", "--db", db, "--format", "json"], folder: folder).stdout.utf8)) as? [String: Any]
        let roads = (stats?["roads_top10"] as? [[String: Any]] ?? []).compactMap { r -> (String, Int)? in (r["name"] as? String).flatMap { n in (r["count"] as? Int).map { (n, $0) } } }
        #expect(roads.count == 10)
        for (road, listed) in roads {
            let inFile = features.filter { (core($0)["road_names"] as? [String])?.first == road }.count
            let byCLI = try await cliCount(["--road", road]), byServe = try await serveCount("road=" + road)
            #expect(inFile == listed && byCLI == listed && byServe == listed, "\(road): stats \(listed), file \(inFile), CLI \(byCLI), serve \(byServe)")
            // Through the spatial index too: a box round Colorado, and a circle round Denver
            // (counted here by the first point of each zone, as the store places it).
            let inBox = try await answers(["bbox", "--bbox", "-110,36,-101,42", "--road", road]).count
            let boxServe = try await serveCount("bbox=-110,36,-101,42&road=" + road)
            #expect(inBox == listed && boxServe == listed, "\(road) in the box: CLI \(inBox), serve \(boxServe) of \(listed)")
            let denver = ["within", "--lat", "39.73915", "--lon", "-104.9847", "--radius", "60km"]
            let nearOnRoad = try await answers(denver).filter { $0["road"] as? String == road }.count
            let circle = try await answers(denver + ["--road", road]).count
            #expect(circle == nearOnRoad, "\(road) within 60 km of Denver: \(circle), without the filter \(nearOnRoad)")
        }
        // A place named in the words.
        for place in ["Alameda", "Empire", "Woodland Park", "Kit Carson"] {
            let inFile = features.filter { ((core($0)["description"] as? String) ?? "").range(of: place, options: .caseInsensitive) != nil }.count
            let byCLI = try await cliCount(["--search", place]), byServe = try await serveCount("q=" + place.replacingOccurrences(of: " ", with: "%20"))
            #expect(inFile > 0 && byCLI >= inFile && byServe == byCLI, "\(place): file \(inFile), CLI \(byCLI), serve \(byServe)")
        }
        // In effect at a time: start_date ≤ t < end_date.
        let formatter = ISO8601DateFormatter()
        for at in ["2025-08-05T00:00:00Z", "2025-08-12T00:00:00Z", "2025-08-14T12:00:00Z"] {
            let t = formatter.date(from: at)!
            let inFile = features.filter { p in
                guard let start = (p["start_date"] as? String).flatMap(formatter.date(from:)), start <= t else { return false }
                return (p["end_date"] as? String).flatMap(formatter.date(from:)).map { t < $0 } ?? true
            }.count
            let byCLI = try await cliCount(["--active-at", at]), byServe = try await serveCount("active-at=" + at)
            #expect(inFile > 0 && byCLI == inFile && byServe == inFile, "at \(at): file \(inFile), CLI \(byCLI), serve \(byServe)")
        }
    }

    /// The Autobahn's real warnings (2,000 of `../shared/data/autobahn`) read once from a file, as
    /// a desk asks them, through the command line and `serve` alike, each counted against the
    /// file as Python's csv module reads it: a road filter on every road `stats` lists, a search
    /// for a junction named in the words, and `--active-at` inside each warning's time — while
    /// "now", two years on, none of them is in effect (they give no end: unconfirmed).
    @Test(.enabled(if: TestSupport.sharedFolder != nil, "../shared/data/autobahn is not there"), .timeLimit(.minutes(3)))
    func autobahnWarningsReadOnceFromAFileThroughTheCommandLineAndServe() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = TestSupport.sharedFolder!.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path
        let file = folder.appendingPathComponent("warnings.csv")
        #expect(try TestSupport.run("/bin/sh", ["-c", "xz -dc \"$0\" | head -n 2001 > \"$1\"", source, file.path]).status == 0)
        // The file, read here: id, road, start (seconds), words.
        let reader = """
            import csv, json, sys, datetime
            for r in csv.DictReader(open(sys.argv[1], encoding="utf-8")):
                t = r["startTimestamp"]
                d = datetime.datetime.fromisoformat(t) if "T" in t else datetime.datetime.fromisoformat(t + "T00:00:00+00:00")
                if d.tzinfo is None: d = d.replace(tzinfo=datetime.timezone.utc)
                print(json.dumps({"id": r["identifier"], "road": r["road"], "start": d.timestamp(),
                                  "words": " ".join([r["title"], r["subtitle"]])}))
            """
        let read = try TestSupport.run("/usr/bin/env", ["python3", "-c", reader, file.path])
        #expect(read.status == 0, Comment(rawValue: read.stderr))
        let rows = read.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(rows.count == 2000)
        let db = folder.appendingPathComponent("a.sqlite").path
        #expect(try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder).status == 0)
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        #expect(server.port > 0, Comment(rawValue: server.stderr))
        func cliIDs(_ arguments: [String]) async throws -> Set<String> {
            let out = try await Self.cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json"] + arguments, folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            return Set((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
        }
        func serveCount(_ query: String) async throws -> Int { try await Self.servedFeatures(server, query, limit: 10_000)?.count ?? -1 }
        // Every road `stats` lists.
        let statsOut = try await Self.cli(["stats", "--db", db, "--format", "json"], folder: folder)
        let stats = try JSONSerialization.jsonObject(with: Data(statsOut.stdout.utf8)) as? [String: Any]
        let roads = (stats?["roads_top10"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(roads.count == 10)
        for road in roads {
            let inFile = Set(rows.filter { $0["road"] as? String == road }.map { $0["id"] as! String })
            let byCLI = try await cliIDs(["--road", road]), byServe = try await serveCount("road=" + road)
            #expect(!inFile.isEmpty && byCLI == inFile && byServe == inFile.count, "\(road): file \(inFile.count), CLI \(byCLI.count), serve \(byServe)")
        }
        // A junction named in the words.
        for junction in ["Kreuz Köln-Ost", "Frankfurter Kreuz", "Dreieck Heumar"] {
            let inFile = rows.filter { ($0["words"] as? String ?? "").localizedCaseInsensitiveContains(junction) }.count
            let byCLI = try await cliIDs(["--search", junction]).count
            let byServe = try await serveCount("q=" + junction.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)
            #expect(byCLI >= inFile && byServe == byCLI, "\(junction): file \(inFile), CLI \(byCLI), serve \(byServe)")
        }
        // Now, two years on: nothing, and stats says why; inside their time: each as the file says.
        let nowByCLI = try await cliIDs(["--active-at", "now"]), nowByServe = try await serveCount("active-at=now")
        #expect(nowByCLI.isEmpty && nowByServe == 0, "now: CLI \(nowByCLI.count), serve \(nowByServe)")
        // An empty answer says why; without the limit they are in effect, and their state says so.
        let empty = try await Self.cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--active-at", "now"], folder: folder)
        #expect(empty.status == 0 && empty.stderr.contains("none was in effect"), Comment(rawValue: empty.stderr))
        let forever = try await Self.cli(["near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--active-at", "now", "--unconfirmed-after", "never",
                                          "--format", "json"], folder: folder)
        let states = Set((try JSONSerialization.jsonObject(with: Data(forever.stdout.utf8)) as? [[String: Any]] ?? []).compactMap { $0["state"] as? String })
        #expect(states == ["active"], "\(states)")
        // The export's "NA" is no value.
        let all = try await Self.cli(["export", "--db", db, "--format", "json"], folder: folder)
        #expect(all.status == 0 && !all.stdout.contains(#""delayMinutes":"NA""#))
        #expect(stats?["active"] as? Int == 0 && (stats?["unconfirmed"] as? Int ?? 0) > 0, Comment(rawValue: statsOut.stdout))
        let week = 7 * 86_400.0
        let starts = Set(rows.compactMap { $0["start"] as? Double }).sorted()
        for start in [starts.first!, starts[starts.count / 2], starts.last!] {
            let t = start + 3600
            let at = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t))
            let inFile = Set(rows.filter { r in
                let s = r["start"] as! Double
                return s <= t && t - week <= s
            }.map { $0["id"] as! String })
            let byCLI = try await cliIDs(["--active-at", at]), byServe = try await serveCount("active-at=" + at)
            #expect(!inFile.isEmpty && byCLI == inFile && byServe == inFile.count, "at \(at): file \(inFile.count), CLI \(byCLI.count), serve \(byServe)")
        }
    }

    /// `--active-at` inside records' validity as the file states it (the oracle's valid_from and
    /// expires): every record in effect then is answered, and every answered record with a stated
    /// start had begun and not yet expired (a record updated after it started stays in effect).
    static func inEffect(_ expected: [[String: Any]], db: String, source: String, folder: URL, file: String) async throws {
        let spans = expected.compactMap { r -> Double? in
            guard let from = r["valid_from"] as? Double, r["ended"] as? Bool != true else { return nil }
            let to = r["expires"] as? Double ?? from + 7200
            return to > from ? from + (to - from) / 2 : nil
        }
        for t in Set(spans).sorted().prefix(3) {
            let at = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t.rounded(.down)))
            let out = try await cli(["export", "--db", db, "--include-unlocated", "--reports", "--format", "json", "--active-at", at], folder: folder)
            #expect(out.status == 0, Comment(rawValue: out.stderr))
            let answered = (try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? [])
                .filter { $0["source"] as? String == source }
            let ids = Set(answered.compactMap { $0["id"] as? String })
            let at0 = t.rounded(.down)
            for r in expected {
                guard let from = r["valid_from"] as? Double, r["ended"] as? Bool != true else { continue }
                let inside = from.rounded(.down) <= at0 && (r["expires"] as? Double).map { at0 < $0 } ?? true
                let id = r["id"] as! String
                if inside { #expect(ids.contains(id), "\(file) at \(at): \(id) is in effect (from \(from) to \(String(describing: r["expires"]))) but not answered") }
                else { #expect(!ids.contains(id), "\(file) at \(at): \(id) is not in effect (from \(from) to \(String(describing: r["expires"]))) but answered") }
            }
        }
    }
}
