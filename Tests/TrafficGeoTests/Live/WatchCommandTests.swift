import Foundation
import Testing
import TrafficGeoTestSupport

/// `trafficgeo watch`, `changes` and `ingest --snapshot` as a user types them, across restarts.
@Suite("watch and changes on the command line", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct WatchCommandTests {
    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = nil
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, environment: environment)
    }

    static func feature(_ id: String, _ title: String, lat: Double, lon: Double) -> String {
        """
        {"type":"Feature","id":"\(id)","geometry":{"type":"Point","coordinates":[\(lon),\(lat)]},"properties":{"title":"\(title)","road":"A4"}}
        """
    }

    static func collection(_ features: [String]) -> String {
        "{\"type\":\"FeatureCollection\",\"features\":[" + features.joined(separator: ",") + "]}"
    }

    static func events(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let incident = o["incident"] as? [String: Any] else { return nil }
            return "\(o["event"] as? String ?? "?") \(incident["id"] as? String ?? "?")"
        }.sorted()
    }

    @Test func aWatchReportsEnterChangeAndLeaveOnceEachAcrossRestarts() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let state = folder.appendingPathComponent("watch-state.json").path
        let execLog = folder.appendingPathComponent("exec.ndjson").path
        let feed = folder.appendingPathComponent("feed.geojson")
        // Köln; "far" is in Hamburg, outside 25 km.
        try Self.collection([Self.feature("a", "A4 : Koeln - Olpe", lat: 50.95, lon: 7.0),
                             Self.feature("b", "A3 : Koeln - Frankfurt", lat: 50.90, lon: 7.05),
                             Self.feature("far", "A1 : Hamburg", lat: 53.55, lon: 10.0)]).write(to: feed, atomically: true, encoding: .utf8)
        #expect(try cli(["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path]).status == 0)
        let watch = ["watch", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "25km", "--once", "--state", state,
                     "--format", "ndjson", "--exec", "cat >> '\(execLog)'"]
        let first = try cli(watch)
        #expect(first.status == 0, Comment(rawValue: first.stderr))
        #expect(Self.events(first.stdout) == ["enter a", "enter b"])

        // b changes, a vanishes from the snapshot, c appears nearby, far moves nearer but stays out.
        try Self.collection([Self.feature("b", "A3 : Koeln - Frankfurt, Stau", lat: 50.90, lon: 7.05),
                             Self.feature("c", "A57 : Koeln - Krefeld", lat: 51.0, lon: 6.9),
                             Self.feature("far", "A1 : Bremen", lat: 53.0, lon: 8.8)]).write(to: feed, atomically: true, encoding: .utf8)
        let ingest = try cli(["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path])
        #expect(ingest.stderr.contains("1 new, 2 updated") && ingest.stderr.contains("1 ended"), Comment(rawValue: ingest.stderr))
        let second = try cli(watch)
        #expect(Self.events(second.stdout) == ["change b", "enter c", "leave a"], Comment(rawValue: second.stdout + second.stderr))
        #expect(second.stdout.contains("\"reason\":\"ended\"") && second.stdout.contains("\"state\":\"ended\""), Comment(rawValue: second.stdout))
        let third = try cli(watch)
        #expect(third.stdout.isEmpty, "a restarted watch repeats nothing")
        #expect(third.stderr.contains("from seq"), Comment(rawValue: third.stderr))
        // --exec got every event, one JSON each.
        #expect(Self.events(try String(contentsOfFile: execLog, encoding: .utf8)) == ["change b", "enter a", "enter b", "enter c", "leave a"])

        // The change feed as a script reads it, and the active view without the ended one.
        let changes = try cli(["changes", "--db", db, "--since", "3"])
        let lines = changes.stdout.split(separator: "\n")
        #expect(lines.count == 4, Comment(rawValue: changes.stdout))
        #expect(changes.stderr.contains("up to seq 7 (next: --since 7)"), Comment(rawValue: changes.stderr))
        let kinds = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["change"] as? String }
        #expect(kinds == ["new", "updated", "updated", "ended"])
        let sequence = try cli(["changes", "--db", db, "--format", "geojsonseq", "--road", "A4"])
        #expect(sequence.stdout.hasPrefix("\u{1E}{\"type\":\"Feature\""), Comment(rawValue: sequence.stdout))
        let active = try cli(["bbox", "--db", db, "--west", "-180", "--south", "-90", "--east", "180", "--north", "90", "--active-at", "now", "--format", "json"])
        #expect(!active.stdout.contains("\"id\":\"a\"") && active.stdout.contains("\"id\":\"c\""), Comment(rawValue: active.stdout))
        let stats = try cli(["stats", "--db", db])
        #expect(stats.stdout.contains("ended: 1") && stats.stdout.contains("feed health:") && stats.stdout.contains("desk: last success"),
                Comment(rawValue: stats.stdout))
        let pruned = try cli(["prune", "--db", db, "--ended", "--before", "+1m"])
        #expect(pruned.stdout.isEmpty && pruned.stderr.contains("pruned 1 ended incidents"), Comment(rawValue: pruned.stdout + pruned.stderr))
    }

    @Test func badWatchInputSaysWhatToDo() throws {
        let none = try cli(["watch", "--once"])
        #expect(none.status == 64 && none.stderr.contains("Say where to watch"), Comment(rawValue: none.stderr))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try TestSupport.write("[{\"name\": \"x\", \"radius\": \"5km\"}]", name: "w.json", in: folder)
        let bad = try cli(["watch", "--once", "--watches", file.path, "--db", folder.appendingPathComponent("db").path])
        #expect(bad.status == 64 && bad.stderr.contains("watch 'x': radius needs a centre"), Comment(rawValue: bad.stderr))
        let ntfy = try cli(["watch", "--once", "--lat", "50", "--lon", "7", "--ntfy", "https://ntfy.sh/"])
        #expect(ntfy.status == 64 && ntfy.stderr.contains("names no topic"), Comment(rawValue: ntfy.stderr))
    }

    /// Killed in the middle of its deliveries 20 times (10 during the first comparison, 10
    /// during change-feed events): nothing is missed, and every repeat carries the key of the
    /// event it repeats (deliveries are at least once; docs/live.md).
    @Test(.timeLimit(.minutes(4))) func killedMidDeliveryMissesNothingAndEveryRepeatHasItsKey() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let log = folder.appendingPathComponent("delivered.ndjson").path
        let feed = folder.appendingPathComponent("feed.geojson")
        func write(suffix: String) throws {
            let features = (0..<40).map { i in
                Self.feature("k\(i)", "A4 : Koeln - Olpe" + (i < 20 ? suffix : ""), lat: 50.9 + Double(i) * 0.002, lon: 6.95 + Double(i) * 0.002)
            }
            try Self.collection(features).write(to: feed, atomically: true, encoding: .utf8)
        }
        try write(suffix: "")
        #expect(try cli(["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path]).status == 0)
        let watch = ["watch", "--db", db, "--lat", "50.94", "--lon", "6.96", "--radius", "25km", "--once", "--quiet",
                     "--state", folder.appendingPathComponent("state.json").path, "--exec", "sleep 0.03; cat >> '\(log)'"]
        var random = SplitMix64(seed: 20)
        func killedRounds(_ count: Int) throws {
            for _ in 0..<count {
                let process = try TestSupport.launch(TestSupport.cliExecutable!, watch)
                usleep(UInt32(150_000 + random.next() % 750_000))
                TestSupport.stop(process)
            }
            let finished = try cli(watch)
            #expect(finished.status == 0, Comment(rawValue: finished.stderr))
        }
        try killedRounds(10)
        try write(suffix: ", Stau")
        let ingest = try cli(["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path])
        #expect(ingest.stderr.contains("20 updated"), Comment(rawValue: ingest.stderr))
        try killedRounds(10)

        let deliveries = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line -> (key: String, what: String)? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let key = o["key"] as? String,
                  let incident = o["incident"] as? [String: Any] else { return nil }
            return (key, "\(o["event"] as? String ?? "?") \(incident["id"] as? String ?? "?") \(incident["title"] as? String ?? "?")")
        }
        let byKey = Dictionary(grouping: deliveries, by: \.key)
        #expect(byKey.values.allSatisfy { Set($0.map(\.what)).count == 1 }, "a key names one event")
        let events = Set(deliveries.map(\.what))
        #expect(byKey.count == events.count, "every event has one key")
        let expected = Set((0..<40).map { "enter k\($0) A4 : Koeln - Olpe" } + (0..<20).map { "change k\($0) A4 : Koeln - Olpe, Stau" })
        #expect(events == expected, "missing: \(expected.subtracting(events).sorted().prefix(5)); unexpected: \(events.subtracting(expected).sorted().prefix(5))")
        #expect(deliveries.count > expected.count, "killed mid-delivery, a watch repeats some: \(deliveries.count) deliveries of \(expected.count) events")
    }
}

