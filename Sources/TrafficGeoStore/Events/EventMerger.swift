import Foundation
import TrafficGeoModel

/// What a store does for `EventMerger`, with its own statements, inside the write transaction of
/// the ingest (or geocode, or prune) whose reports are being merged.
package protocol EventRows: AnyObject {
    /// The rows with these store ids (any role), as stored now.
    func rows(ids: [Int64]) throws -> [StoredIncident]
    /// Where the rows with these ids are, lean.
    func places(ids: [Int64]) throws -> [ReportPlace]
    /// The located rows that answer for events (`EventRole.report` and `.event`) on `road` (as
    /// stored) with their point between these latitudes, but for `excluded`'s reports of their own, lean.
    func eventPlaces(road: String, latitudes: ClosedRange<Double>, excluding excluded: String?) throws -> [ReportPlace]
    /// Whether any located row answers for an event that is not a report of `source`'s.
    func hasEvents(besides source: String?) throws -> Bool
    /// The store ids of each event's reports, and the reports its row lists (in the order they
    /// joined; not those that joined in this run yet).
    func members(ofEvents ids: [Int64]) throws -> [Int64: EventMembers]
    /// Makes the report `id` (an event of its own) the first report of an event. Without
    /// `eventID`, the event keeps the report's id: the report moves, as it was, to a new row and
    /// `id` becomes the event's row. With one (a rebuild giving an event its id back: free, and
    /// below the ids the store gives out), the event's row is made at that id and the report
    /// stays. The event's fields and list of reports are written by `writeEvent`.
    func promote(_ id: Int64, as eventID: Int64?) throws -> Promotion
    /// Makes a report a member of `event`, or (nil) an event of its own again.
    func setEvent(ofReport id: Int64, to event: Int64?) throws
    /// Writes an event row's fields; false when they were so already.
    func writeEvent(_ id: Int64, _ composed: EventComposition.Composed) throws -> Bool
    /// Deletes an event row that has no reports left.
    func deleteEvent(_ id: Int64) throws
}

/// Where a report that became an event's first is, and its event (`EventRows.promote`).
package struct Promotion: Sendable {
    package var event: Int64
    package var report: Int64

    package init(event: Int64, report: Int64) {
        self.event = event
        self.report = report
    }
}

/// An event's reports as its store holds them (`EventRows.members`).
package struct EventMembers: Sendable {
    package var ids: [Int64]
    package var listed: [ReportReference]

    package init(ids: [Int64], listed: [ReportReference]) {
        self.ids = ids
        self.listed = listed
    }
}

/// Reports an adoption of a former source name (`SourceMergePlan`) took out of their events, so
/// that no event holds two reports of the merged source: they look for their events again, and
/// the events they left are composed again.
package struct ReleasedReports: Sendable {
    package var reports: [Int64] = []
    package var events: Set<Int64> = []

    package init(reports: [Int64] = [], events: Set<Int64> = []) {
        self.reports = reports
        self.events = events
    }
}

/// Where a row is and what it is, as much as finding its neighbours needs.
package struct ReportPlace: Sendable {
    package var storeID: Int64
    package var source: String
    package var role: EventRole
    package var memberOf: Int64?
    package var road: String?
    /// Its line where it has one, else its point; empty without a position.
    package var shape: [Coordinate]
    /// What its validity is read from (`ReportTraits`), in seconds since 1970.
    package var times: Times

    package struct Times: Sendable {
        package var validFrom, updated, expires, ended: Double?
        package var firstSeen: Double
        package var category: IncidentCategory?

        package init(validFrom: Double?, updated: Double?, expires: Double?, ended: Double?, firstSeen: Double, category: IncidentCategory?) {
            (self.validFrom, self.updated, self.expires, self.ended, self.firstSeen, self.category) = (validFrom, updated, expires, ended, firstSeen, category)
        }
    }

    package init(storeID: Int64, source: String, role: EventRole, memberOf: Int64?, road: String?, shape: [Coordinate], times: Times) {
        self.storeID = storeID
        self.source = source
        self.role = role
        self.memberOf = memberOf
        self.road = road
        self.shape = shape
        self.times = times
    }

    /// Its validity as `ReportTraits` reads it, or wider: the start exactly, the end no earlier
    /// (the kind its words name may end it sooner; an event's reports end by its latest).
    package func validity(_ settings: ConflationSettings) -> (start: Double, end: Double) {
        let start = times.validFrom ?? times.updated ?? times.firstSeen
        let shortLived = role != .event && KindFamily(times.category).isShortLived
        return (start, ReportTraits.end(start: start, updated: times.updated, over: [times.ended, times.expires].compactMap { $0 }.min(),
                                        shortLived: shortLived, settings: settings))
    }
}

/// The events' side of what changed, for the change feed (which speaks of events): a report of
/// its own stands for its event.
public struct EventChanges: Sendable, Equatable {
    public var new: [Int64] = []
    public var updated: [Int64] = []
    public var ended: [Int64] = []
    /// Events that are no more: merged into another, or left without reports.
    public var removed: [Int64] = []
    /// Reports that joined an event in this run.
    public var joined = 0

    public init() {}
}

/// Places reports into events as they arrive, change, end or vanish (docs/conflation.md), the
/// same for every store (which supplies `EventRows`):
///   - a report of its own that is new, changed or newly placed joins the event it matches best
///     (`SameEventRule`: the same as one of its reports, contradicted by none), or stays an event
///     of its own;
///   - a member that changed so that it no longer fits its event leaves it (the event splits;
///     both keep their ids) and may join another;
///   - an event is composed again from its reports (`EventComposition`) whenever one of them
///     changes, joins or leaves; it ends when the last of them ends, and goes when none is left.
package struct EventMerger {
    let rows: EventRows
    let rule: SameEventRule

    package init(rows: EventRows, settings: ConflationSettings) {
        self.rows = rows
        rule = SameEventRule(settings: settings)
    }

    /// Merges after a write that inserted, updated and ended these reports of `source` (nil:
    /// of any source); a report may be in more than one list. `released`: what an adoption of a
    /// former source name took out of its events (`ReleasedReports`). Returns what happened to events.
    /// `formerEvents`: for a rebuild (`rebuild`), the event each report was in before, whose id
    /// an event made again of its reports takes back.
    package func merge(inserted: [Int64], updated: [Int64], ended: [Int64], source: String?,
                       released: ReleasedReports = ReleasedReports(), formerEvents: [Int64: Int64]? = nil) throws -> EventChanges {
        var changes = EventChanges()
        guard rule.settings.enabled else {
            // Every report is an event of its own: the change feed says what happened to it.
            (changes.new, changes.updated, changes.ended) = (inserted, updated, ended)
            changes.removed = released.events.sorted()
            return changes
        }
        let run = RunRows(rows, settings: rule.settings)
        let updated = Array(Set(updated).union(released.reports)).sorted()
        let insertedSet = Set(inserted), updatedSet = Set(updated), endedSet = Set(ended)
        // New rows are reports of their own; the others may be members of an event.
        let changed = try rows.places(ids: Array(updatedSet.union(endedSet).subtracting(insertedSet)).sorted())
            .filter { $0.role != .event }
        var affected = released.events
        var seeking = insertedSet
        var ownBefore: Set<Int64> = []   // events of their own before this run
        let memberEvents = Set(changed.compactMap(\.memberOf))
        try run.load(Array(memberEvents))
        var wasEnded: [Int64: Bool] = [:]
        for event in memberEvents { wasEnded[event] = run.row(event).map { $0.ended != nil } ?? false }
        let membersBefore = try run.members(ofEvents: Array(memberEvents))
        for place in changed {
            guard let event = place.memberOf else {
                ownBefore.insert(place.storeID)
                if updatedSet.contains(place.storeID) { seeking.insert(place.storeID) }
                continue
            }
            affected.insert(event)
            // A member whose words or place changed must still be the same event as its others.
            guard updatedSet.contains(place.storeID), let members = membersBefore[event],
                  members.contains(where: { $0.storeID == place.storeID }) else { continue }
            let others = members.filter { $0.storeID != place.storeID }.map(\.storeID)
            if !others.isEmpty, !(try fits(place.storeID, with: others, run)) {
                try rows.setEvent(ofReport: place.storeID, to: nil)
                run.setEvent(ofReport: place.storeID, to: nil)
                changes.new.append(place.storeID)
                seeking.insert(place.storeID)
            }
        }

        // Reports of their own look for an event to join, road by road (no event spans two
        // roads), each road's events composed again before the next is read: a bulk ingest holds
        // one road's rows at a time.
        var joined: Set<Int64> = []
        var recomposed: Set<Int64> = []
        if !seeking.isEmpty, try rows.hasEvents(besides: source) {
            let places = try rows.places(ids: seeking.sorted()).filter { $0.role == .report && $0.road != nil }
            for (_, onRoad) in Dictionary(grouping: places, by: { ReportTraits.roadKey($0.road!) }).sorted(by: { $0.key < $1.key }) {
                let joins = try bestJoins(for: onRoad, excluding: source, run)
                var targets: Set<Int64> = []
                var eventOf: [Int64: Int64] = [:]   // reports of their own made events' first in this run
                for join in joins {
                    var event = eventOf[join.target] ?? join.target
                    let ended = wasEnded[event] ?? run.row(join.target).map { $0.ended != nil } ?? false
                    if join.targetIsReport {
                        let former = try [formerEvents?[join.target], formerEvents?[join.report]].compactMap { $0 }
                            .first { try rows.rows(ids: [$0]).isEmpty }
                        let promotion = try rows.promote(join.target, as: former)
                        // A rebuild meets the reports out of the order they came in: they are
                        // listed by when the store first saw them, not by who found whom.
                        run.promoted(join.target, promotion, listed: formerEvents == nil)
                        event = promotion.event
                        eventOf[join.target] = event
                    }
                    wasEnded[event] = ended
                    try rows.setEvent(ofReport: join.report, to: event)
                    run.setEvent(ofReport: join.report, to: event)
                    targets.insert(event)
                    changes.joined += 1
                    if let at = changes.new.firstIndex(of: join.report) { changes.new.remove(at: at) }
                    // A report that was an event of its own before this run is merged away.
                    if ownBefore.contains(join.report) { changes.removed.append(join.report) }
                    joined.insert(join.report)
                }
                try recompose(targets, wasEnded: wasEnded, run, into: &changes)
                recomposed.formUnion(targets)
                run.forget(keeping: Set(affected.subtracting(recomposed)).union(membersBefore.values.flatMap { $0.map(\.storeID) }))
            }
        }

        // The events whose reports changed or left, composed again.
        try recompose(affected.subtracting(recomposed), wasEnded: wasEnded, run, into: &changes)

        // Reports that are still events of their own: their own change.
        let split = Set(changes.new)
        for id in insertedSet.union(ownBefore).sorted() where !joined.contains(id) && !split.contains(id) {
            if insertedSet.contains(id) { changes.new.append(id) } else if updatedSet.contains(id) { changes.updated.append(id) }
            if endedSet.contains(id) { changes.ended.append(id) }
        }
        changes.new.sort()
        return changes
    }

    /// Merges every report anew (`trafficgeo events --rebuild`), after the store deleted its
    /// events' rows (`removed`) and made every report one of its own: source by source, in the
    /// order given (the order they were first read). An event made again of reports of a former
    /// one takes its id back (`formerEvents`: the event each report was in), so links and
    /// watches keep following it.
    package func rebuild(sources: [(name: String, reports: [Int64])], removed: [Int64], formerEvents: [Int64: Int64]) throws -> EventChanges {
        var changes = EventChanges()
        for source in sources {
            let merged = try merge(inserted: [], updated: source.reports, ended: [], source: source.name, formerEvents: formerEvents)
            // A report that stays an event of its own did not change; one that was an event's
            // before was no event of its own to remove.
            let own = Set(source.reports)
            changes.updated += merged.updated.filter { !own.contains($0) }
            changes.ended += merged.ended
            changes.removed += merged.removed.filter { formerEvents[$0] == nil }
            changes.joined += merged.joined
        }
        // An event whose id came back changed; one whose did not is no more.
        let back = Set(changes.updated + changes.ended)
        changes.removed = (removed.filter { !back.contains($0) } + changes.removed).sorted()
        changes.updated = Array(Set(changes.updated)).sorted()
        return changes
    }

    /// Composes these events again from their reports (after some of them were deleted: `prune`);
    /// an event without reports goes. What happened to them.
    package func recompose(_ events: Set<Int64>) throws -> EventChanges {
        var changes = EventChanges()
        let run = RunRows(rows, settings: rule.settings)
        try run.load(Array(events))
        let wasEnded = Dictionary(uniqueKeysWithValues: events.map { ($0, run.row($0).map { $0.ended != nil } ?? false) })
        try recompose(events, wasEnded: wasEnded, run, into: &changes)
        return changes
    }

    private func recompose(_ events: Set<Int64>, wasEnded: [Int64: Bool], _ run: RunRows, into changes: inout EventChanges) throws {
        guard !events.isEmpty else { return }
        let members = try run.members(ofEvents: Array(events))
        for event in events.sorted() {
            guard let reports = members[event], !reports.isEmpty else {
                try rows.deleteEvent(event)
                changes.removed.append(event)
                continue
            }
            let composed = EventComposition.compose(reports)
            guard try rows.writeEvent(event, composed) else { continue }
            run.wroteEvent(event, listing: composed.reports)
            if composed.ended != nil, !(wasEnded[event] ?? false) { changes.ended.append(event) } else { changes.updated.append(event) }
        }
    }

    /// Whether the report `id` is still one event with `others`: the same as one of them, and
    /// contradicted by none (a report without a position contradicts nothing).
    private func fits(_ id: Int64, with others: [Int64], _ run: RunRows) throws -> Bool {
        try run.load([id] + others)
        guard let traits = run.traits(id) else { return true }
        var matched = false
        for other in others {
            guard let theirs = run.traits(other) else { continue }
            switch rule.verdict(traits, theirs) {
            case .same: matched = true
            case .distinct(.noPosition): continue
            case .distinct: return false
            }
        }
        return matched || traits.shape.isEmpty
    }

    private struct Join {
        var report: Int64
        /// The event joined: an event of several, or a report of its own that becomes one.
        var target: Int64
        var targetIsReport: Bool
    }

    /// For each of these reports (of their own, on one road) that finds one, the event it joins:
    /// the best match first, one report per source in an event, a report never both joining and joined.
    private func bestJoins(for seeking: [ReportPlace], excluding source: String?, _ run: RunRows) throws -> [Join] {
        let settings = rule.settings
        guard !seeking.isEmpty else { return [] }
        let placed = seeking.filter { !$0.shape.isEmpty }
        // The farthest two reports of one event can be apart.
        let reach = max(2 * max(settings.feedReach, settings.junctionReach, settings.townReach), settings.namedStretchReach)
        let seekingSet = Set(seeking.map(\.storeID))
        try run.load(seeking.map(\.storeID))

        // On each road (as stored), the rows in the band of latitudes the reports there reach.
        var places: [ReportPlace] = []
        let margin = reach / 111_000 + 0.01
        for (road, reports) in Dictionary(grouping: placed, by: { $0.road! }).sorted(by: { $0.key < $1.key }) {
            let latitudes = reports.flatMap { $0.shape.map(\.latitude) }
            places += try rows.eventPlaces(road: road, latitudes: (latitudes.min()! - margin)...(latitudes.max()! + margin), excluding: source)
        }
        var grid = PlaceGrid(places.filter { !seekingSet.contains($0.storeID) }, reach: reach)

        // The places near each report and in its time (known from the rows alone); then the
        // whole rows, and the members of events, of those only.
        func plausible(_ place: ReportPlace, for report: ReportPlace, _ mine: ReportTraits) -> Bool {
            guard place.source != report.source || place.role == .event else { return false }
            let (start, end) = place.validity(settings)
            guard start - settings.timeSlack <= mine.end, mine.start - settings.timeSlack <= end else { return false }
            return place.shape.isEmpty || report.shape.isEmpty || ReportTraits.distance(report.shape, place.shape) <= reach
        }
        var near: [Int64: [ReportPlace]] = [:]
        for report in placed {
            guard let mine = run.traits(report.storeID) else { continue }
            let found = grid.near(report.shape, road: report.road!, within: reach).filter { plausible($0, for: report, mine) }
            if !found.isEmpty { near[report.storeID] = found }
        }
        // A report without a position may still name its place by kilometre posts: it looks at
        // every event of its road (few have no position: a geocoder placed the rest).
        let unplaced = seeking.filter { $0.shape.isEmpty && run.traits($0.storeID)?.kilometres != nil }
        for (road, reports) in Dictionary(grouping: unplaced, by: { $0.road! }) {
            let onRoad = try rows.eventPlaces(road: road, latitudes: -90...90, excluding: source).filter { !seekingSet.contains($0.storeID) }
            for report in reports {
                guard let mine = run.traits(report.storeID) else { continue }
                let found = onRoad.filter { plausible($0, for: report, mine) }
                if !found.isEmpty { near[report.storeID] = found }
            }
        }
        guard !near.isEmpty else { return [] }

        // Each target as the reports it holds (one for a report of its own), by their traits.
        let targetIDs = Set(near.values.flatMap { $0.map(\.storeID) })
        try run.load(Array(targetIDs))
        let eventMembers = try run.memberIDs(ofEvents: targetIDs.filter { run.row($0)?.role == .event })
        try run.load(eventMembers.values.flatMap { $0 })
        var reportsOf: [Int64: [ReportTraits]] = [:]
        var isReport: Set<Int64> = []
        for id in targetIDs {
            guard let row = run.row(id) else { continue }
            if row.role == .event {
                reportsOf[id] = (eventMembers[id] ?? []).compactMap { run.traits($0) }
            } else {
                reportsOf[id] = run.traits(id).map { [$0] } ?? []
                isReport.insert(id)
            }
        }

        var options: [(score: Double, report: Int64, target: Int64)] = []
        for (reportID, places) in near.sorted(by: { $0.key < $1.key }) {
            guard let mine = run.traits(reportID) else { continue }
            for place in places {
                guard let theirs = reportsOf[place.storeID], !theirs.isEmpty, !theirs.contains(where: { $0.source == mine.source }) else { continue }
                var best: Double?
                var contradicted = false
                for other in theirs {
                    switch rule.verdict(mine, other) {
                    case let .same(score): best = min(best ?? score, score)
                    case .distinct(.noPosition): continue
                    case .distinct: contradicted = true
                    }
                    if contradicted { break }
                }
                if let best, !contradicted { options.append((best, reportID, place.storeID)) }
            }
        }
        options.sort { ($0.score, $0.report, $0.target) < ($1.score, $1.report, $1.target) }
        var joins: [Join] = []
        var joined: Set<Int64> = [], targets: Set<Int64> = []
        var sourcesOf: [Int64: Set<String>] = [:]
        for option in options where !joined.contains(option.report) && !joined.contains(option.target) && !targets.contains(option.report) {
            guard let report = run.traits(option.report) else { continue }
            var sources = sourcesOf[option.target] ?? Set((reportsOf[option.target] ?? []).map(\.source))
            guard sources.insert(report.source).inserted else { continue }
            sourcesOf[option.target] = sources
            joins.append(Join(report: option.report, target: option.target, targetIsReport: isReport.contains(option.target) && !targets.contains(option.target)))
            joined.insert(option.report)
            targets.insert(option.target)
        }
        return joins
    }
}

/// The rows one merge run reads, each decoded and its words read (`ReportTraits`) once, kept
/// as the run changes them: reports join events, a report of its own becomes an event's first.
private final class RunRows {
    private let rows: EventRows
    private let settings: ConflationSettings
    private var stored: [Int64: StoredIncident] = [:]
    private var traitsOf: [Int64: ReportTraits] = [:]
    /// Events' members and lists as stored, with this run's changes.
    private var membersOf: [Int64: EventMembers] = [:]

    init(_ rows: EventRows, settings: ConflationSettings) {
        self.rows = rows
        self.settings = settings
    }

    /// Reads the rows with these ids that are not read yet.
    func load(_ ids: [Int64]) throws {
        let missing = Set(ids).filter { stored[$0] == nil }
        guard !missing.isEmpty else { return }
        let loaded = try rows.rows(ids: missing.sorted())
        for row in loaded { stored[row.storeID] = row }
        // Reports' words are read as they are loaded (an event's row is compared by its reports).
        for traits in Self.traits(of: loaded.filter { $0.role != .event && traitsOf[$0.storeID] == nil }, settings: settings) {
            traitsOf[traits.storeID] = traits
        }
    }

    /// The traits of many reports, read on every core: reading words is most of a merge's time.
    private static func traits(of reports: [StoredIncident], settings: ConflationSettings) -> [ReportTraits] {
        let cores = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard reports.count >= 64, cores > 1 else { return reports.map { ReportTraits($0, settings: settings) } }
        var read = [ReportTraits?](repeating: nil, count: reports.count)
        read.withUnsafeMutableBufferPointer { buffer in
            // Each stripe writes its own elements only.
            nonisolated(unsafe) let out = buffer
            DispatchQueue.concurrentPerform(iterations: cores) { stripe in
                var k = stripe
                while k < reports.count {
                    out[k] = ReportTraits(reports[k], settings: settings)
                    k += cores
                }
            }
        }
        return read.map { $0! }
    }

    func row(_ id: Int64) -> StoredIncident? { stored[id] }

    func traits(_ id: Int64) -> ReportTraits? {
        if let known = traitsOf[id] { return known }
        guard let row = stored[id] else { return nil }
        let traits = ReportTraits(row, settings: settings)
        traitsOf[id] = traits
        return traits
    }

    func memberIDs(ofEvents ids: some Collection<Int64>) throws -> [Int64: [Int64]] {
        let missing = ids.filter { membersOf[$0] == nil }
        if !missing.isEmpty {
            for (event, members) in try rows.members(ofEvents: missing.sorted()) { membersOf[event] = members }
        }
        var found: [Int64: [Int64]] = [:]
        for id in ids { if let members = membersOf[id], !members.ids.isEmpty { found[id] = members.ids } }
        return found
    }

    /// Each event's reports, whole, in the order they joined it (`EventComposition.joiningOrder`).
    func members(ofEvents ids: [Int64]) throws -> [Int64: [StoredIncident]] {
        let found = try memberIDs(ofEvents: ids)
        try load(found.values.flatMap { $0 })
        return found.reduce(into: [:]) { out, entry in
            out[entry.key] = EventComposition.joiningOrder(entry.value.compactMap { stored[$0] }, listed: membersOf[entry.key]?.listed ?? [])
        }
    }

    func setEvent(ofReport id: Int64, to event: Int64?) {
        if let old = stored[id]?.memberOf { membersOf[old]?.ids.removeAll { $0 == id } }
        stored[id]?.role = event == nil ? .report : .member
        stored[id]?.memberOf = event
        if let event, membersOf[event] != nil, membersOf[event]?.ids.contains(id) == false { membersOf[event]?.ids.append(id) }
    }

    /// The report `id` became the first report of an event (`EventRows.promote`).
    /// `listed`: it leads the event's list (else the list follows when the store first saw each).
    func promoted(_ id: Int64, _ promotion: Promotion, listed: Bool) {
        if promotion.report == id {
            // The event's row was made at an id of its own; the report stayed.
            guard var report = stored[id] else { return }
            report.role = .member
            report.memberOf = promotion.event
            stored[id] = report
            membersOf[promotion.event] = EventMembers(ids: [id], listed: listed ? [ReportReference(report)] : [])
            report.storeID = promotion.event
            report.role = .event
            report.memberOf = nil
            stored[promotion.event] = report
            return
        }
        let newID = promotion.report
        if var report = stored[id] {
            report.storeID = newID
            report.role = .member
            report.memberOf = id
            stored[newID] = report
            if var traits = traitsOf[id] {
                traits.storeID = newID
                traitsOf[newID] = traits
            }
            membersOf[id] = EventMembers(ids: [newID], listed: listed ? [ReportReference(report)] : [])
            // The event's row holds the report's fields until it is composed.
            report.storeID = id
            report.role = .event
            report.memberOf = nil
            stored[id] = report
        } else {
            membersOf[id] = nil
            stored[id] = nil
        }
        traitsOf[id] = nil
    }

    /// The event's row was written anew: its list is the one written.
    func wroteEvent(_ id: Int64, listing reports: [ReportReference]) {
        stored[id] = nil
        membersOf[id]?.listed = reports
    }

    /// Lets go of the rows read, but for those of these events and reports.
    func forget(keeping ids: Set<Int64>) {
        stored = stored.filter { ids.contains($0.key) }
        traitsOf = traitsOf.filter { ids.contains($0.key) }
        membersOf = membersOf.filter { ids.contains($0.key) }
    }
}

/// Places by road and by cells of about `reach` metres, so that a report looks only at the rows
/// around it on its own road. Lines are walked in steps shorter than a cell.
private struct PlaceGrid {
    private var cells: [CellKey: [Int]] = [:]
    private let places: [ReportPlace]
    private let cellDegrees: Double
    /// Which places the current `near` has found already (those marked with its `generation`).
    private var seen: [UInt32]
    private var generation: UInt32 = 0

    private struct CellKey: Hashable { var road: String, lat: Int, lon: Int }

    init(_ places: [ReportPlace], reach: Double) {
        self.places = places
        seen = Array(repeating: 0, count: places.count)
        cellDegrees = max(0.01, reach / 111_000)
        for (k, place) in places.enumerated() {
            guard let road = place.road.map(ReportTraits.roadKey) else { continue }
            for key in Set(densified(place.shape).map { cell(road, $0) }) { cells[key, default: []].append(k) }
        }
    }

    /// Cells of longitude around the whole globe, so that the antimeridian is no edge.
    private var longitudeCells: Int { Int((360 / cellDegrees).rounded(.up)) }

    private func cell(_ road: String, _ p: Coordinate) -> CellKey {
        CellKey(road: road, lat: Int((p.latitude / cellDegrees).rounded(.down)),
                lon: Int(((p.longitude + 180) / cellDegrees).rounded(.down)) % longitudeCells)
    }

    /// The shape's points, with points added along lines every half cell.
    private func densified(_ shape: [Coordinate]) -> [Coordinate] {
        guard shape.count >= 2 else { return shape }
        var out = [shape[0]]
        for (a, b) in zip(shape, shape.dropFirst()) {
            let steps = Int((max(abs(b.latitude - a.latitude), abs(b.longitude - a.longitude)) / (cellDegrees / 2)).rounded(.up))
            if steps > 1, steps < 10_000 {
                for k in 1..<steps {
                    let t = Double(k) / Double(steps)
                    out.append(Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude), longitude: a.longitude + t * (b.longitude - a.longitude)))
                }
            }
            out.append(b)
        }
        return out
    }

    /// The places on `road` with a point within about `reach` of `shape` (every place closer
    /// than `reach` is among them; some farther ones too), each once.
    mutating func near(_ shape: [Coordinate], road: String, within reach: Double) -> [ReportPlace] {
        let road = ReportTraits.roadKey(road)
        generation &+= 1
        if generation == 0 {
            seen = Array(repeating: 0, count: places.count)
            generation = 1
        }
        var found: [ReportPlace] = []
        for p in shape.count >= 2 ? densified(shape) : shape {
            let c = cell(road, p)
            // Longitude cells shrink towards the poles: look further across them there.
            let span = Int((1 / max(cos(p.latitude * .pi / 180), 0.05)).rounded(.up))
            for dLat in -1...1 {
                for dLon in -span...span {
                    let lon = ((c.lon + dLon) % longitudeCells + longitudeCells) % longitudeCells
                    for k in cells[CellKey(road: road, lat: c.lat + dLat, lon: lon)] ?? [] where seen[k] != generation {
                        seen[k] = generation
                        found.append(places[k])
                    }
                }
            }
        }
        return found
    }
}
