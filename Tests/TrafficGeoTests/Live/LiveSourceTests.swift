import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
@testable import TrafficGeoWatch

/// The Autobahn API followed as a snapshot source against a real loopback server whose lists
/// change between polls, with a watch that is restarted between them.
@Suite struct LiveSourceTests {
    static let roads = ["A1", "A2", "A3", "A4", "A5"]

    struct Setup {
        let api: FakeAutobahnAPI
        let folder: URL
        let store: SQLiteIncidentStore
        let ingestor: FeedIngestor
        let stateFile: URL
        let queries: [StandingQuery]
        let rows: [String: [[String: Any]]]

        func cleanup() {
            api.shutdown()
            try? FileManager.default.removeItem(at: folder)
        }

        /// A watch as a fresh process would run it: state from the file, one poll, state saved.
        func watchOnce(now: Date = Date()) async throws -> [WatchEvent] {
            var matcher = WatchMatcher(queries: queries, state: try WatchState.load(from: stateFile))
            var all: [WatchEvent] = []
            try await matcher.poll(store, now: now) { events, state in
                all += events
                try state.save(to: stateFile)
            }
            return all
        }

        func storeID(_ id: String) throws -> Int64 {
            try #require(try store.allIncidents().first { $0.incident.id == id }).storeID
        }
    }

    static func setup(shared: URL) throws -> Setup {
        let rows = try AutobahnFixture.items(roads: roads, perRoad: 6, shared: shared)
        try #require(roads.allSatisfy { rows[$0]?.count == 6 }, "the shared data has 6 positioned warnings on each of \(roads)")
        let api = try FakeAutobahnAPI()
        for road in roads {
            let items = rows[road]!
            api.set(road: road, service: "warning", items: Array(items[0..<4]))
            api.set(road: road, service: "roadworks", items: Array(items[4..<6]))
            api.set(road: road, service: "closure", items: [])
        }
        let folder = TestSupport.temporaryDirectory()
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("live.sqlite").path)
        var ingestor = FeedIngestor(store: store)
        var client = AutobahnAPI(baseURL: api.baseURL, cacheDirectory: folder.appendingPathComponent("cache"))
        client.timeout = 1
        client.attempts = 2
        client.backoff = 0.05
        ingestor.autobahn = client
        let everything = StandingQuery(name: "everything", area: .box(LonLatBox(west: -180, south: -90, east: 180, north: 90)),
                                       filter: IncidentFilter())
        return Setup(api: api, folder: folder, store: store, ingestor: ingestor,
                     stateFile: folder.appendingPathComponent("watch.json"), queries: [everything], rows: rows)
    }

    static func id(_ item: [String: Any]) -> String { item["identifier"] as! String }

    @Test(.enabled(if: TestSupport.sharedFolder != nil, "needs ../shared/data/autobahn"), .timeLimit(.minutes(2)))
    func snapshotsEndExactlyTheVanishedAndAWatchReportsEachEventOnceAcrossRestarts() async throws {
        let s = try Self.setup(shared: try #require(TestSupport.sharedFolder))
        defer { s.cleanup() }

        // Round 1: every road answers.
        let first = try await s.ingestor.ingest("autobahn:")
        #expect(first.new == 30 && first.ended == 0 && first.feedError == nil, "\(first)")
        await #expect(try s.store.allIncidents().allSatisfy { $0.incident.properties[Incident.snapshotPartProperty] != nil })
        let initial = try await s.watchOnce()
        #expect(initial.count == 30 && initial.allSatisfy { $0.kind == .enter })
        #expect(try await s.watchOnce().isEmpty, "a restarted watch repeats nothing")

        // Round 2: on A1 one warning vanishes, one changes, one appears; A3 fails with 500, A5
        // hangs, A2's lists come back empty, A4 is unchanged (answered 304 from the ETag).
        let a1 = s.rows["A1"]!
        var changed = a1[1]
        changed["title"] = "A1 : changed title for the test"
        var appeared = a1[2]
        appeared["identifier"] = "test-appeared-1"
        appeared["title"] = "A1 : a new warning"
        s.api.set(road: "A1", service: "warning", items: [changed, a1[2], a1[3], appeared])
        s.api.set(road: "A3", behaviour: .fail500)
        s.api.set(road: "A5", behaviour: .hang)
        for service in AutobahnAPI.services { s.api.set(road: "A2", service: service, items: []) }
        let before304 = s.api.notModifiedAnswers
        let second = try await s.ingestor.ingest("autobahn:")
        let vanished = Set([Self.id(a1[0])] + s.rows["A2"]!.map(Self.id))
        #expect(second.ended == vanished.count, "\(second)")
        #expect(second.new == 1 && second.updated == 1, "\(second)")
        let feedError = try #require(second.feedError)
        #expect(feedError.contains("A3/warning: HTTP 500") && feedError.contains("A5/roadworks: no answer"), "\(feedError)")
        #expect(s.api.notModifiedAnswers - before304 >= 3, "A4's unchanged lists are answered 304")
        #expect(s.api.server.requests.filter { $0.path == "/o/autobahn/A3/services/warning" }.count == 1 + 2, "one request in round 1, retried once in round 2")
        let stored = try await s.store.allIncidents()
        #expect(Set(stored.filter { $0.ended != nil }.map(\.incident.id)) == vanished, "the store ends exactly the vanished incidents")
        #expect(stored.count == 31, "ended incidents keep their rows")
        let active = try QueryEngineProbe.activeIDs(s.store)
        #expect(active.isDisjoint(with: vanished) && active.count == 31 - vanished.count)

        let events = try await s.watchOnce()
        let got = events.map { "\($0.kind.rawValue) \($0.incident.id)" }.sorted()
        let expected = (["enter test-appeared-1", "change \(Self.id(a1[1]))"] + vanished.map { "leave \($0)" }).sorted()
        #expect(got == expected)
        #expect(events.filter { $0.kind == .leave }.allSatisfy { $0.reason == "ended" })
        #expect(try await s.watchOnce().isEmpty, "a restarted watch repeats nothing")

        // Round 3: A3 answers again without its first warning; A5 answers as before.
        s.api.set(road: "A3", behaviour: .normal)
        s.api.set(road: "A5", behaviour: .normal)
        let a3 = s.rows["A3"]!
        s.api.set(road: "A3", service: "warning", items: Array(a3[1..<4]))
        let third = try await s.ingestor.ingest("autobahn:")
        #expect(third.ended == 1 && third.feedError == nil, "\(third)")
        let last = try await s.watchOnce()
        #expect(last.map { "\($0.kind.rawValue) \($0.incident.id)" } == ["leave \(Self.id(a3[0]))"])

        // Round 4: the vanished warning comes back: it reopens (an update) and enters again.
        s.api.set(road: "A3", service: "warning", items: Array(a3[0..<4]))
        let fourth = try await s.ingestor.ingest("autobahn:")
        #expect(fourth.updated == 1 && fourth.new == 0 && fourth.ended == 0, "\(fourth)")
        #expect(try await s.watchOnce().map { "\($0.kind.rawValue) \($0.incident.id)" } == ["enter \(Self.id(a3[0]))"])

        // Feed health: four fetches, one with failures.
        let health = try await #require(try s.store.feedHealth().first { $0.source == "autobahn" })
        #expect(health.failureStreak == 0 && health.lastSuccess != nil && health.lastError?.contains("A3/warning") == true)
    }

    @Test(.enabled(if: TestSupport.sharedFolder != nil, "needs ../shared/data/autobahn"), .timeLimit(.minutes(1)))
    func aWatchOnACircleSeesOnlyItsArea() async throws {
        let s = try Self.setup(shared: try #require(TestSupport.sharedFolder))
        defer { s.cleanup() }
        _ = try await s.ingestor.ingest("autobahn:A1,A4")
        let all = try await s.store.allIncidents()
        #expect(all.count == 12)
        let center = try #require(all.first?.incident.position)
        let inside = Set(all.filter { Geodesic.distance(from: center, to: $0.incident.position!) <= 20_000 }.map(\.incident.id))
        var matcher = WatchMatcher(queries: [StandingQuery(name: "near", area: .circle(center: center, radius: 20_000), filter: IncidentFilter())],
                                   state: nil)
        var events: [WatchEvent] = []
        try await matcher.poll(s.store) { batch, _ in events += batch }
        #expect(Set(events.map(\.incident.id)) == inside)
        #expect(events.allSatisfy { ($0.distance ?? .infinity) <= 20_000 })
    }
}

@Suite struct AutobahnRoadListTests {
    @Test(.timeLimit(.minutes(1))) func aRoadListThatFailsIsAFeedErrorAndRecordedInFeedHealth() async throws {
        let server = try LoopbackHTTPServer { _, _ in .json("{\"error\": 1}", status: 503) }
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        var ingestor = FeedIngestor(store: store)
        var api = AutobahnAPI(baseURL: "http://127.0.0.1:\(server.port)/o/autobahn/", cacheDirectory: nil)
        api.attempts = 2
        api.backoff = 0.01
        ingestor.autobahn = api
        await #expect(throws: FeedError.httpStatus("http://127.0.0.1:\(server.port)/o/autobahn/", status: 503)) {
            try await ingestor.ingest("autobahn:")
        }
        #expect(server.requests.count == 2 && server.requests.allSatisfy { $0.headers["user-agent"]?.hasPrefix("trafficgeo/") == true })
        let health = try await #require(try store.feedHealth().first)
        #expect(health.source == "autobahn" && health.failureStreak == 1 && health.lastSuccess == nil)
        #expect(AutobahnAPI.roads(inLocation: "autobahn:a1, A 3") == .some(["A1", "A3"]))
        #expect(AutobahnAPI.roads(inLocation: "autobahn:") == .some(nil))
        #expect(AutobahnAPI.roads(inLocation: "feed.xml") == nil)
    }
}

/// What `--active-at now` returns, by feed id.
enum QueryEngineProbe {
    static func activeIDs(_ store: any IncidentStore) throws -> Set<String> {
        var ids = Set<String>()
        try store.all(filter: IncidentFilter(activeAt: Date().addingTimeInterval(1)), locatedOnly: false) { ids.insert($0.incident.id) }
        return ids
    }
}
