import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoSQLite
@testable import TrafficGeoServe
@testable import TrafficGeoStore

/// `trafficgeo serve` as a process: events after an ingest in another process, Last-Event-ID,
/// readers while a writer works, and a graceful stop on SIGTERM with a stream open.
@Suite("serve: live updates and the process", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct ServeLiveTests {
    /// A `trafficgeo serve` process on a free port; its stderr goes to a file we read for the port.
    final class ServeProcess: @unchecked Sendable {
        let process = Process()
        let log: URL
        var port = 0

        init(db: String, folder: URL, extra: [String] = []) throws {
            log = folder.appendingPathComponent("serve-\(UUID().uuidString).log")
            FileManager.default.createFile(atPath: log.path, contents: nil)
            process.executableURL = TestSupport.cliExecutable!
            process.arguments = ["serve", "--db", db, "--port", "0"] + extra
            var environment = ProcessInfo.processInfo.environment
            environment["TRAFFICGEO_DB"] = nil
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
        }

        /// Waits (without holding a thread) until the server says where it listens.
        func started() async throws -> ServeProcess {
            // Generous: under the whole suite on two cores a start has taken more than 30 s.
            try await TestSupport.waitUntil(seconds: 90) {
                if let range = stderr.range(of: #"at http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression) {
                    port = Int(stderr[range].split(separator: ":").last!.dropLast()) ?? 0
                    return true
                }
                return !process.isRunning
            }
            return self
        }

        var stderr: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        var base: String { "http://127.0.0.1:\(port)" }

        func stop() { TestSupport.stop(process) }
    }

    /// A GeoJSON feed of these incidents on the A4 (the watch tests' builders).
    static func feed(_ features: [(id: String, title: String, lat: Double, lon: Double)]) -> String {
        WatchCommandTests.collection(features.map { WatchCommandTests.feature($0.id, $0.title, lat: $0.lat, lon: $0.lon) })
    }

    /// The CLI on a thread of its own (these tests are async; see `TestSupport.runOnThread`).
    func cli(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await TestSupport.runOnThread(TestSupport.cliExecutable!.path, arguments)
    }

    /// Reads an event stream until `enough` says the events so far suffice (or time runs out).
    static func events(_ url: String, lastEventID: Int64? = nil, seconds: Int64 = 60, whileReading: @escaping @Sendable () async throws -> Void = {},
                       enough: @escaping @Sendable ([(id: Int64, kind: String, data: [String: Any])]) -> Bool) async throws -> [(id: Int64, kind: String, data: [String: Any])] {
        var request = HTTPClientRequest(url: url)
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: String(lastEventID)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(seconds))
        #expect(response.status == .ok && response.headers.first(name: "content-type") == "text/event-stream")
        var text = ""
        var parsed: [(id: Int64, kind: String, data: [String: Any])] = []
        let started = Date()
        var triggered = false
        for try await buffer in response.body {
            text += String(buffer: buffer)
            if !triggered, text.contains("trafficgeo events after") {
                triggered = true
                try await whileReading()
            }
            parsed = text.components(separatedBy: "\n\n").compactMap { block in
                var id: Int64?, kind: String?, data: [String: Any]?
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { id = Int64(line.dropFirst(4)) }
                    if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
                    if line.hasPrefix("data: ") { data = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any] }
                }
                guard let id, let kind, let data else { return nil }
                return (id, kind, data)
            }
            if enough(parsed) || Date().timeIntervalSince(started) > Double(seconds) { break }
        }
        return parsed
    }

    @Test func eventsArriveAfterAnIngestInAnotherProcessAndResumeFromLastEventID() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("live.sqlite").path
        let feed = folder.appendingPathComponent("feed.geojson")
        try Self.feed([("a", "A4 : Köln - Olpe", 50.95, 7.0), ("b", "A4 : Olpe - Siegen", 51.0, 7.9)]).write(to: feed, atomically: true, encoding: .utf8)
        #expect(try await cli(["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path]).status == 0)
        let server = try await ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        #expect(server.port > 0, Comment(rawValue: server.stderr))

        // Near Köln only: b (Olpe) changes too, but is outside the circle.
        let url = server.base + "/collections/incidents/events?lat=50.94&lon=6.96&radius=25km"
        let cliPath = TestSupport.cliExecutable!.path
        let second = Self.feed([("a", "A4 : Köln - Olpe, Stau", 50.95, 7.0), ("b", "A4 : Olpe - Siegen, Stau", 51.0, 7.9),
                                ("c", "A4 : Köln-Poll", 50.91, 7.01)])
        let events = try await Self.events(url, whileReading: {
            try second.write(to: feed, atomically: true, encoding: .utf8)
            let ingest = try await TestSupport.runOnThread(cliPath, ["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path])
            #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        }, enough: { $0.count >= 2 })
        let seen = events.map { "\($0.kind) \((($0.data["feature"] as? [String: Any])?["properties"] as? [String: Any])?["id"] as? String ?? "?")" }.sorted()
        #expect(seen == ["new c", "updated a"], "only the incidents in the circle, each once")
        #expect(events.allSatisfy { ($0.data["feature"] as? [String: Any])?["geometry"] != nil })
        let distance = ((events.first?.data["feature"] as? [String: Any])?["properties"] as? [String: Any])?["distance_m"] as? Double
        #expect(distance != nil, "distances from the circle's centre")

        // Resume: with the id before the first of them, the same events come again; a third
        // ingest ends a (a snapshot without it) and that follows.
        let firstID = try #require(events.map(\.id).min())
        let third = Self.feed([("b", "A4 : Olpe - Siegen, Stau", 51.0, 7.9), ("c", "A4 : Köln-Poll", 50.91, 7.01)])
        let resumed = try await Self.events(url, lastEventID: firstID - 1, whileReading: {
            try third.write(to: feed, atomically: true, encoding: .utf8)
            _ = try await TestSupport.runOnThread(cliPath, ["ingest", "--db", db, "--snapshot", "--source-name", "desk", feed.path])
        }, enough: { $0.contains { $0.kind == "ended" } })
        #expect(resumed.map(\.id).sorted() == resumed.map(\.id), "in order")
        #expect(Set(resumed.map(\.kind)) == ["new", "updated", "ended"], "\(resumed.map(\.kind))")
        #expect(resumed.filter { $0.kind != "ended" }.map(\.id).sorted() == events.map(\.id).sorted())
        #expect(server.stderr.contains("GET /collections/incidents/events"), "the access log")
    }

    @Test func readersNeverSeeALockedDatabaseWhileAnIngestWrites() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("busy.sqlite").path
        let feed = folder.appendingPathComponent("big.geojson")
        @Sendable func big(_ round: Int) -> String {
            var features: [(id: String, title: String, lat: Double, lon: Double)] = []
            for i in 0..<4000 {
                let lat = 50 + Double(i % 100) / 50, lon = 6 + Double(i / 100) / 20
                features.append(("r\(i)", "A4 : Köln \(i) round \(round)", lat, lon))
            }
            return Self.feed(features)
        }
        try big(0).write(to: feed, atomically: true, encoding: .utf8)
        #expect(try await cli(["ingest", "--db", db, feed.path]).status == 0)
        let server = try await ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        let cliPath = TestSupport.cliExecutable!.path
        final class Progress: @unchecked Sendable {
            private let lock = NSLock()
            private var done = false, answers = 0
            var writerDone: Bool { lock.withLock { done } }
            var answered: Int { lock.withLock { answers } }
            func finish() { lock.withLock { done = true } }
            func answer() { lock.withLock { answers += 1 } }
        }
        let progress = Progress()
        // Ingests rewrite every incident while the server answers queries: at least four, and
        // more until 9 answers came in meanwhile (a fast release build ingests 4,000 incidents in
        // less time than a few queries take on a loaded machine), at most 40.
        let writer = Task.detached {
            defer { progress.finish() }
            var round = 1
            while round <= 4 || (progress.answered < 9 && round <= 40) {
                try big(round).write(to: feed, atomically: true, encoding: .utf8)
                let r = try await TestSupport.runOnThread(cliPath, ["ingest", "--db", db, feed.path])
                #expect(r.status == 0, Comment(rawValue: r.stderr))
                round += 1
            }
        }
        var statuses: [Int: Int] = [:]
        var problems: [String] = []
        while !progress.writerDone {
            for query in ["nearest=10&lat=50.5&lon=7", "bbox=6,50,8,52&limit=100", "radius=20km&lat=51&lon=7&limit=50"] {
                let request = HTTPClientRequest(url: server.base + "/collections/incidents/items?" + query)
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(90))
                let body = String(buffer: try await response.body.collect(upTo: 16 << 20))
                statuses[Int(response.status.code), default: 0] += 1
                if response.status != .ok { problems.append(body) } else { progress.answer() }
            }
        }
        try await writer.value
        #expect(statuses.keys.sorted() == [200], "\(statuses) \(problems.prefix(2))")
        #expect((statuses[200] ?? 0) >= 9, "queries were answered while the ingests ran")
        #expect(!server.stderr.contains("locked"))
    }

    @Test func sigtermStopsTheServerGracefullyWithAStreamOpen() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("stop.sqlite").path
        let feed = folder.appendingPathComponent("feed.geojson")
        try Self.feed([("a", "A4 : Köln - Olpe", 50.95, 7.0)]).write(to: feed, atomically: true, encoding: .utf8)
        #expect(try await cli(["ingest", "--db", db, feed.path]).status == 0)
        let server = try await ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        let pid = server.process.processIdentifier
        // The stream ends when the server stops; SIGTERM is sent once the stream is open.
        let events = try await Self.events(server.base + "/collections/incidents/events", whileReading: { kill(pid, SIGTERM) }, enough: { _ in false })
        #expect(events.isEmpty)
        // A server that ignored SIGTERM, or waited for the stream forever, would still run (and
        // the stream above would not have ended); the bound is generous for a busy machine.
        try await TestSupport.waitUntil(seconds: 60) { !server.process.isRunning }
        #expect(!server.process.isRunning, "stopped after SIGTERM")
        #expect(server.process.terminationStatus == 0, Comment(rawValue: server.stderr))
        // One line says where it listens (Hummingbird's own start line is not shown), one that it stopped.
        let lines = server.stderr.split(separator: "\n")
        #expect(lines.filter { $0.contains("listening") || $0.contains("serving") }.count == 1, Comment(rawValue: server.stderr))
        #expect(lines.last == "trafficgeo: serve stopped", Comment(rawValue: server.stderr))
    }

    @Test func aPortInUseAndAMissingDatabaseAreExplained() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = try await cli(["serve", "--db", folder.appendingPathComponent("none.sqlite").path, "--port", "0"])
        #expect(missing.status != 0 && missing.stderr.contains("none.sqlite"), Comment(rawValue: missing.stderr))
        let db = folder.appendingPathComponent("p.sqlite").path
        let feed = folder.appendingPathComponent("feed.geojson")
        try Self.feed([("a", "A4 : Köln - Olpe", 50.95, 7.0)]).write(to: feed, atomically: true, encoding: .utf8)
        #expect(try await cli(["ingest", "--db", db, feed.path]).status == 0)
        let server = try await ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        let clash = try await cli(["serve", "--db", db, "--port", String(server.port)])
        #expect(clash.status != 0 && clash.stderr.contains("in use") && clash.stderr.contains("--port"), Comment(rawValue: clash.stderr))
        let bad = try await cli(["serve", "--db", db, "--port", "70000"])
        #expect(bad.status == 64)
    }
}
