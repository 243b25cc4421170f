import Foundation
import TrafficGeoModel

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
        let updatedSet = Set(updated), endedSet = Set(ended)
        // New rows, sorted and each once (an ingest's are, as runs of consecutive ids). A big first ingest
        // brings millions: nothing below copies them or puts them in a set unless it must
        // (a set of 10M ids and its copies were most of a 10M-row ingest's peak memory).
        let inserted = inserted.isStrictlyIncreasing ? inserted : Array(Set(inserted)).sorted()
        func isInserted(_ id: Int64) -> Bool {
            var low = 0, high = inserted.count
            while low < high {
                let mid = (low + high) / 2
                if inserted[mid] < id { low = mid + 1 } else { high = mid }
            }
            return low < inserted.count && inserted[low] == id
        }
        // New rows are reports of their own; the others may be members of an event.
        let changed = try rows.places(ids: updatedSet.union(endedSet).filter { !isInserted($0) }.sorted())
            .filter { $0.role != .event }
        var affected = released.events
        var seeking: Set<Int64> = []   // besides the inserted rows
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
        if !seeking.isEmpty || !inserted.isEmpty, try rows.hasEvents(besides: source) {
            let places = try rows.places(ids: Array(Set(inserted).union(seeking)).sorted()).filter { $0.role == .report && $0.road != nil }
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

        // Reports that are still events of their own: their own change (updated and ended ones
        // in the order of their ids).
        let split = Set(changes.new)
        var ownUpdated: [Int64] = [], ownEnded: [Int64] = []
        if joined.isEmpty && split.isEmpty && changes.new.isEmpty {
            changes.new = inserted
        } else {
            changes.new += inserted.filter { !joined.contains($0) && !split.contains($0) }
        }
        for id in inserted where endedSet.contains(id) && !joined.contains(id) && !split.contains(id) { ownEnded.append(id) }
        for id in ownBefore where !isInserted(id) && !joined.contains(id) && !split.contains(id) {
            if updatedSet.contains(id) { ownUpdated.append(id) }
            if endedSet.contains(id) { ownEnded.append(id) }
        }
        changes.updated += ownUpdated.sorted()
        changes.ended += ownEnded.sorted()
        if !changes.new.isStrictlyIncreasing { changes.new.sort() }
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

private extension Array where Element == Int64 {
    var isStrictlyIncreasing: Bool { zip(self, dropFirst()).allSatisfy { $0 < $1 } }
}
