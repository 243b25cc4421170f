import Foundation
import Testing
import TrafficGeoModel
import TrafficGeoSQLite
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoWatch

/// A watch's saved state survives an upgrade: states are fingerprinted by an explicit form of
/// their question (`WatchQuestion`), which a new filter field at its default leaves as it was,
/// and a state written by the release before it (reflection of the filter) is still resumed,
/// its default file found under its old name. The state below was written by that release
/// (`trafficgeo watch --watches watches.json --once` on the bundled samples).
@Suite struct WatchUpgradeTests {
    static let watches = #"""
        [
        {"name": "home", "lat": 50.94, "lon": 6.96, "radius": "25km"},
        {"name": "commute", "route": "commute.geojson", "buffer": "2km", "road": ["A1", "A3"], "active_at": "now", "unconfirmed_after": "30d"},
        {"name": "ruhr-danger", "bbox": [6.5, 51.2, 7.8, 51.7], "category": ["accident", "wrong-way driver", "closure"], "min_severity": "high"},
        {"name": "sure", "lat": 52.52, "lon": 13.40, "radius": "30km", "min_confidence": 0.5, "search": "stau Köln", "precision": ["junction", "town"], "source": "autobahn", "since": "-2h"}
        ]
        """#
    static let route = #"{"type": "LineString", "coordinates": [[6.96, 50.94], [7.10, 51.00], [7.46, 51.51]]}"#
    /// As the release wrote it: 6 incidents inside "home", the change feed read to 44.
    static let releaseState = #"""
        {"inside":{"commute":[],"home":[9,{"category":"roadworks","id":"tg-sample-0003","latitude":51.081,"longitude":7.079,"road":"A1","source":"https:\/\/traffic.example\/","title":"Roadworks – A1 Dortmund Richtung Koeln: Zwischen AS Burscheid und AK Leverkusen Baustelle, Fahrbahnverengung auf zwei Fahrstreifen"},14,{"category":"queue","id":"tg-sample-0006","latitude":50.805,"longitude":6.983,"road":"A555","source":"https:\/\/traffic.example\/","title":"A555 : Koeln - Bonn"},4,{"category":"obstacle","id":"trafficgeo.example\/tg-sample-0005","latitude":50.898,"longitude":7.056,"road":"A59","source":"events.open511.json","title":"A59 : Duisburg - Bonn"},15,{"category":"accident","id":"tg-sample-0007","latitude":50.896,"longitude":6.791,"road":"A4","source":"https:\/\/traffic.example\/","title":"A4 : Aachen - Koeln"},11,{"category":"slow traffic","id":"tg-sample-0004","latitude":51.066,"longitude":6.838,"road":"A57","source":"https:\/\/traffic.example\/","title":"A57 : Krefeld - Koeln"},3,{"category":"accident","id":"trafficgeo.example\/tg-sample-0002","latitude":50.966,"longitude":7.051,"road":"A3","source":"events.open511.json","title":"A3 : Koeln - Frankfurt"}],"ruhr-danger":[],"sure":[]},"lastSequence":44,"queries":"home|circle(center: TrafficGeoModel.Coordinate(latitude: 50.94, longitude: 6.96), radius: 25000.0)|IncidentFilter(activeAt: nil, unconfirmedAfter: Optional(604800.0), since: nil, until: nil, roads: [], categories: [], words: [], source: nil, minConfidence: nil, precisions: [], minSeverity: nil, reports: false)|---\ncommute|corridor(route: [TrafficGeoModel.Coordinate(latitude: 50.94, longitude: 6.96), TrafficGeoModel.Coordinate(latitude: 51.0, longitude: 7.1), TrafficGeoModel.Coordinate(latitude: 51.51, longitude: 7.46)], buffer: 2000.0)|IncidentFilter(activeAt: nil, unconfirmedAfter: Optional(2592000.0), since: nil, until: nil, roads: [\"A1\", \"A3\"], categories: [], words: [], source: nil, minConfidence: nil, precisions: [], minSeverity: nil, reports: false)|t--\nruhr-danger|box(TrafficGeoProjection.LonLatBox(west: 6.5, south: 51.2, east: 7.8, north: 51.7))|IncidentFilter(activeAt: nil, unconfirmedAfter: Optional(604800.0), since: nil, until: nil, roads: [], categories: [TrafficGeoModel.IncidentCategory.accident, TrafficGeoModel.IncidentCategory.wrongWayDriver, TrafficGeoModel.IncidentCategory.closure], words: [], source: nil, minConfidence: nil, precisions: [], minSeverity: Optional(TrafficGeoModel.Severity.high), reports: false)|---\nsure|circle(center: TrafficGeoModel.Coordinate(latitude: 52.52, longitude: 13.4), radius: 30000.0)|IncidentFilter(activeAt: nil, unconfirmedAfter: Optional(604800.0), since: nil, until: nil, roads: [], categories: [], words: [\"stau\", \"koeln\"], source: Optional(\"autobahn\"), minConfidence: Optional(0.5), precisions: [TrafficGeoModel.GeocodePrecision.junction, TrafficGeoModel.GeocodePrecision.town], minSeverity: nil, reports: false)|-t-","version":1}
        """#

    static func queries(in folder: URL) throws -> [StandingQuery] {
        _ = try TestSupport.write(route, name: "commute.geojson", in: folder)
        return try WatchDefinitions.read(path: try TestSupport.write(watches, name: "watches.json", in: folder).path)
    }

    @Test func aStateTheReleaseWroteIsResumed() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queries = try Self.queries(in: folder)
        let saved = try JSONDecoder().decode(WatchState.self, from: Data(Self.releaseState.utf8))
        #expect(LegacyWatchFingerprint.text(queries) == saved.queries, "the release's fingerprint, field by field")
        let matcher = WatchMatcher(queries: queries, state: saved)
        #expect(matcher.state.lastSequence == 44 && matcher.state.inside["home"]?.count == 6, "resumed, not started over")
        #expect(matcher.state.queries == WatchMatcher.fingerprint(queries))
        // Resumed under the new fingerprint, it is resumed again.
        #expect(WatchMatcher(queries: queries, state: matcher.state).state.lastSequence == 44)
        // Another question starts over.
        var other = queries
        other[0].filter.roads = ["A1"]
        #expect(WatchMatcher(queries: other, state: saved).state.lastSequence == nil)
        #expect(WatchMatcher(queries: other, state: matcher.state).state.lastSequence == nil)
    }

    /// Only what is asked is written: a field at its default is left out, so a field added
    /// later changes no saved watch's fingerprint; times count by whether they are set.
    @Test func theFingerprintWritesOnlyWhatIsAsked() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queries = try Self.queries(in: folder)
        #expect(WatchQuestion(queries[0]).text == #"{"area":{"circle":{"latitude":50.94,"longitude":6.96,"radius":25000}},"name":"home","version":1}"#)
        #expect(WatchQuestion(queries[1]).text.contains(#""times":["active-at"]"#) && WatchQuestion(queries[1]).text.contains(#""unconfirmedAfter":2592000"#))
        #expect(WatchQuestion(queries[2]).text.contains(#""categories":["accident","wrong-way driver","closure"]"#) && WatchQuestion(queries[2]).text.contains(#""minSeverity":"high""#))
        var never = queries[0]
        never.filter.unconfirmedAfter = nil
        #expect(WatchQuestion(never).text.contains(#""unconfirmedAfter":-1"#))
        var later = queries[3]
        later.filter.since = Date(timeIntervalSince1970: 0)
        #expect(WatchQuestion(later) == WatchQuestion(queries[3]), "another instant, the same watch")
    }

    /// Every filter field the query model reads (`QueryField.filterFields`) changes the filter,
    /// and so the watch's question: a field added to the filter but not to `WatchQuestion`
    /// would let a watch that asks for it resume the state of one that does not.
    @Test(arguments: QueryField.filterFields)
    func everyFilterFieldReachesTheWatchsQuestion(_ field: QueryField) throws {
        let samples: [QueryField: String] = [
            .activeAt: "now", .since: "-1h", .until: "now", .road: "A4", .category: "accident", .search: "stau", .source: "autobahn",
            .minConfidence: "0.5", .precision: "town", .minSeverity: "high", .unconfirmedAfter: "30d", .reports: "true",
        ].merging(QueryField.measureFields.map { ($0, $0.measure!.example) }) { a, _ in a }
        let sample = try #require(samples[field], "a sample value for \(field): add one here")
        var text = QueryText()
        text.add(field, sample)
        let filter = try text.filter()
        #expect(filter != IncidentFilter(), "\(field) = \(sample) changes nothing in the filter")
        let area = QueryArea.circle(center: Coordinate(latitude: 50.94, longitude: 6.96), radius: 25_000)
        #expect(WatchQuestion(StandingQuery(name: "w", area: area, filter: filter)) != WatchQuestion(StandingQuery(name: "w", area: area, filter: IncidentFilter())),
                "\(field) does not reach WatchQuestion")
    }

    /// "now" in a watch is when it looks: a watch started at 07:00 with `--active-at now` sees
    /// works scheduled 08:00–17:00 enter at 08:30 and leave at 17:30, with no ingest between.
    @Test func aWatchOfNowFollowsTheClockAndTheSchedules() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        let day = TimestampParser.parse("2026-11-23T00:00:00Z")!
        func at(_ hours: Double) -> Date { day.addingTimeInterval(hours * 3600) }
        var works = Incident(source: "open511", id: "works", title: "Roadworks", expires: at(24 * 30), road: "A4",
                             position: Coordinate(latitude: 50.95, longitude: 6.97))
        works.properties[RecurringSchedule.property] = RecurringSchedule(rules: [.init(from: "2026-11-01", window: .init(start: 480, end: 1020)!)]).text
        _ = try await store.ingest(source: "open511", snapshot: nil, now: at(6)) { [works] emit in try emit(.incident(works)) }

        var text = QueryText()
        text.add(.lat, "50.94"); text.add(.lon, "6.96"); text.add(.radius, "5km"); text.add(.activeAt, "now")
        let area = try #require(try text.area { _ in [] })
        let query = try StandingQuery(name: "home", area: area, text: text, now: at(7))
        #expect(query.relativeTimes.activeAt == 0)
        var matcher = WatchMatcher(queries: [query], state: nil)
        func poll(_ hours: Double) async throws -> [String] {
            var seen: [String] = []
            try await matcher.poll(store, now: at(hours)) { events, _ in seen += events.map { "\($0.kind.rawValue) \($0.incident.id) \($0.reason ?? "")" } }
            return seen
        }
        #expect(try await poll(7).isEmpty, "before its hours")
        #expect(try await poll(8.5) == ["enter works "], "its hours began: no ingest came")
        #expect(try await poll(8.51).isEmpty, "nothing new within the minute")
        #expect(try await poll(17.5) == ["leave works not in effect"])
        #expect(try await poll(32.5) == ["enter works "], "the next morning")
        // Each morning's enter is its own event for a receiver that drops keys it has seen.
        var keys: [String] = []
        for hours in [41.5, 56.5, 65.5, 80.5] {
            try await matcher.poll(store, now: at(hours)) { events, _ in keys += events.map(\.key) }
        }
        #expect(keys.count == 4 && Set(keys).count == 4 && keys.allSatisfy { $0.contains("/clock/") }, "\(keys)")

        // A time given as an instant stays that instant; one relative to now moves with it.
        var fixed = QueryText()
        fixed.add(.activeAt, "2026-11-23T09:00:00Z"); fixed.add(.since, "-2h")
        let standing = try StandingQuery(name: "fixed", area: area, text: fixed, now: at(7))
        #expect(standing.relativeTimes.activeAt == nil && standing.relativeTimes.since == -7200)
        #expect(standing.filter(at: at(30)).activeAt == at(9) && standing.filter(at: at(30)).since == at(28))
    }

    /// The command line finds the release's default state file under its old name, moves it to
    /// the new one and goes on from it: nothing enters again.
    @Test(.timeLimit(.minutes(2))) func theCommandLineGoesOnFromTheReleasesStateFile() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let queries = try Self.queries(in: folder)
        let db = folder.appendingPathComponent("w.sqlite").path
        let samples = try FileManager.default.contentsOfDirectory(atPath: TestSupport.repositoryRoot.appendingPathComponent("data/sample").path).sorted()
            .map { TestSupport.repositoryRoot.appendingPathComponent("data/sample/" + $0).path }
        #expect(try await TestSupport.runCLI(["ingest", "--db", db, "--no-geocode"] + samples, folder: folder).status == 0)
        func statePath(_ fingerprint: String) -> URL {
            var hash = StableHash()
            hash.combine(db)
            hash.combine(fingerprint)
            return folder.appendingPathComponent("state/trafficgeo/watch-\(String(UInt64(bitPattern: hash.int64), radix: 16)).json")
        }
        let former = statePath(LegacyWatchFingerprint.text(queries)), current = statePath(WatchMatcher.fingerprint(queries))
        try FileManager.default.createDirectory(at: former.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(Self.releaseState.utf8).write(to: former)
        let out = try await TestSupport.runCLI(["watch", "--db", db, "--watches", folder.appendingPathComponent("watches.json").path, "--once"], folder: folder)
        #expect(out.status == 0, Comment(rawValue: out.stderr))
        #expect(!out.stdout.contains(#""event":"enter""#), "resumed: \(out.stdout.prefix(300))")
        #expect(FileManager.default.fileExists(atPath: current.path) && !FileManager.default.fileExists(atPath: former.path))
        // Without the saved state the same watch sends "enter" for the 6 incidents at home.
        try FileManager.default.removeItem(at: current)
        let fresh = try await TestSupport.runCLI(["watch", "--db", db, "--watches", folder.appendingPathComponent("watches.json").path, "--once"], folder: folder)
        #expect(fresh.stdout.components(separatedBy: #""event":"enter""#).count - 1 == 6, "\(fresh.stdout.prefix(300))")
    }
}
