import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
@testable import TrafficGeoWatch

/// The change feed and snapshot ending at the store level.
@Suite struct ChangeFeedTests {
    static func incident(_ id: String, title: String = "A4 : Koeln - Olpe", lat: Double = 50.9, lon: Double = 7.9, expires: Date? = nil) -> Incident {
        Incident(source: "feed", id: id, title: title, expires: expires, road: "A4", position: Coordinate(latitude: lat, longitude: lon))
    }

    static func ingest(_ store: SQLiteIncidentStore, _ incidents: [Incident], snapshot: SnapshotScope? = nil, skipped: [SkippedEntry] = [],
                       now: Date = Date()) throws -> IngestSummary {
        try store.ingest(source: "feed", snapshot: snapshot, now: now) { emit in
            for i in incidents { try emit(.incident(i)) }
            for s in skipped { try emit(.skipped(s)) }
        }
    }

    @Test func everyIngestRecordsNewUpdatedAndEndedWithRisingSequenceNumbers() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        #expect(try store.changeFeedBounds() == ChangeFeedBounds(first: 1, latest: 0))

        let first = try Self.ingest(store, (1...5).map { Self.incident("i\($0)", lat: 50 + Double($0) / 10) }, snapshot: .wholeSource)
        #expect(first.changes == 1...5)
        let events = try store.changes(after: 0, limit: 100)
        #expect(events.map(\.sequence) == [1, 2, 3, 4, 5] && events.allSatisfy { $0.kind == .new })
        #expect(Set(events.map(\.storeID)).count == 5)

        // i1 changes, i2 vanishes, i3..i5 stay, i6 is new; re-reading unchanged records nothing.
        let second = try Self.ingest(store, [Self.incident("i1", title: "A4 : changed", lat: 50.1)] + (3...6).map { Self.incident("i\($0)", lat: 50 + Double($0) / 10) },
                                     snapshot: .wholeSource)
        #expect(second.new == 1 && second.updated == 1 && second.ended == 1 && second.unchanged == 3)
        let later = try store.changes(after: 5, limit: 100)
        #expect(later.map(\.kind) == [.new, .updated, .ended] && later.map(\.sequence) == [6, 7, 8])
        let byID = try store.incidents(ids: later.map(\.storeID))
        #expect(later.map { byID[$0.storeID]!.incident.id } == ["i6", "i1", "i2"])
        #expect(byID[later[2].storeID]!.ended != nil)

        // Paging: from the middle of a run, a limit inside a run.
        #expect(try store.changes(after: 2, limit: 2).map(\.sequence) == [3, 4])
        #expect(try store.changes(after: 8, limit: 10).isEmpty)

        // Not a snapshot: nothing ends.
        let third = try Self.ingest(store, [Self.incident("i3", lat: 50.3)])
        #expect(third.ended == 0 && third.changes == nil)

        // A broken entry that names an incident keeps it; prune records removals; pruning the
        // feed never reuses a number.
        let fourth = try Self.ingest(store, [Self.incident("i1", title: "A4 : changed", lat: 50.1)], snapshot: .wholeSource,
                                     skipped: [SkippedEntry(index: 2, entryID: "i3", reason: "broken")])
        #expect(fourth.ended == 3, "i4, i5 and i6 end; i3's entry was unreadable, so it is kept")
        #expect(try store.pruneEnded(before: Date().addingTimeInterval(60)) == 4)
        let removed = try store.changes(after: 11, limit: 10)
        #expect(removed.count == 4 && removed.allSatisfy { $0.kind == .removed } && removed.first?.sequence == 12)
        #expect(try store.pruneChanges(before: Date().addingTimeInterval(60)) == 15)
        #expect(try store.changeFeedBounds() == ChangeFeedBounds(first: 16, latest: 15))
        let fifth = try Self.ingest(store, [Self.incident("i9")])
        #expect(fifth.changes == 16...16)
    }

    @Test func aSnapshotOfPartsEndsOnlyInThoseParts() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        func part(_ i: Incident, _ p: String) -> Incident {
            var i = i
            i.properties[Incident.snapshotPartProperty] = p
            return i
        }
        _ = try Self.ingest(store, [part(Self.incident("a"), "A1/warning"), part(Self.incident("b"), "A3/warning")],
                            snapshot: SnapshotScope(parts: ["A1/warning", "A3/warning"]))
        // A3 failed this time: only A1's part was read whole; both lists are empty of a and b.
        let summary = try Self.ingest(store, [], snapshot: SnapshotScope(parts: ["A1/warning"]))
        #expect(summary.ended == 1)
        #expect(try store.allIncidents().filter { $0.ended != nil }.map(\.incident.id) == ["a"])
    }

    @Test func endedIncidentsAreNotGeocodedAndAGeocodeDoesNotReopenThem() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        let unplaced = Incident(source: "feed", id: "u", title: "A4 : Koeln - Olpe")
        _ = try Self.ingest(store, [unplaced, Self.incident("p")], snapshot: .wholeSource)
        #expect(try store.pendingGeocodes().map(\.incident.id) == ["u"])
        _ = try Self.ingest(store, [Self.incident("p")], snapshot: .wholeSource)
        #expect(try store.pendingGeocodes().isEmpty, "an ended incident is not worth a geocoder's time")
        let ended = try #require(try store.allIncidents().first { $0.incident.id == "u" })
        try store.recordGeocode(storeID: ended.storeID, result: .success(LocatedPosition(position: Coordinate(latitude: 51, longitude: 7.8), precision: .town, confidence: 0.5, provider: "test", queries: ["Olpe"])),
                                geocoder: "test")
        #expect(try store.incident(id: ended.storeID)?.ended != nil, "placing it does not reopen it")
        // Listed again: reopened, an update.
        let again = try Self.ingest(store, [unplaced, Self.incident("p")], snapshot: .wholeSource)
        #expect(again.updated == 1 && again.ended == 0)
        #expect(try store.incident(id: ended.storeID)?.ended == nil)
    }

    @Test func filtersMatchInMemoryAsTheyDoInSQL() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        // Whole seconds, as feeds give times (a Date's last bit may differ from the stored REAL's).
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded())
        var incidents: [Incident] = []
        for k in 0..<40 {
            var i = Self.incident("f\(k)", title: k % 3 == 0 ? "A4 : Köln - Olpe Unfall" : "A1 : Bremen Baustelle", lat: 50 + Double(k) / 100,
                                  expires: k % 4 == 0 ? now.addingTimeInterval(-60) : nil)
            i.road = k % 2 == 0 ? "A4" : "A1"
            i.category = k % 5 == 0 ? .accident : .roadworks
            i.updated = now.addingTimeInterval(Double(k - 20) * 60)
            if k % 7 == 0 { i.positionSource = PositionSource(kind: .geocoder, geocoder: "g", precision: .town, confidence: Double(k % 10) / 10) }
            incidents.append(i)
        }
        _ = try Self.ingest(store, incidents)
        var filters: [IncidentFilter] = [
            IncidentFilter(activeAt: now), IncidentFilter(since: now), IncidentFilter(until: now), IncidentFilter(road: "A4"),
            IncidentFilter(categories: [.accident]), IncidentFilter(search: "koeln"), IncidentFilter(search: "koln unfall"),
            IncidentFilter(source: "feed"), IncidentFilter(source: "other"),
        ]
        var confident = IncidentFilter()
        confident.minConfidence = 0.5
        var precise = IncidentFilter()
        precise.precisions = [.junction]
        filters += [confident, precise]
        let all = try store.allIncidents()
        for filter in filters {
            var bySQL = Set<String>()
            try store.all(filter: filter, locatedOnly: false) { bySQL.insert($0.incident.id) }
            let inMemory = Set(all.filter { filter.matches($0) }.map(\.incident.id))
            #expect(bySQL == inMemory, "\(filter)")
        }
    }
}

@Suite struct WatchExpiryTests {
    @Test func membersLeaveWhenTheirExpiryPassesWithoutAnyIngest() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        let now = Date()
        _ = try ChangeFeedTests.ingest(store, [ChangeFeedTests.incident("soon", expires: now.addingTimeInterval(3600)),
                                              ChangeFeedTests.incident("later", lat: 50.91)])
        var matcher = WatchMatcher(queries: [StandingQuery(name: "q", area: .circle(center: Coordinate(latitude: 50.9, longitude: 7.9), radius: 5000),
                                                           filter: IncidentFilter())], state: nil)
        var events: [WatchEvent] = []
        try await matcher.poll(store, now: now) { batch, _ in events += batch }
        #expect(events.map { "\($0.kind.rawValue) \($0.incident.id)" }.sorted() == ["enter later", "enter soon"])
        events = []
        try await matcher.poll(store, now: now.addingTimeInterval(7200)) { batch, _ in events += batch }
        #expect(events.map { "\($0.kind.rawValue) \($0.incident.id) \($0.reason ?? "")" } == ["leave soon expired"])
        #expect(matcher.state.inside["q"]?.count == 1)
    }
}
