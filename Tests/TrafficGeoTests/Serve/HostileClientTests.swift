import Foundation
import Testing
import TrafficGeoTestSupport

/// Hostile clients against a `trafficgeo serve` process (the release binary too: scripts/test
/// runs every suite that spawns the executable again on it): integer extremes in every numeric
/// parameter and header, numbers strtod reads but people do not write, expensive-but-valid
/// questions. None may stop the server, none may be answered with internals, and a normal
/// client is answered after each (issue 39).
@Suite("serve: hostile clients", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"),
       .enabled(if: TestSupport.which("curl") != nil, "needs curl"))
struct HostileClientTests {
    static let items = "/collections/incidents/items"

    /// (status, body) of a GET through curl; `seconds` bounds streams. `timed`: also curl's own
    /// `time_total` in seconds, which no scheduling of the test process can lengthen.
    static func get(_ url: String, headers: [String] = [], seconds: Int = 10,
                    timed: Bool = false) async throws -> (status: Int, body: String, seconds: Double?) {
        let marker = "\n--status:", timeMarker = "\n--time:"
        var arguments = ["-s", "-g", "--max-time", String(seconds), "-w", marker + "%{http_code}" + (timed ? timeMarker + "%{time_total}" : "")]
        for header in headers { arguments += ["-H", header] }
        let r = try await TestSupport.runOnThread(TestSupport.which("curl")!, arguments + [url])
        var output = r.stdout, seconds: Double?
        if timed, let range = output.range(of: timeMarker, options: .backwards) {
            seconds = Double(output[range.upperBound...])
            output = String(output[..<range.lowerBound])
        }
        let parts = output.components(separatedBy: marker)
        return (Int(parts.last ?? "") ?? 0, parts.dropLast().joined(separator: marker), seconds)
    }

    @Test(.timeLimit(.minutes(3))) func noRequestStopsTheServerOrShowsItsInternals() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("serve.sqlite").path
        let ingest = try await TestSupport.runOnThread(TestSupport.cliExecutable!.path,
                                                       ["ingest", "--db", db, TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path])
        try #require(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder).started()
        defer { server.stop() }
        try #require(server.port > 0, Comment(rawValue: server.stderr))

        let max = "9223372036854775807", min = "-9223372036854775808"
        let words = (0..<900).map { "wort\($0)" }.joined(separator: "+")
        // (query, the parameter a 400 must name; nil: any answer but a 5xx)
        let hostile: [(String, String?)] = [
            ("offset=\(max)", "offset"), ("offset=\(min)", "offset"), ("offset=-1", "offset"), ("limit=\(max)", "limit"),
            ("limit=\(min)", "limit"), ("lat=50&lon=7&nearest=\(max)", "nearest"), ("lat=50&lon=7&offset=\(max)", "offset"),
            ("lat=50&lon=7&offset=99990&limit=10", "offset"), ("sortby=title&offset=9999999&limit=10000", "offset"),
            ("sortby=updated&offset=\(max)", "offset"), ("bbox=6,50,8,52&sortby=title&offset=10000", "offset"),
            ("lat=0x1p3&lon=7", "lat"), ("lat=50%00&lon=7", "lat"), ("lat=nan&lon=7", "lat"), ("lat=1e400&lon=7", "lat"),
            ("lat=50&lon=inf", "lon"), ("lat=50&lon=-0x10", "lon"), ("bbox=0x1p3,50,8,52", "bbox"), ("bbox=6,50,8,1e999", "bbox"),
            ("min-confidence=nan", "min-confidence"), ("min-confidence=0x1p-1", "min-confidence"),
            ("lat=50&lon=7&radius=1e400m", "radius"), ("lat=50&lon=7&radius=25", "radius"), ("lat=50&lon=7&radius=nanm", "radius"),
            ("q=\(words)", "q"), ("q=" + String(repeating: "a", count: 5000), "q"),
            ("datetime=99999-12-31T00:00:00Z", "datetime"), ("active-at=-\(max)d", nil),
            ("lat=50&lon=7&radius=\(max)km", nil), ("limit=10000&offset=10000000", nil),
        ]
        for (query, parameter) in hostile {
            let answer = try await Self.get(server.base + Self.items + "?" + query)
            #expect(server.process.isRunning, "\(query) stopped the server: \(server.stderr.suffix(2000))")
            try #require(server.process.isRunning)
            if let parameter {
                #expect(answer.status == 400 && answer.body.contains(parameter), "\(query): \(answer.status) \(answer.body.prefix(300))")
            } else {
                #expect(answer.status > 0 && answer.status < 500, "\(query): \(answer.status) \(answer.body.prefix(300))")
            }
            for leak in ["sqlite", "SQLite", folder.path, "SELECT", "/tmp/"] {
                #expect(!answer.body.contains(leak), "\(query) answered with internals: \(answer.body.prefix(300))")
            }
        }
        // The last page a distance-sorted walk may reach has no next link past the depth.
        let deep = try await Self.get(server.base + Self.items + "?lat=50&lon=7&offset=9990&limit=10&f=json")
        #expect(deep.status == 200 && !deep.body.contains("\"rel\":\"next\""), "\(deep.status) \(deep.body.prefix(300))")

        // Event ids at the integer extremes: the stream opens, the server stays.
        for id in [max, min, "-1", "0"] {
            let stream = try await Self.get(server.base + "/collections/incidents/events", headers: ["Last-Event-ID: \(id)"], seconds: 2)
            if id.hasPrefix("-") {
                #expect(stream.status == 400 && stream.body.contains("Last-Event-ID"), "Last-Event-ID \(id): \(stream.status) \(stream.body.prefix(200))")
            } else {
                #expect(stream.body.hasPrefix("retry: 2000"), "Last-Event-ID \(id): \(stream.status) \(stream.body.prefix(200))")
            }
            #expect(server.process.isRunning, "Last-Event-ID \(id) stopped the server: \(server.stderr.suffix(2000))")
        }
        let bad = try await Self.get(server.base + "/collections/incidents/events", headers: ["Last-Event-ID: 99999999999999999999999"], seconds: 2)
        #expect(bad.status == 400)

        // A normal client is still answered.
        let normal = try await Self.get(server.base + Self.items + "?lat=50.94&lon=6.96&nearest=10")
        #expect(normal.status == 200 && normal.body.contains("FeatureCollection"))
    }

    /// Four expensive questions in flight (16 words over 60,000 incidents, up to a 4 s time limit):
    /// a normal client's nearest=10 is answered within 2 s (they run on a lane of their own;
    /// starved, it would wait for them, about 4 s), they are told to stop at the limit (SQLite
    /// interrupted), and the CPU goes back to idle. (With a 1 s limit and a 1 s bound, a loaded
    /// run of the whole suite on two cores failed it now and then without any starvation.)
    @Test(.timeLimit(.minutes(3)), .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/stat"), "reads a process's CPU time from /proc"))
    func expensiveQuestionsDoNotStarveOthersAndStopAtTheLimit() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("big.sqlite").path
        var csv = "id,title,summary,lat,lon\n"
        var random = SplitMix64(seed: 39)
        for i in 0..<60_000 {
            let lat = 47 + Double(random.next() % 800_000) / 100_000, lon = 6 + Double(random.next() % 900_000) / 100_000
            csv += "b\(i),A\(i % 90 + 1) : Koeln - Olpe alpha beta gamma,Zwischen AS Wenden und AS Krombach Stau \(i % 7) km delta epsilon,\(lat),\(lon)\n"
        }
        let feed = try TestSupport.write(csv, name: "big.csv", in: folder)
        let ingest = try await TestSupport.runOnThread(TestSupport.cliExecutable!.path, ["ingest", "--db", db, "--no-geocode", feed.path])
        try #require(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let server = try await ServeLiveTests.ServeProcess(db: db, folder: folder, extra: ["--timeout", "4s"]).started()
        defer { server.stop() }
        try #require(server.port > 0, Comment(rawValue: server.stderr))
        let heavy = server.base + Self.items + "?q=koeln+olpe+alpha+beta+gamma+zwischen+wenden+krombach+stau+km+delta+epsilon+a1+as+und+x1"

        async let expensive: [Int] = withThrowingTaskGroup(of: Int.self) { group in
            for i in 1...4 { group.addTask { try await Self.get(heavy + "&limit=\(i)").status } }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        try await Task.sleep(for: .milliseconds(300))
        // The best of three, one after another while the four are in flight: the test suite runs
        // beside other tests on two cores, and one slow answer may be theirs; starved, all three
        // would wait for the expensive ones (seconds each).
        // The time is curl's own (`time_total`, request to last byte), not the test's clock: in a
        // loaded suite the test's own continuation can wait seconds for a cooperative thread after
        // curl has finished (CI once saw 4.3 s three times in a row, after the four had ended).
        var fastest = 3600.0
        for _ in 0..<3 {
            let normal = try await Self.get(server.base + Self.items + "?lat=50.94&lon=6.96&nearest=10", timed: true)
            #expect(normal.status == 200)
            fastest = min(fastest, normal.seconds ?? 3600)
        }
        #expect(fastest < 2, "nearest=10 beside four expensive questions: the fastest of three took \(fastest) s")
        let statuses = try await expensive
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(statuses)")

        // Stopped at the limit: the process's CPU time hardly moves once the answers are in.
        func cpuTicks() throws -> Int {
            let fields = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/stat", encoding: .utf8).split(separator: ")").last!.split(separator: " ")
            return Int(fields[11])! + Int(fields[12])!   // utime, stime (fields 14 and 15 of stat)
        }
        try await Task.sleep(for: .milliseconds(1500))
        let before = try cpuTicks()
        try await Task.sleep(for: .seconds(2))
        let spent = try cpuTicks() - before
        #expect(spent < 40, "\(spent) ticks of CPU in 2 s after the expensive questions were answered")
        #expect(server.process.isRunning)
    }
}

