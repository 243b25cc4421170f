import Foundation
import Testing

/// `ingest autobahn:` and `watch --source autobahn:` as a user types them, against a real
/// loopback server in the Autobahn API's shapes. scripts/test runs this suite on the release
/// binary too: the release build of Swift 6.3.1 crashed here (issue 38;
/// scripts/compiler-check/task-result.swift) while the debug build did the right thing.
@Suite("Live sources on the command line", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct LiveSourceCommandTests {
    static func cli(_ arguments: [String], folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await TestSupport.runCLI(arguments, folder: folder)
    }

    /// `count` warnings along a road near Köln, in the API's shapes (coordinates as strings).
    static func items(road: String, service: String, count: Int) -> [[String: Any]] {
        (0..<count).map { i -> [String: Any] in
            let lat = String(50.9 + Double(i) * 0.001), lon = String(7.0 + Double(i) * 0.001)
            let description: [String] = ["\(road): Köln -> Olpe, zwischen AS Wenden und AS Krombach", "Stau, Länge \(i) km"]
            var item: [String: Any] = ["identifier": "\(road)-\(service)-\(i)", "title": "\(road) | Köln - Olpe", "subtitle": ""]
            item["description"] = description
            item["coordinate"] = ["lat": lat, "long": lon]
            item["display_type"] = service == "roadworks" ? "ROADWORKS" : "WARNING"
            item["startTimestamp"] = "2026-11-26T08:00:00.000+0100"
            return item
        }
    }

    static func api(roads: [String: Int]) throws -> FakeAutobahnAPI {
        let api = try FakeAutobahnAPI()
        for (road, count) in roads {
            for service in ["warning", "roadworks", "closure"] {
                api.set(road: road, service: service, items: items(road: road, service: service, count: service == "closure" ? 0 : count))
            }
        }
        return api
    }

    @Test(.timeLimit(.minutes(2))) func ingestAutobahnStoresEveryDocumentAndReportsAFailingRoad() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let api = try Self.api(roads: ["A7": 50, "A1": 40, "A3": 30])
        defer { api.shutdown() }
        let db = folder.appendingPathComponent("live.sqlite").path

        let one = try await Self.cli(["ingest", "autobahn:A7", "--autobahn-url", api.baseURL, "--db", db], folder: folder)
        #expect(one.status == 0, Comment(rawValue: one.stderr))
        #expect(one.stderr.contains("100 read, 100 new"), Comment(rawValue: one.stderr))

        api.set(road: "A3", behaviour: .fail500)
        let all = try await Self.cli(["ingest", "autobahn:", "--autobahn-url", api.baseURL, "--autobahn-timeout", "2s", "--db", db], folder: folder)
        #expect(all.status == 3, "a road that fails makes the ingest partly done: \(all.stderr)")
        #expect(all.stderr.contains("A3/warning: HTTP 500"), Comment(rawValue: all.stderr))
        #expect(all.stderr.contains("180 read, 80 new, 0 updated, 100 unchanged"), Comment(rawValue: all.stderr))
        // Every document failing is a download failure, not a partial ingest.
        let none = try await Self.cli(["ingest", "autobahn:A3", "--autobahn-url", api.baseURL, "--autobahn-timeout", "2s", "--db", db], folder: folder)
        #expect(none.status == 69 && none.stderr.contains("every document failed"), Comment(rawValue: none.stderr))

        let near = try await Self.cli(["near", "--lat", "50.9", "--lon", "7.0", "--limit", "200", "--format", "csv", "--db", db], folder: folder)
        #expect(near.status == 0, Comment(rawValue: near.stderr))
        let ids = near.stdout.split(whereSeparator: \.isNewline).dropFirst().map { String($0.split(separator: ",")[0]) }
        #expect(ids.count == 180)
        #expect(Set(ids.map { $0.split(separator: "-")[0] }) == ["A1", "A7"])
    }

    @Test(.timeLimit(.minutes(2))) func watchWithAnAutobahnSourceReportsWhatEntersAndLeaves() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let api = try Self.api(roads: ["A7": 3])
        defer { api.shutdown() }
        let db = folder.appendingPathComponent("live.sqlite").path
        let watch = ["watch", "--source", "autobahn:A7", "--autobahn-url", api.baseURL, "--db", db, "--once",
                     "--lat", "50.9", "--lon", "7.0", "--radius", "25km", "--format", "ndjson",
                     "--state", folder.appendingPathComponent("watch.json").path]

        let first = try await Self.cli(watch, folder: folder)
        #expect(first.status == 0, Comment(rawValue: first.stderr))
        #expect(WatchCommandTests.events(first.stdout) == ["enter A7-roadworks-0", "enter A7-roadworks-1", "enter A7-roadworks-2",
                                                           "enter A7-warning-0", "enter A7-warning-1", "enter A7-warning-2"],
                Comment(rawValue: first.stdout + first.stderr))

        api.set(road: "A7", service: "warning", items: Array(Self.items(road: "A7", service: "warning", count: 3).prefix(2)))
        let second = try await Self.cli(watch, folder: folder)
        #expect(second.status == 0, Comment(rawValue: second.stderr))
        #expect(WatchCommandTests.events(second.stdout) == ["leave A7-warning-2"], Comment(rawValue: second.stdout + second.stderr))
    }
}
