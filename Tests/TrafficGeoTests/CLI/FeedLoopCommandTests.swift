import Foundation
import GRDB
import Testing
import TrafficGeoSupport
@testable import TrafficGeo

/// `trafficgeo ingest --every` against a loopback server that fails, hangs and recovers: the
/// waits grow after failures (backoff), feed health records them, the loop reads again once the
/// server is back, and SIGTERM in the middle of a large write ends it with exit 0 and the store
/// whole. scripts/test runs this suite on the release binary too.
@Suite("The feed loop (ingest --every)", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct FeedLoopCommandTests {
    /// A GeoJSON feed of `count` incidents along the A4, ids starting at `first`.
    static func feed(count: Int) -> String {
        WatchCommandTests.collection((0..<count).map { i in
            WatchCommandTests.feature("loop-\(i)", "A4 : Köln - Olpe \(i)", lat: 50.9 + Double(i % 1000) * 0.0001, lon: 7.0 + Double(i / 1000) * 0.001)
        })
    }

    /// The `trafficgeo` process with its stderr in a file.
    final class LoopProcess: @unchecked Sendable {
        let process = Process()
        let log: URL

        init(_ arguments: [String], folder: URL) throws {
            log = folder.appendingPathComponent("loop.log")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            process.executableURL = TestSupport.cliExecutable!
            process.arguments = arguments
            var environment = ProcessInfo.processInfo.environment
            environment["TRAFFICGEO_DB"] = nil
            environment["XDG_CACHE_HOME"] = folder.appendingPathComponent("cache").path
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
        }

        var stderr: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// Waits, without holding a thread, until `condition` or the deadline.
        func wait(seconds: Double, until condition: () -> Bool) async throws -> Bool {
            try await TestSupport.waitUntil(seconds: seconds, condition)
        }
    }

    static func health(db: String, folder: URL) async throws -> [String: Any] {
        let stats = try await TestSupport.runCLI(["stats", "--db", db, "--format", "json"], folder: folder)
        let json = (try? JSONSerialization.jsonObject(with: Data(stats.stdout.utf8))) as? [String: Any] ?? [:]
        return (json["feed_health"] as? [[String: Any]])?.first ?? [:]
    }

    /// When the test's server recovers (the first request number that is answered).
    final class Recovery: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int?
        var from: Int? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func backsOffFromAFailingServerRecordsItAndStopsCleanlyOnSIGTERM() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let small = Self.feed(count: 300), large = Self.feed(count: 12_300)
        // 503s until the test has looked at feed health; then a hang (the loop's download times
        // out), the feed, and from then on a large feed whose write the SIGTERM falls into.
        let recovery = Recovery()
        let server = try LoopbackHTTPServer { _, n in
            guard let from = recovery.from, n >= from else { return .text("try later", status: 503) }
            switch n - from {
            case 0: return .hang
            case 1: return .json(small)
            default: return .json(large)    // the same 300 and 12,000 more
            }
        }
        defer { server.shutdown() }
        let db = folder.appendingPathComponent("loop.sqlite").path
        let url = server.baseURL.absoluteString + "/feed.geojson"
        let loop = try LoopProcess(["ingest", "--db", db, "--every", "1s", "--max-backoff", "4s", "--fetch-timeout", "1s",
                                    "--log-format", "json", url], folder: folder)
        defer { TestSupport.stop(loop.process) }

        // Failing: feed health has recorded every failure so far.
        #expect(try await loop.wait(seconds: 30) { server.requests.count >= 4 })
        let failing = try await Self.health(db: db, folder: folder)
        #expect((failing["failure_streak"] as? Int ?? 0) >= 3, "\(failing)")
        #expect((failing["last_error"] as? String)?.contains("503") == true, "\(failing)")
        #expect(failing["last_success"] is NSNull, "\(failing)")

        // Backoff: after failures 1, 2 and 3 the loop waited within [½, 1] × 1 s, 2 s and 4 s
        // (--every 1s would have asked every second). A wait is never shorter; a busy machine
        // may make it longer, hence the slack above.
        let arrivals = server.requests.map(\.arrival)
        let gaps = zip(arrivals, arrivals.dropFirst()).map { ($1 - $0).inSeconds }
        let slack = 3.0
        #expect(gaps[0] >= 0.45 && gaps[0] <= 1 + slack, "\(gaps)")
        #expect(gaps[1] >= 0.95 && gaps[1] <= 2 + slack, "\(gaps)")
        #expect(gaps[2] >= 1.95 && gaps[2] <= 4 + slack, "\(gaps)")

        // The server comes back: the hang, then the feed.
        let from = server.requests.count
        recovery.from = from
        #expect(try await loop.wait(seconds: 30) { server.requests.count >= from + 2 })
        #expect(try await loop.wait(seconds: 20) { loop.stderr.contains("300 new") }, "\(loop.stderr)")
        let recovered = try await Self.health(db: db, folder: folder)
        #expect(recovered["failure_streak"] as? Int == 0 && recovered["last_success"] is String, "\(recovered)")
        #expect((recovered["last_error"] as? String)?.contains("in time") == true, "the hang timed out: \(recovered)")
        let hang = server.requests.map(\.arrival)
        #expect((hang[from + 1] - hang[from]).inSeconds >= 1.9, "the time limit (1 s), then at least half the cap")

        // SIGTERM as the large feed arrives: the loop ends with 0, and the store holds the feed
        // wholly or not at all.
        #expect(try await loop.wait(seconds: 20) { server.requests.count >= from + 3 })
        try await Task.sleep(for: .milliseconds(150))
        kill(loop.process.processIdentifier, SIGTERM)
        #expect(try await loop.wait(seconds: 30) { !loop.process.isRunning }, "the loop stopped after SIGTERM")
        #expect(loop.process.terminationStatus == 0, "\(loop.stderr)")
        let queue = try DatabaseQueue(path: db)
        let (count, integrity) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents") ?? -1, try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "")
        }
        #expect(integrity == "ok")
        #expect(count == 300 || count == 12_300, "either before the large feed or after it, never between: \(count)")
        // A download the stop cut short is no failure of the source.
        let stopped = try await Self.health(db: db, folder: folder)
        #expect(stopped["failure_streak"] as? Int == 0, "\(stopped)")

        // Every stderr line is a JSON object with time, level and message.
        let lines = loop.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            #expect(object?["time"] is String && object?["level"] is String && object?["message"] is String, "\(line)")
        }
        #expect(loop.stderr.contains(#""level":"warning""#) && loop.stderr.contains("in a row"))
    }

    /// An Atom feed is filed under its own id, not its URL: its failures must be recorded under
    /// the same name, or feed health, /ready and /metrics would show one feed as two sources.
    /// And each read of the loop is the feed's snapshot: an entry it no longer lists ends.
    @Test(.timeLimit(.minutes(1)))
    func aFeedsFailuresAreRecordedUnderTheNameItsReadsAreFiledUnder() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let atom = try String(contentsOf: TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml"), encoding: .utf8)
        // The feed, then the feed without its first entry (a loop's read is a snapshot: that
        // incident ends), then failures.
        let first = atom.range(of: "<entry>")!.lowerBound..<atom.range(of: "</entry>")!.upperBound
        let shorter = atom.replacingCharacters(in: first, with: "")
        let server = try LoopbackHTTPServer { _, n in
            n < 2 ? .respond(status: 200, headers: [("Content-Type", "application/atom+xml")], body: n == 0 ? atom : shorter) : .text("down", status: 502)
        }
        defer { server.shutdown() }
        let db = folder.appendingPathComponent("named.sqlite").path
        let loop = try LoopProcess(["ingest", "--db", db, "--every", "1s", server.baseURL.absoluteString + "/lmst.xml"], folder: folder)
        defer { TestSupport.stop(loop.process) }
        #expect(try await loop.wait(seconds: 20) { server.requests.count >= 4 })
        kill(loop.process.processIdentifier, SIGTERM)
        #expect(try await loop.wait(seconds: 20) { !loop.process.isRunning })
        #expect(loop.process.terminationStatus == 0, "\(loop.stderr)")
        let stats = try await TestSupport.runCLI(["stats", "--db", db, "--format", "json"], folder: folder)
        let json = (try? JSONSerialization.jsonObject(with: Data(stats.stdout.utf8))) as? [String: Any] ?? [:]
        let health = json["feed_health"] as? [[String: Any]] ?? []
        #expect(health.map { $0["source"] as? String } == ["https://traffic.example/lmst.de_DE.xml"], "one source: \(health)")
        #expect((health.first?["failure_streak"] as? Int ?? 0) >= 1 && health.first?["last_success"] is String, "\(health)")
        #expect(json["ended"] as? Int == 1 && json["incidents"] as? Int == 12, "the entry the second read no longer listed ended: \(stats.stdout)")
    }

    /// A loop waiting an hour for its next read stops at once on the first signal, and says so
    /// before its last line: the stop no longer waits for a poll, so the notice is printed
    /// before the stop is requested (a trial saw "loop stopped" first, or no notice, 1 in 5).
    @Test(.timeLimit(.minutes(2)))
    func aStopIsAnnouncedBeforeTheLoopEnds() async throws {
        let feed = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path
        for (round, signal) in [SIGINT, SIGTERM, SIGINT, SIGTERM, SIGINT].enumerated() {
            let folder = TestSupport.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let loop = try LoopProcess(["ingest", "--db", folder.appendingPathComponent("s.sqlite").path, "--every", "1h", feed], folder: folder)
            defer { TestSupport.stop(loop.process) }
            #expect(try await loop.wait(seconds: 30) { loop.stderr.contains("next read in") }, "\(loop.stderr)")
            let asked = ContinuousClock.now
            kill(loop.process.processIdentifier, signal)
            #expect(try await loop.wait(seconds: 20) { !loop.process.isRunning })
            #expect(ContinuousClock.now - asked < .seconds(10), "an hour's wait ends at the stop")
            #expect(loop.process.terminationStatus == 0, "\(loop.stderr)")
            let text = loop.stderr
            let notice = text.range(of: "stopping; writes in progress finish"), last = text.range(of: "ingest loop stopped")
            #expect(notice != nil && last != nil && notice!.lowerBound < last!.lowerBound, "round \(round): \(text)")
            // Not a terminal (a service's log): the hint names signals, not a key.
            #expect(text.contains("a second SIGTERM or SIGINT quits now") && !text.contains("Ctrl-C again"), "round \(round): \(text)")
        }
    }

    @Test("backoff: doubling from the interval, capped, with jitter in [½, 1]")
    func backoffDoublesAndIsCapped() {
        let backoff = FeedBackoff(interval: .seconds(120), maxBackoff: .seconds(900))
        #expect((1...6).map { backoff.ceiling(afterFailures: $0) } == [.seconds(120), .seconds(240), .seconds(480), .seconds(900), .seconds(900), .seconds(900)])
        var random = SystemRandomNumberGenerator()
        let waits = (0..<200).map { _ in backoff.wait(afterFailures: 2, using: &random) }
        #expect(waits.allSatisfy { $0 >= .seconds(120) && $0 <= .seconds(240) })
        #expect(Set(waits).count > 100, "jittered, not all the same")
        // An interval longer than the cap: never shorter than the interval.
        #expect(FeedBackoff(interval: .seconds(3600), maxBackoff: .seconds(900)).ceiling(afterFailures: 5) == .seconds(3600))
    }

    @Test func usageMistakesAreRefused() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        for (arguments, words) in [(["ingest", "--every", "2m", "-"], "stdin"),
                                   (["ingest", "--every", "0.2s", "x.xml"], "at least 1s"),
                                   (["ingest", "--metrics-file", "m.prom", "x.xml"], "--every"),
                                   (["ingest", "--every", "banana", "x.xml"], "not a length of time")] {
            let run = try await TestSupport.runCLI(arguments, folder: folder)
            #expect(run.status == 64 && run.stderr.contains(words), "\(arguments): \(run.stderr)")
        }
    }
}
