import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

// PostgresTestServer and StoreBackend are TrafficGeoTestSupport's; what Swift Testing needs of them:
extension PostgresTestServer {
    static var skipReason: Comment { Comment(rawValue: skipReasonText) }
}

extension StoreBackend: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

/// What every `IncidentStore` must do, run on the SQLite file and on PostGIS alike.
enum StoreContract {
    static func incident(_ id: String, title: String = "A4 : Koeln - Olpe", lat: Double? = 50.9, lon: Double = 7.9,
                         road: String? = "A4", category: IncidentCategory? = .accident, updated: Date? = nil, expires: Date? = nil,
                         source: String = "feed") -> Incident {
        Incident(source: source, id: id, title: title, updated: updated, expires: expires, road: road, category: category,
                 position: lat.map { Coordinate(latitude: $0, longitude: lon) })
    }

    /// The feed ids the store answers for `filter`, checked against `IncidentFilter.matches` on
    /// every stored incident: the store's SQL and the in-memory test must agree.
    static func answeredIDs(_ store: any IncidentStore, _ filter: IncidentFilter) throws -> Set<String> {
        var out: Set<String> = []
        try store.all(filter: filter, locatedOnly: false) { out.insert($0.incident.id) }
        let matched = try store.allIncidents().filter { filter.matches($0) }.map(\.incident.id)
        #expect(Set(matched) == out, "the store's SQL and IncidentFilter.matches disagree: \(matched.sorted()) \(out.sorted())")
        return out
    }

    @discardableResult
    static func ingest(_ store: any IncidentStore, _ incidents: [Incident], snapshot: SnapshotScope? = nil, skipped: [SkippedEntry] = [],
                       source: String = "feed", now: Date = Date()) throws -> IngestSummary {
        try store.ingest(source: source, snapshot: snapshot, now: now) { emit in
            for i in incidents { try emit(.incident(i)) }
            for s in skipped { try emit(.skipped(s)) }
        }
    }

    // MARK: - Ingest

    static func ingestIsIdempotentAndUpdatesInPlace(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let first = try ingest(store, (1...30).map { incident("i\($0)", lat: 50 + Double($0) / 100) })
        #expect(first.new == 30 && first.updated == 0 && first.unchanged == 0)
        let again = try ingest(store, (1...30).map { incident("i\($0)", lat: 50 + Double($0) / 100) })
        #expect(again.new == 0 && again.updated == 0 && again.unchanged == 30)
        // One changed, one new, a repeated id in the same feed (the later entry wins).
        let third = try ingest(store, [incident("i1", title: "A4 : changed", lat: 50.01), incident("i31", lat: 51),
                                       incident("i31", title: "A4 : later", lat: 51)])
        #expect(third.new == 1 && third.updated == 2 && third.unchanged == 0)
        let all = try store.allIncidents()
        #expect(all.count == 31)
        #expect(all.first { $0.incident.id == "i1" }?.incident.title == "A4 : changed")
        #expect(all.first { $0.incident.id == "i31" }?.incident.title == "A4 : later")
        #expect(Set(all.map(\.storeID)).count == 31)
        // A feed id means the same incident only within its source.
        let other = try ingest(store, [incident("i1", source: "other")], source: "other")
        #expect(other.new == 1)
        #expect(try store.count(filter: IncidentFilter(), locatedOnly: false) == 32)
        #expect(try store.checkIntegrity().isEmpty)
    }

    /// Feeds bigger than a batch (the PostGIS store writes 5,000 rows at a time, the first big
    /// load into an empty store without its indexes): ids repeated across batches, then a second
    /// ingest that changes some and leaves the rest.
    static func bigIngestsInBatchesCountAsSmallOnes(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        // 12,000 entries, 10,000 ids: the last 2,000 repeat the first (the later entry wins).
        var first: [Incident] = []
        for n in 0..<12_000 {
            let lat = 47 + Double(n % 10_000) / 2_000, lon = 6 + Double(n % 10_000 % 97) / 10
            first.append(incident("i\(n % 10_000)", title: n >= 10_000 ? "A4 : again \(n)" : "A4 : first \(n)", lat: lat, lon: lon))
        }
        let a = try ingest(store, first)
        #expect(a.new == 10_000 && a.updated == 2_000 && a.unchanged == 0)
        #expect(try store.count(filter: IncidentFilter(), locatedOnly: true) == 10_000)
        #expect(try store.count(filter: IncidentFilter(search: "again"), locatedOnly: false) == 2_000)
        #expect(try store.checkIntegrity().isEmpty)
        // Every tenth changes; the rest are as stored.
        var second: [Incident] = []
        for n in 0..<10_000 {
            let title: String
            if n % 10 == 0 { title = "A4 : changed \(n)" } else if n < 2_000 { title = "A4 : again \(n + 10_000)" } else { title = "A4 : first \(n)" }
            let lat = 47 + Double(n) / 2_000, lon = 6 + Double(n % 97) / 10
            second.append(incident("i\(n)", title: title, lat: lat, lon: lon))
        }
        let b = try ingest(store, second)
        #expect(b.new == 0 && b.updated == 1_000 && b.unchanged == 9_000)
        let q = Coordinate(latitude: 49, longitude: 7)
        let nearest = try store.nearest(to: q, limit: 5, maxDistance: nil, filter: IncidentFilter())
        let truth: [String] = second.map { (id: $0.id, d: Geodesic.distance(from: q, to: $0.position!)) }.sorted { $0.d < $1.d }.prefix(5).map { $0.id }
        #expect(nearest.map { $0.incident.id } == truth)
        #expect(try store.checkIntegrity().isEmpty)
    }

    /// Every field an incident has comes back as it went in.
    static func everyFieldRoundTrips(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        var full = Incident(source: "feed", id: "full", title: "A4 : Köln → Olpe \"quoted\" 'single' \\ back",
                            summary: "Zwischen AS Wenden und AS Krombach; 50 % ✓ 🚗", weblink: "https://example.org/x?a=1&b=2",
                            iconURL: "https://example.org/i.png", updated: Date(timeIntervalSince1970: 1_747_630_800.5),
                            expires: Date(timeIntervalSince1970: 1_747_700_000), road: "A4", category: .roadworks,
                            position: Coordinate(latitude: 50.991660000000001, longitude: -0.000000123456789),
                            segment: [Coordinate(latitude: 50.99, longitude: 7.92), Coordinate(latitude: 50.98, longitude: 7.95),
                                      Coordinate(latitude: -89.9999999, longitude: 179.9999999)])
        full.positionSource = PositionSource(kind: .geocoder, geocoder: "nominatim", query: "Wenden | Krombach", precision: .junction, confidence: 0.75)
        full.properties = ["lanes": "2", "Straße": "Köln", "empty": "", "json": "{\"a\":[1,2]}"]
        let bare = Incident(source: "feed", id: "bare", title: "")
        var one = incident("one-point")
        one.segment = [Coordinate(latitude: 1, longitude: 2)]
        try ingest(store, [full, bare, one])
        let stored = try store.allIncidents()
        #expect(stored.count == 3)
        #expect(stored.first { $0.incident.id == "full" }?.incident == full)
        #expect(stored.first { $0.incident.id == "bare" }?.incident == bare)
        #expect(stored.first { $0.incident.id == "one-point" }?.incident == one)
        // Unchanged when read again: the change hash covers exactly what is kept.
        #expect(try ingest(store, [full, bare, one]).unchanged == 3)
    }

    static func snapshotsEndWhatIsGoneAndReopenWhatReturns(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        #expect(try store.changeFeedBounds() == ChangeFeedBounds(first: 1, latest: 0))
        let first = try ingest(store, (1...5).map { incident("i\($0)", lat: 50 + Double($0) / 10) }, snapshot: .wholeSource)
        #expect(first.changes == 1...5)
        let events = try store.changes(after: 0, limit: 100)
        #expect(events.map(\.sequence) == [1, 2, 3, 4, 5] && events.allSatisfy { $0.kind == .new })
        let second = try ingest(store, [incident("i1", title: "A4 : changed", lat: 50.1)] + (3...6).map { incident("i\($0)", lat: 50 + Double($0) / 10) },
                                snapshot: .wholeSource)
        #expect(second.new == 1 && second.updated == 1 && second.ended == 1 && second.unchanged == 3)
        let later = try store.changes(after: 5, limit: 100)
        #expect(later.map(\.kind) == [.new, .updated, .ended] && later.map(\.sequence) == [6, 7, 8])
        let byID = try store.incidents(ids: later.map(\.storeID))
        #expect(later.map { byID[$0.storeID]!.incident.id } == ["i6", "i1", "i2"])
        #expect(byID[later[2].storeID]!.ended != nil)
        #expect(try store.changes(after: 2, limit: 2).map(\.sequence) == [3, 4])
        // i2 listed again: reopened, one updated event.
        let third = try ingest(store, [incident("i2", lat: 50.2)])
        #expect(third.updated == 1 && third.changes == 9...9)
        #expect(try store.incidents(ids: [later[2].storeID])[later[2].storeID]?.ended == nil)
        // A broken entry that names an incident keeps it.
        let fourth = try ingest(store, [incident("i1", title: "A4 : changed", lat: 50.1)], snapshot: .wholeSource,
                                skipped: [SkippedEntry(index: 2, entryID: "i3", reason: "broken")])
        #expect(fourth.ended == 4, "i2, i4, i5 and i6 end; i3's entry was unreadable, so it is kept")
        // Parts: only incidents of the parts named end.
        var a = incident("p1", source: "parts"), b = incident("p2", source: "parts")
        a.properties[Incident.snapshotPartProperty] = "A1"
        b.properties[Incident.snapshotPartProperty] = "A2"
        try ingest(store, [a, b], source: "parts")
        let parted = try store.ingest(source: "parts", snapshot: SnapshotScope(parts: ["A1"])) { _ in }
        #expect(parted.ended == 1)
        #expect(try store.pruneEnded(before: Date().addingTimeInterval(60)) == 5)
        let bounds = try store.changeFeedBounds()
        #expect(try store.changes(after: bounds.latest - 5, limit: 10).map(\.kind) == Array(repeating: .removed, count: 5))
        #expect(try store.firstChange(atOrAfter: Date(timeIntervalSince1970: 0)) == 1)
        #expect(try store.pruneChanges(before: Date().addingTimeInterval(60)) == Int(bounds.latest))
        #expect(try store.changeFeedBounds() == ChangeFeedBounds(first: bounds.latest + 1, latest: bounds.latest))
        // Numbers are never reused after pruning.
        #expect(try ingest(store, [incident("new")]).changes == (bounds.latest + 1)...(bounds.latest + 1))
    }

    /// A feed that says an incident is over (`Incident.endedAt`: DATEX II cancel/end, Open511
    /// ARCHIVED) ends it, once; re-reading it ends nothing again, changing it keeps it ended.
    static func incidentsTheFeedEndsEndOnce(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let now = Date()
        try ingest(store, [incident("e1"), incident("e2", lat: 51)], now: now)
        var over = incident("e1")
        over.endedAt = now.addingTimeInterval(-3600)
        var bornOver = incident("e3", lat: 52)
        bornOver.endedAt = now.addingTimeInterval(-60)
        let told = try ingest(store, [over, incident("e2", lat: 51), bornOver], now: now)
        #expect(told.ended == 2 && told.new == 1 && told.unchanged == 2, "\(told)")
        let events = try store.changes(after: 2, limit: 10)
        #expect(events.map(\.kind) == [.new, .ended, .ended])
        let stored = try store.incidents(ids: events.map(\.storeID))
        let endedIDs = Set(events.filter { $0.kind == .ended }.compactMap { stored[$0.storeID]?.incident.id })
        #expect(endedIDs == ["e1", "e3"])
        let e1 = try #require(stored.values.first { $0.incident.id == "e1" })
        #expect(abs(try #require(e1.ended).timeIntervalSince(over.endedAt!)) < 1, "ended when the feed says")
        // Read again, and read again changed: no events of ending, no reopening.
        let again = try ingest(store, [over, incident("e2", lat: 51), bornOver], now: now.addingTimeInterval(10))
        #expect(again.ended == 0 && again.updated == 0 && again.changes == nil, "\(again)")
        var changed = over
        changed.title = "A4 : Koeln - Olpe, geräumt"
        let third = try ingest(store, [changed], now: now.addingTimeInterval(20))
        #expect(third.updated == 1 && third.ended == 0, "\(third)")
        #expect(try store.incidents(ids: [e1.storeID])[e1.storeID]?.ended != nil, "still over")
        // Listed without the word that it is over: reopened.
        let reopened = try ingest(store, [incident("e1")], now: now.addingTimeInterval(30))
        let reopenedEnd = try store.incidents(ids: [e1.storeID])[e1.storeID]?.ended
        #expect(reopened.updated == 1 && reopenedEnd == nil)
    }

    // MARK: - Geocoding

    static func geocodingOutcomesAreRecorded(_ backend: StoreBackend) async throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        try ingest(store, [incident("a", lat: nil), incident("b", lat: nil), incident("c", lat: nil), incident("d")])
        var pending = try await store.pendingGeocodes()
        #expect(pending.map(\.incident.id) == ["a", "b", "c"])
        let found = LocatedPosition(position: Coordinate(latitude: 51, longitude: 7.5), segment: nil, precision: .junction, confidence: 0.8,
                                    provider: "gazetteer", queries: ["Wenden", "Krombach"])
        try await store.recordGeocode(storeID: pending[0].storeID, result: .success(found), geocoder: "chain")
        try await store.recordGeocode(storeID: pending[1].storeID, result: .success(nil), geocoder: "chain")
        try await store.recordGeocode(storeID: pending[2].storeID, result: .failure(.timeout(provider: "x", seconds: 10)), geocoder: "chain")
        pending = try await store.pendingGeocodes()
        #expect(pending.map(\.incident.id) == ["c"], "failed ones are retried, not-found ones are not")
        await #expect(try store.pendingGeocodes(retryNotFound: true).map(\.incident.id) == ["b", "c"])
        let a = try await #require(try store.allIncidents().first { $0.incident.id == "a" })
        #expect(a.incident.position == found.position)
        #expect(a.incident.positionSource?.kind == .geocoder && a.incident.positionSource?.precision == .junction)
        await #expect(try store.nearest(to: found.position, limit: 1, maxDistance: nil, filter: IncidentFilter()).first?.incident.id == "a")
        // The geocoder's position is kept while the feed says the same words without coordinates.
        #expect(try ingest(store, [incident("a", lat: nil)]).unchanged == 1)
        await #expect(try store.incident(id: a.storeID)?.incident.position == found.position)
        // Geocoded positions are filtered by confidence; feed positions always pass.
        var confident = IncidentFilter()
        confident.minConfidence = 0.9
        await #expect(try store.count(filter: confident, locatedOnly: true) == 1)
        // An incident with no position has no confidence and no precision but none: b (not found)
        // and c (failed) pass neither a confidence nor a precision of a place (a new-user trial
        // found them passing both), and the in-memory test agrees.
        await #expect(try store.count(filter: confident, locatedOnly: false) == 1)
        var atJunctions = IncidentFilter(), unplaced = IncidentFilter()
        atJunctions.precisions = [.junction]
        unplaced.precisions = [.none]
        await #expect(try store.count(filter: atJunctions, locatedOnly: false) == 2, "a (a junction) and d (the feed's)")
        await #expect(try store.count(filter: unplaced, locatedOnly: false) == 3, "b and c (no position) and d (the feed's)")
        let everything = try await store.allIncidents()
        for filter in [confident, atJunctions, unplaced] {
            let kept = everything.filter { filter.matches($0) }.count
            await #expect(try store.count(filter: filter, locatedOnly: false) == kept, "\(filter.precisions) \(String(describing: filter.minConfidence))")
        }
        // The answer cache.
        let answer = GeocodeAnswer(provider: "nominatim", candidates: [GeocodeCandidate(coordinate: Coordinate(latitude: 50, longitude: 8), name: "Köln", kind: .town)])
        #expect(try await store.cachedAnswer(for: "nominatim|köln") == nil)
        try await store.storeAnswer(answer, for: "nominatim|köln")
        let cached = try await store.cachedAnswer(for: "nominatim|köln")
        #expect(cached?.candidates == answer.candidates && cached?.fromCache == true)
        await #expect(try store.statistics().geocodeCacheEntries == 1)
    }

    // MARK: - Queries

    /// The lean box scan (a map's view: ids and positions, nothing decoded) holds exactly what
    /// the box query holds, in store-id order, for a small box (the index), a large one (a scan),
    /// one across the antimeridian, and with a filter.
    static func boxNeighboursAreTheBoxQuerysIncidents(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        var list: [Incident] = []
        for i in 0..<300 {
            let lat = -60 + Double((i * 37) % 120) + Double(i % 7) / 10
            var lon = 150 + Double((i * 53) % 60)
            if lon > 180 { lon -= 360 }
            list.append(incident("b\(i)", lat: i % 13 == 0 ? nil : lat, lon: lon, road: i % 2 == 0 ? "A1" : "A3"))
        }
        try ingest(store, list)
        let boxes = [LonLatBox(west: 151, south: -59, east: 179, north: -31), LonLatBox(west: 150, south: -60, east: 200 - 360, north: 60),
                     LonLatBox(west: 175, south: -50, east: -170, north: 50), LonLatBox(west: -180, south: -90, east: 180, north: 90)]
        for box in boxes {
            for filter in [IncidentFilter(), IncidentFilter(road: "A3")] {
                var expected: [Int64] = []
                try store.inBoundingBox(box, filter: filter) { expected.append($0.stored.storeID) }
                let lean = try store.withNeighbourSearch { try $0.boxNeighbours(box, filter: filter) }
                #expect(lean.map(\.storeID) == expected.sorted(), "\(box) \(filter.roads)")
                #expect(!expected.isEmpty && lean.allSatisfy { box.contains($0.position) })
            }
        }
    }

    static func filtersPagesAndCounts(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)
        var list: [Incident] = []
        for i in 0..<40 {
            list.append(incident("i\(i)", title: i % 4 == 0 ? "A1 : Köln - Dortmund" : "A3 : Frankfurt - Würzburg", lat: i % 5 == 0 ? nil : 50 + Double(i) / 100,
                                 road: i % 4 == 0 ? "A1" : "A3", category: i % 2 == 0 ? .accident : .roadworks,
                                 updated: t0.addingTimeInterval(Double(i) * 60), expires: t0.addingTimeInterval(Double(i) * 60 + 600)))
        }
        try ingest(store, list)
        func ids(_ filter: IncidentFilter, located: Bool = false) throws -> [String] {
            var out: [String] = []
            try store.all(filter: filter, locatedOnly: located) { out.append($0.incident.id) }
            return out
        }
        let everything = try ids(IncidentFilter())
        // Store order is each store's own (the SQLite file's follows a space-filling curve).
        #expect(Set(everything) == Set(list.map(\.id)) && everything.count == 40)
        #expect(try ids(IncidentFilter(), located: true).count == 32)
        #expect(Set(try ids(IncidentFilter(road: "a 1"))) == Set(list.filter { $0.road == "A1" }.map(\.id)))
        #expect(try ids(IncidentFilter(categories: [.roadworks])).count == 20)
        #expect(Set(try ids(IncidentFilter(search: "koeln"))) == Set(list.filter { $0.road == "A1" }.map(\.id)))
        #expect(try ids(IncidentFilter(search: "KOLN dortmund")).count == 10)
        #expect(try ids(IncidentFilter(search: "wurzburg")).count == 30)
        #expect(Set(try ids(IncidentFilter(since: t0.addingTimeInterval(600), until: t0.addingTimeInterval(1200)))) == Set((10..<20).map { "i\($0)" }))
        #expect(Set(try ids(IncidentFilter(activeAt: t0.addingTimeInterval(30 * 60 + 1)))) == Set((21...30).map { "i\($0)" }))
        #expect(try ids(IncidentFilter(source: "nope")).isEmpty)
        #expect(try store.count(filter: IncidentFilter(road: "A3"), locatedOnly: true) == ids(IncidentFilter(road: "A3"), located: true).count)
        // Pages walk the whole collection exactly once.
        var paged: [String] = []
        var offset = 0
        while true {
            let page = try store.all(filter: IncidentFilter(), locatedOnly: false, offset: offset, limit: 7)
            paged += page.map(\.incident.id)
            offset += page.count
            if page.count < 7 { break }
        }
        #expect(paged == everything)
        // Statistics agree.
        let stats = try store.statistics(now: t0.addingTimeInterval(30 * 60 + 1))
        #expect(stats.total == 40 && stats.located == 32 && stats.active == 10 && stats.expired == 21 && stats.upcoming == 9 && stats.ended == 0)
        #expect(stats.byRoad.first { $0.0 == "A1" }?.1 == 10)
        #expect(try store.pruneExpired(before: t0.addingTimeInterval(20 * 60 + 600)) == 20)
        #expect(try store.count(filter: IncidentFilter(), locatedOnly: false) == 20)
        #expect(try store.checkIntegrity().isEmpty)
    }

    /// In effect from the feed's own start (`valid_from`), not its last update; severity on one
    /// scale; the store's SQL and `IncidentFilter.matches` (what `watch` uses) agree.
    static func validityAndSeverity(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)
        func made(_ id: String, start: Date?, updated: Date, expires: Date? = nil, severity: String? = nil) -> Incident {
            var i = incident(id, updated: updated, expires: expires)
            if let start { i.properties["valid_from"] = TimestampParser.format(start) }
            if let severity { i.properties["severity"] = severity }
            return i
        }
        let list = [
            made("updated-after-start", start: t0, updated: t0.addingTimeInterval(7200), severity: "highest"),
            made("planned", start: t0.addingTimeInterval(7200), updated: t0.addingTimeInterval(-86400), severity: "MAJOR"),
            made("no-start", start: nil, updated: t0.addingTimeInterval(-60), expires: t0.addingTimeInterval(3600), severity: "Moderate"),
            made("no-start-later", start: nil, updated: t0.addingTimeInterval(60)),
            made("over", start: t0.addingTimeInterval(-7200), updated: t0.addingTimeInterval(-7200), expires: t0.addingTimeInterval(-1), severity: "low"),
        ]
        try ingest(store, list, now: t0.addingTimeInterval(10_000))
        func ids(_ filter: IncidentFilter) throws -> Set<String> { try answeredIDs(store, filter) }
        #expect(try ids(IncidentFilter(activeAt: t0)) == ["updated-after-start", "no-start"])
        #expect(try ids(IncidentFilter(activeAt: t0.addingTimeInterval(7200))) == ["updated-after-start", "planned", "no-start-later"])
        let stats = try store.statistics(now: t0)
        #expect(stats.active == 2 && stats.upcoming == 2 && stats.expired == 1 && stats.ended == 0 && stats.total == 5, "\(stats.active) \(stats.upcoming) \(stats.expired)")
        var severe = IncidentFilter()
        severe.minSeverity = .high
        #expect(try ids(severe) == ["updated-after-start", "planned"])
        severe.minSeverity = .medium
        #expect(try ids(severe) == ["updated-after-start", "planned", "no-start"])
        severe.minSeverity = .lowest
        #expect(try ids(severe) == ["updated-after-start", "planned", "no-start", "over"])
    }

    /// A road filter finds an incident on any road it is on (WZDx's I-80 and I-35), and with a
    /// country ("fr:A7") only where the feed names that country or none.
    static func roadsOtherRoadsAndCountries(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        var together = incident("together", road: nil)
        together.setRoads(["I-80", "I-35", "I-80"])
        var france = incident("a7-fr", lat: 45.7, lon: 4.8, road: "A7")
        france.properties[Incident.countryProperty] = "fr"
        var germany = incident("a7-de", lat: 53.5, lon: 10.0, road: "A7")
        germany.properties[Incident.countryProperty] = "de"
        let unsaid = incident("a7-csv", lat: 52.0, lon: 9.9, road: "A7")
        try ingest(store, [together, france, germany, unsaid, incident("i35", road: "I-35"), incident("a4")])
        #expect(together.road == "I-80" && together.otherRoads == ["I-35"])
        func ids(_ roads: [String]) throws -> Set<String> {
            var filter = IncidentFilter()
            filter.roads = roads
            return try answeredIDs(store, filter)
        }
        #expect(try ids(["I-35"]) == ["together", "i35"])
        #expect(try ids(["I-80"]) == ["together"])
        #expect(try ids(["A7"]) == ["a7-fr", "a7-de", "a7-csv"])
        #expect(try ids(["fr:A7"]) == ["a7-fr", "a7-csv"], "a feed that names no country is not refused by one")
        #expect(try ids(["de:A7", "I-35"]) == ["a7-de", "a7-csv", "together", "i35"])
        #expect(try ids([RoadCondition("FR:a 7")!.text]) == ["a7-fr", "a7-csv"])
    }

    static func feedHealthIsKept(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let t = Date(timeIntervalSince1970: 1_750_000_000)
        try store.recordFetch(FetchReport(source: "s", at: t, entries: 5))
        try store.recordFetch(FetchReport(source: "s", at: t.addingTimeInterval(60), entries: 0))
        try store.recordFetch(.failure(source: "s", at: t.addingTimeInterval(120), error: "HTTP 503"))
        let health = try #require(try store.feedHealth().first)
        #expect(health == FeedHealth(source: "s", lastAttempt: t.addingTimeInterval(120), lastSuccess: t.addingTimeInterval(60), lastError: "HTTP 503",
                                     lastErrorAt: t.addingTimeInterval(120), emptyStreak: 1, failureStreak: 1, lastEntries: 0))
    }
}

@Suite("Store contract: SQLite")
struct SQLiteStoreContractTests {
    @Test func ingestIsIdempotentAndUpdatesInPlace() throws { try StoreContract.ingestIsIdempotentAndUpdatesInPlace(.sqlite) }
    @Test func everyFieldRoundTrips() throws { try StoreContract.everyFieldRoundTrips(.sqlite) }
    @Test func bigIngestsInBatchesCountAsSmallOnes() throws { try StoreContract.bigIngestsInBatchesCountAsSmallOnes(.sqlite) }
    @Test func snapshotsEndWhatIsGoneAndReopenWhatReturns() throws { try StoreContract.snapshotsEndWhatIsGoneAndReopenWhatReturns(.sqlite) }
    @Test func incidentsTheFeedEndsEndOnce() throws { try StoreContract.incidentsTheFeedEndsEndOnce(.sqlite) }
    @Test func geocodingOutcomesAreRecorded() async throws { try await StoreContract.geocodingOutcomesAreRecorded(.sqlite) }
    @Test func filtersPagesAndCounts() throws { try StoreContract.filtersPagesAndCounts(.sqlite) }
    @Test func boxNeighboursAreTheBoxQuerysIncidents() throws { try StoreContract.boxNeighboursAreTheBoxQuerysIncidents(.sqlite) }
    @Test func validityAndSeverity() throws { try StoreContract.validityAndSeverity(.sqlite) }
    @Test func roadsOtherRoadsAndCountries() throws { try StoreContract.roadsOtherRoadsAndCountries(.sqlite) }
    @Test func feedHealthIsKept() throws { try StoreContract.feedHealthIsKept(.sqlite) }
    @Test func junctionKnowledgeIsLearnedAndReplaced() throws { try StoreContract.junctionKnowledgeIsLearnedAndReplaced(.sqlite) }
    @Test func adoptingAFormerSourceCountsItsJunctionKnowledgeOnce() throws { try StoreContract.adoptingAFormerSourceCountsItsJunctionKnowledgeOnce(.sqlite) }
    @Test func failuresSayTheirKind() throws { try StoreContract.failuresSayTheirKind(.sqlite) }
    @Test func aSourceReadingIsKept() throws { try StoreContract.aSourceReadingIsKept(.sqlite) }
}

@Suite("Store contract: PostGIS", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct PostGISStoreContractTests {
    @Test func ingestIsIdempotentAndUpdatesInPlace() throws { try StoreContract.ingestIsIdempotentAndUpdatesInPlace(.postgis) }
    @Test func everyFieldRoundTrips() throws { try StoreContract.everyFieldRoundTrips(.postgis) }
    @Test func bigIngestsInBatchesCountAsSmallOnes() throws { try StoreContract.bigIngestsInBatchesCountAsSmallOnes(.postgis) }
    @Test func snapshotsEndWhatIsGoneAndReopenWhatReturns() throws { try StoreContract.snapshotsEndWhatIsGoneAndReopenWhatReturns(.postgis) }
    @Test func incidentsTheFeedEndsEndOnce() throws { try StoreContract.incidentsTheFeedEndsEndOnce(.postgis) }
    @Test func geocodingOutcomesAreRecorded() async throws { try await StoreContract.geocodingOutcomesAreRecorded(.postgis) }
    @Test func filtersPagesAndCounts() throws { try StoreContract.filtersPagesAndCounts(.postgis) }
    @Test func boxNeighboursAreTheBoxQuerysIncidents() throws { try StoreContract.boxNeighboursAreTheBoxQuerysIncidents(.postgis) }
    @Test func validityAndSeverity() throws { try StoreContract.validityAndSeverity(.postgis) }
    @Test func roadsOtherRoadsAndCountries() throws { try StoreContract.roadsOtherRoadsAndCountries(.postgis) }
    @Test func feedHealthIsKept() throws { try StoreContract.feedHealthIsKept(.postgis) }
    @Test func junctionKnowledgeIsLearnedAndReplaced() throws { try StoreContract.junctionKnowledgeIsLearnedAndReplaced(.postgis) }
    @Test func adoptingAFormerSourceCountsItsJunctionKnowledgeOnce() throws { try StoreContract.adoptingAFormerSourceCountsItsJunctionKnowledgeOnce(.postgis) }
    @Test func failuresSayTheirKind() throws { try StoreContract.failuresSayTheirKind(.postgis) }
    @Test func aSourceReadingIsKept() throws { try StoreContract.aSourceReadingIsKept(.postgis) }
}
