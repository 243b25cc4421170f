import Foundation
@testable import TrafficGeoGeocoding
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

/// Reports and events (docs/conflation.md) on every store: what several feeds report of one
/// incident is one event, kept with every report, incrementally as reports arrive, change, end,
/// move away and are pruned.
enum EventContract {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)

    /// A report on the A4 near Wenden, towards Köln unless said otherwise.
    static func report(_ id: String, source: String, lat: Double = 50.9800, lon: Double = 7.8900, category: IncidentCategory = .queue,
                       words: String = "A4: Olpe -> Köln, zwischen AS Wenden und AS Krombach", updated: Date = now,
                       expires: Date? = nil) -> Incident {
        Incident(source: source, id: id, title: "A4 | Wenden - Krombach", summary: words, updated: updated, expires: expires, road: "A4",
                 category: category, position: Coordinate(latitude: lat, longitude: lon), positionSource: .feed)
    }

    static func ingest(_ store: any IncidentStore, _ reports: [Incident], source: String, snapshot: Bool = false,
                       at: Date = now) throws -> IngestSummary {
        try store.ingest(source: source, snapshot: snapshot ? .wholeSource : nil, now: at) { emit in
            for r in reports { try emit(.incident(r)) }
        }
    }

    static func events(_ store: any IncidentStore) throws -> [StoredIncident] {
        var all: [StoredIncident] = []
        try store.all(filter: IncidentFilter(), locatedOnly: false) { all.append($0.stored) }
        return all
    }

    static func reports(_ store: any IncidentStore) throws -> [StoredIncident] {
        var filter = IncidentFilter()
        filter.reports = true
        var all: [StoredIncident] = []
        try store.all(filter: filter, locatedOnly: false) { all.append($0.stored) }
        return all
    }

    /// Three feeds report one queue (the points a few hundred metres apart, minutes apart): one
    /// event of three reports, whose id is the first report's, answered once by nearest; each
    /// report answers `--reports` with its event; the change feed says "new" once, then "updated".
    static func threeFeedsMakeOneEvent(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        try ingest(store, [report("a1", source: "autobahn")], source: "autobahn")
        let first = try #require(events(store).first)
        let second = try ingest(store, [report("d1", source: "datex", lat: 50.9820, lon: 7.8930, category: .slowTraffic,
                                               updated: now.addingTimeInterval(300))], source: "datex", at: now.addingTimeInterval(300))
        #expect(second.merged == 1 && second.new == 1)
        try ingest(store, [report("p1", source: "police", lat: 50.9790, lon: 7.8880, updated: now.addingTimeInterval(600))],
                   source: "police", at: now.addingTimeInterval(600))
        let all = try events(store)
        #expect(all.count == 1)
        let event = try #require(all.first)
        #expect(event.storeID == first.storeID, "the event keeps the first report's id")
        #expect(event.role == .event && event.reports.map(\.source) == ["autobahn", "datex", "police"])
        #expect(event.incident.source == "autobahn" && event.incident.id == "a1")
        #expect(event.incident.category == .queue, "the most specific kind of queue and slow traffic")
        #expect(event.incident.updated == now.addingTimeInterval(600), "the latest word")
        let listed = try reports(store)
        #expect(listed.count == 3 && Set(listed.map(\.event)) == [event.storeID] && listed.allSatisfy { $0.role == .member })
        let nearest = try store.nearest(to: Coordinate(latitude: 50.98, longitude: 7.89), limit: 10, maxDistance: nil, filter: IncidentFilter())
        #expect(nearest.map(\.stored.storeID) == [event.storeID])
        var reportFilter = IncidentFilter()
        reportFilter.reports = true
        #expect(try store.nearest(to: Coordinate(latitude: 50.98, longitude: 7.89), limit: 10, maxDistance: nil, filter: reportFilter).count == 3)
        let changes = try store.changes(after: 0, limit: 100)
        #expect(changes.map(\.kind) == [.new, .updated, .updated] && Set(changes.map(\.storeID)) == [event.storeID])
        #expect(try store.incidents(ids: listed.map(\.storeID)).isEmpty, "the change feed's lookups answer events only")
        // A filter on a source finds the event of several through its reports.
        var bySource = IncidentFilter()
        bySource.source = "police"
        #expect(try store.count(filter: bySource, locatedOnly: true) == 1)
        let stats = try store.statistics(now: now)
        #expect(stats.total == 1 && stats.reports == 3 && stats.mergedEvents == 1)
    }

    /// What must stay apart: the other carriageway at the same spot, the same kind further on,
    /// the same place on another day, and two reports of one feed.
    static func distinctIncidentsStayApart(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        try ingest(store, [report("a1", source: "autobahn"), report("a2", source: "autobahn", lat: 50.9805)], source: "autobahn")
        try ingest(store, [
            report("x-other-way", source: "other", lat: 50.9801, words: "A4: Köln -> Olpe, zwischen AS Krombach und AS Wenden"),
            report("x-further", source: "further", lat: 51.0300, lon: 7.9500, words: "A4: Olpe -> Köln, zwischen AS Olpe und AS Wenden"),
            report("x-next-day", source: "nextday", updated: now.addingTimeInterval(30 * 3600)),
        ].map { var r = $0; r.source = "other"; return r }, source: "other")
        let all = try events(store)
        #expect(all.count == 5 && all.allSatisfy { $0.role == .report }, "\(all.map { ($0.incident.id, $0.role) })")
    }

    /// An event ends when its last report ends; a report that moves away splits off (the event
    /// keeps its id, the report becomes an event of its own); pruning composes the events again
    /// and drops those left without reports.
    static func eventsEndSplitAndArePruned(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        try ingest(store, [report("a1", source: "autobahn")], source: "autobahn", snapshot: true)
        try ingest(store, [report("d1", source: "datex", lat: 50.9815)], source: "datex", snapshot: true)
        let event = try #require(events(store).first { $0.role == .event })
        let seen = try store.changeFeedBounds().latest
        try ingest(store, [], source: "autobahn", snapshot: true, at: now.addingTimeInterval(60))
        #expect(try store.incident(id: event.storeID)?.ended == nil, "one report still goes on")
        try ingest(store, [], source: "datex", snapshot: true, at: now.addingTimeInterval(120))
        #expect(try store.incident(id: event.storeID)?.ended != nil, "its last report ended")
        let endings = try store.changes(after: seen, limit: 10)
        // One report ending leaves the event as it was; the last one ends it.
        #expect(endings.map(\.kind) == [.ended] && endings.map(\.storeID) == [event.storeID], "\(endings)")

        // Both listed again; then the second moves 30 km away: it splits off.
        try ingest(store, [report("a1", source: "autobahn")], source: "autobahn", snapshot: true, at: now.addingTimeInterval(180))
        try ingest(store, [report("d1", source: "datex", lat: 50.9815)], source: "datex", snapshot: true, at: now.addingTimeInterval(180))
        #expect(try events(store).count == 1)
        let moved = try ingest(store, [report("d1", source: "datex", lat: 51.25, lon: 7.89)], source: "datex", at: now.addingTimeInterval(240))
        #expect(moved.updated == 1)
        let apart = try events(store)
        #expect(apart.count == 2 && apart.contains { $0.storeID == event.storeID })
        let split = try #require(apart.first { $0.storeID != event.storeID })
        #expect(split.role == .report && split.incident.id == "d1")

        // Pruned: the event without reports goes; the change feed says so.
        #expect(try store.pruneEnded(before: now.addingTimeInterval(10_000)) == 0)
        try ingest(store, [], source: "autobahn", snapshot: true, at: now.addingTimeInterval(300))
        let before = try store.changeFeedBounds().latest
        #expect(try store.pruneEnded(before: now.addingTimeInterval(10_000)) == 1)
        #expect(try store.incident(id: event.storeID) == nil)
        #expect(try store.changes(after: before, limit: 10).map(\.kind) == [.removed])
        #expect(try events(store).map(\.incident.id) == ["d1"])
    }

    /// A report without a position joins its event once a geocoder places it; an older store's
    /// reports are merged by `rebuildEvents`; merging off keeps every report an event of its own.
    static func geocodedReportsJoinAndRebuildMerges(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        try ingest(store, [report("a1", source: "autobahn")], source: "autobahn")
        var unplaced = report("p1", source: "police")
        unplaced.position = nil
        unplaced.positionSource = nil
        try ingest(store, [unplaced], source: "police")
        #expect(try events(store).count == 2)
        let pending = try #require(try store.pendingGeocodes().first)
        let placed = LocatedPosition(position: Coordinate(latitude: 50.9830, longitude: 7.8950), segment: nil, precision: .junction,
                                     confidence: 0.9, provider: "test", queries: ["Wenden"])
        try store.recordGeocode(storeID: pending.storeID, result: .success(placed), geocoder: "test")
        #expect(try events(store).count == 1)
        let merged = try #require(try events(store).first)

        var settings = try store.conflationSettings()
        settings.enabled = false
        try store.setConflationSettings(settings)
        #expect(try store.conflationSettings().enabled == false)
        try ingest(store, [report("d1", source: "datex", lat: 50.9815)], source: "datex")
        #expect(try events(store).count == 2, "merging off")
        settings.enabled = true
        try store.setConflationSettings(settings)
        let rebuilt = try store.rebuildEvents()
        #expect(rebuilt.joined == 2)
        let all = try events(store)
        #expect(all.count == 1 && all[0].reports.count == 3)
        #expect(all[0].storeID == merged.storeID, "an event made again of its reports takes its id back")
        #expect(try reports(store).count == 3)
    }

    /// Rebuilding by the same settings gives every event its id back (links and watches keep
    /// following them) and changes no event of several into a removal in the change feed.
    static func aRebuildKeepsEventIDs(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let roads = ["A4", "A3", "A1", "A45"]
        func on(_ road: String, _ r: Incident, _ k: Int) -> Incident {
            var r = r
            r.road = road
            r.title = "\(road) | Wenden - Krombach"
            r.summary = "\(road): Olpe -> Köln, zwischen AS Wenden und AS Krombach"
            r.position = Coordinate(latitude: 50 + Double(k), longitude: 7.89)
            return r
        }
        try ingest(store, roads.enumerated().map { on($1, report("a\($0)", source: "autobahn"), $0) }, source: "autobahn")
        try ingest(store, roads.enumerated().map { on($1, report("d\($0)", source: "datex"), $0) }, source: "datex", at: now.addingTimeInterval(60))
        try ingest(store, roads.enumerated().map { on($1, report("p\($0)", source: "police"), $0) }, source: "police", at: now.addingTimeInterval(120))
        let before = try events(store).sorted { $0.storeID < $1.storeID }
        #expect(before.count == 4 && before.allSatisfy { $0.reports.count == 3 })
        let seen = try store.changeFeedBounds().latest
        let rebuilt = try store.rebuildEvents()
        #expect(rebuilt.removed.isEmpty, "\(rebuilt)")
        let after = try events(store).sorted { $0.storeID < $1.storeID }
        #expect(after.map(\.storeID) == before.map(\.storeID))
        #expect(after.map { $0.reports.map(\.source) } == before.map { $0.reports.map(\.source) })
        #expect(try store.changes(after: seen, limit: 100).allSatisfy { $0.kind != .removed })
        _ = try store.rebuildEvents()
        #expect(try events(store).map(\.storeID).sorted() == before.map(\.storeID))
        #expect(try reports(store).count == 12)
    }
}

extension EventContract {
    /// A report that gives no end is in effect while it is heard of: updated, first read, or
    /// listed by a snapshot of its feed within `unconfirmedAfter`. A file read once is not "active
    /// now" for ever; a feed followed by snapshots vouches for what it lists, also for an event
    /// it shares with a file's report. The store's SQL, `IncidentFilter.matches` and the
    /// statistics agree.
    static func unconfirmedReportsAreNotInEffect(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let month = now.addingTimeInterval(-30 * 86_400)
        // A file read once: a month-old report, and one with an end.
        try ingest(store, [report("file-old", source: "file", lat: 51.25, updated: month),
                           report("file-ends", source: "file", lat: 51.75, updated: month, expires: now.addingTimeInterval(86_400))],
                   source: "file", at: now)
        // A feed followed by snapshots lists a month-old report of its own, and one the file's
        // last report shares (one event).
        try ingest(store, [report("api-old", source: "api", lat: 52.25, updated: month),
                           report("api-shared", source: "api", updated: month)], source: "api", snapshot: true, at: now)
        try ingest(store, [report("file-shared", source: "file", lat: 50.9801, updated: month)], source: "file", at: now)
        #expect(try events(store).count == 4, "the shared reports are one event")
        func ids(_ filter: IncidentFilter) throws -> Set<String> { try StoreContract.answeredIDs(store, filter) }
        let sharedID = try #require(try events(store).first { $0.role == .event }?.incident.id)
        #expect(try ids(IncidentFilter(activeAt: now)) == ["file-ends", "api-old", sharedID])
        #expect(try store.statistics(now: now).unconfirmed == 1 && store.statistics(now: now).active == 3)
        #expect(try store.incidentCounts(now: now).active == 3)
        var forever = IncidentFilter(activeAt: now)
        forever.unconfirmedAfter = nil
        #expect(try ids(forever).count == 4)
        var longer = IncidentFilter(activeAt: now)
        longer.unconfirmedAfter = 31 * 86_400
        #expect(try ids(longer).count == 4)
        // A month ago the file's report was news.
        #expect(try ids(IncidentFilter(activeAt: month.addingTimeInterval(3600))).contains("file-old"))
        // Works announced a month ahead are news when they begin, and a week on no longer.
        var planned = report("planned", source: "plans", lat: 53.25, updated: month)
        planned.properties["valid_from"] = TimestampParser.format(now.addingTimeInterval(-86_400))
        try ingest(store, [planned], source: "plans", at: now)
        #expect(try ids(IncidentFilter(activeAt: now)).contains("planned"))
        #expect(try !ids(IncidentFilter(activeAt: now.addingTimeInterval(7 * 86_400))).contains("planned"))

        // Eight days on, the feed's next snapshot still lists its own report but no longer the
        // shared one: that event is the file's alone, heard of a month ago, and no longer in effect.
        let later = now.addingTimeInterval(8 * 86_400)
        try ingest(store, [report("api-old", source: "api", lat: 52.25, updated: month)], source: "api", snapshot: true, at: later)
        #expect(try ids(IncidentFilter(activeAt: later)) == ["api-old"], "file-ends expired a week ago")
        let stats = try store.statistics(now: later)
        #expect(stats.unconfirmed == 3 && stats.active == 1 && stats.expired == 1 && stats.active + stats.unconfirmed + stats.upcoming + stats.expired + stats.ended == stats.total,
                "\(stats.active) active, \(stats.unconfirmed) unconfirmed of \(stats.total)")
        #expect(try store.feedHealth().isEmpty || store.feedHealth().allSatisfy { $0.source != "file" || $0.lastSnapshot == nil })
    }

    /// Recurring schedules decide `--active-at` in the store exactly as `RecurringSchedule`
    /// does (the SQLite store calls it; PostGIS has its own function): weekday hours, overnight
    /// windows, exceptions, a named zone across its change to summer time, texts that are no
    /// schedule (which constrain nothing), and an event whose reports differ (no schedule).
    static func recurringSchedulesDecideActiveAt(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        let day = 86_400.0
        let from = RecurringSchedule.dateText(Int((now.timeIntervalSince1970 / day).rounded(.down)) - 3)
        let until = RecurringSchedule.dateText(Int((now.timeIntervalSince1970 / day).rounded(.down)) + 3)
        let today = RecurringSchedule.dateText(Int((now.timeIntervalSince1970 / day).rounded(.down)))
        let schedules: [String: String] = [
            "weekdays": RecurringSchedule(offsetMinutes: -240, rules: [.init(from: from, until: until, days: [1, 2, 3, 4, 5], window: .init(start: 480, end: 1020)!)]).text,
            "nights": RecurringSchedule(offsetMinutes: 120, rules: [.init(from: from, days: [7, 1, 2, 3], window: .init(start: 1320, end: 300)!)],
                                        exceptions: [today: [.init(start: 600, end: 660)!]]).text,
            "zoned": RecurringSchedule(zone: "Europe/Berlin", offsetMinutes: 60, rules: [.init(from: "2025-03-25", until: "2025-04-05", window: .init(start: 120, end: 240)!)]).text,
            "hostile": #"{"offset":0,"rules":[{"days":[1],"from":"2013-02-30","times":"08:00-17:00"}]}"#,
            "hostile2": #"{"offset":"x","rules":[{"days":[1],"from":"2013-02-01","times":"08:00-17:00"}]}"#,
            "raw": #"[{"start_date": "2013-05-01"}]"#,
        ]
        var written: [Incident] = []
        for (n, (id, text)) in schedules.sorted(by: { $0.key < $1.key }).enumerated() {
            var r = report(id, source: "open511", lat: 48 + Double(n), expires: now.addingTimeInterval(400 * day))
            r.properties[RecurringSchedule.property] = text
            r.properties["valid_from"] = "2025-01-01T00:00:00Z"
            written.append(r)
        }
        // Two reports of one event: one on a schedule, one not, so the event is not.
        var scheduled = report("shared-open511", source: "open511", lat: 60, expires: now.addingTimeInterval(400 * day))
        scheduled.properties[RecurringSchedule.property] = schedules["weekdays"]
        try ingest(store, written + [scheduled], source: "open511")
        try ingest(store, [report("shared-api", source: "api", lat: 60.0001, expires: now.addingTimeInterval(400 * day))], source: "api")
        let rows = try events(store)
        let event = try #require(rows.first { $0.role == .event })
        #expect(event.incident.schedule == nil && event.reports.count == 2, "\(event.incident.id) \(event.incident.properties)")
        #expect(rows.first { $0.incident.id == "zoned" }?.incident.schedule?.zone == "Europe/Berlin")

        // Every half hour for a week around now, and across Berlin's change to summer time.
        let spring = TimestampParser.parse("2025-03-29T00:00:00Z")!
        let instants = (0..<336).map { now.addingTimeInterval(-3.5 * day + Double($0) * 1800) } + (0..<96).map { spring.addingTimeInterval(Double($0) * 1800) }
        var mismatches: [String] = []
        var inEffectSomewhere = 0, offSomewhere = 0
        for t in instants {
            var filter = IncidentFilter(activeAt: t)
            filter.unconfirmedAfter = nil
            let expected = Set(rows.filter { filter.matches($0) }.map(\.incident.id))
            let answered = try StoreContract.answeredIDs(store, filter)
            if expected != answered { mismatches.append("\(TimestampParser.format(t)): store \(answered.sorted()), model \(expected.sorted())") }
            if expected.contains("weekdays") { inEffectSomewhere += 1 } else { offSomewhere += 1 }
            for id in ["hostile", "hostile2", "raw"] + (t >= now ? [event.incident.id] : []) { #expect(answered.contains(id), "\(id) has no schedule that constrains it") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(inEffectSomewhere > 0 && offSomewhere > 0)
        // The events' answer and the statistics agree: off its hours, a report is upcoming.
        let answeredNow = Set(try StoreContract.answeredIDs(store, IncidentFilter(activeAt: now)))
        let stats = try store.statistics(now: now)
        #expect(stats.active == answeredNow.count && stats.active + stats.upcoming + stats.expired + stats.ended + stats.unconfirmed == stats.total)
    }
}

@Suite("Events: SQLite")
struct EventContractSQLiteTests {
    @Test func threeFeedsMakeOneEvent() throws { try EventContract.threeFeedsMakeOneEvent(.sqlite) }
    @Test func distinctIncidentsStayApart() throws { try EventContract.distinctIncidentsStayApart(.sqlite) }
    @Test func eventsEndSplitAndArePruned() throws { try EventContract.eventsEndSplitAndArePruned(.sqlite) }
    @Test func geocodedReportsJoinAndRebuildMerges() throws { try EventContract.geocodedReportsJoinAndRebuildMerges(.sqlite) }
    @Test func aRebuildKeepsEventIDs() throws { try EventContract.aRebuildKeepsEventIDs(.sqlite) }
    @Test func unconfirmedReportsAreNotInEffect() throws { try EventContract.unconfirmedReportsAreNotInEffect(.sqlite) }
    @Test func recurringSchedulesDecideActiveAt() throws { try EventContract.recurringSchedulesDecideActiveAt(.sqlite) }

    @Test func theIndexStaysSound() throws {
        let (store, _, cleanup) = try StoreBackend.sqlite.makeStore()
        defer { cleanup() }
        try EventContract.ingest(store, (0..<50).map { EventContract.report("a\($0)", source: "autobahn", lat: 50 + Double($0) * 0.05) },
                                 source: "autobahn")
        try EventContract.ingest(store, (0..<50).map { EventContract.report("d\($0)", source: "datex", lat: 50.001 + Double($0) * 0.05) },
                                 source: "datex")
        #expect(try EventContract.events(store).count == 50)
        #expect(try store.checkIntegrity() == [])
        _ = try store.rebuildEvents()
        #expect(try EventContract.events(store).count == 50)
        #expect(try store.checkIntegrity() == [])
    }
}

@Suite("Events: PostGIS", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct EventContractPostGISTests {
    @Test func threeFeedsMakeOneEvent() throws { try EventContract.threeFeedsMakeOneEvent(.postgis) }
    @Test func distinctIncidentsStayApart() throws { try EventContract.distinctIncidentsStayApart(.postgis) }
    @Test func eventsEndSplitAndArePruned() throws { try EventContract.eventsEndSplitAndArePruned(.postgis) }
    @Test func geocodedReportsJoinAndRebuildMerges() throws { try EventContract.geocodedReportsJoinAndRebuildMerges(.postgis) }
    @Test func aRebuildKeepsEventIDs() throws { try EventContract.aRebuildKeepsEventIDs(.postgis) }
    @Test func unconfirmedReportsAreNotInEffect() throws { try EventContract.unconfirmedReportsAreNotInEffect(.postgis) }
    @Test func recurringSchedulesDecideActiveAt() throws { try EventContract.recurringSchedulesDecideActiveAt(.postgis) }
}
