import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// Runs standing queries against a store's change feed: each poll reads the events after the
/// last one handled, looks at the incidents they name as they are now, and reports what entered,
/// changed within or left each query's area.
///
/// Incidents are judged by their current state, so several changes of one incident between
/// polls make one event. An incident counts as inside while it is live (not ended, not expired),
/// has a position in the area and matches the query's filters.
///
/// At the first poll (no saved state), or when the feed no longer holds the events after the
/// saved one (the watch was stopped for longer than the store keeps them), the state is rebuilt
/// from the store's current incidents: what is inside now enters, what was remembered and is no
/// longer inside leaves.
public struct WatchMatcher: Sendable {
    public let queries: [StandingQuery]
    public private(set) var state: WatchState
    private let areas: [PreparedArea]
    /// Each query's filter as it asks at this poll's now (`StandingQuery.filter(at:)`).
    private var filters: [IncidentFilter]
    /// When the queries whose time follows now were last compared with the store.
    private var lastTimeCheck: Date?
    /// Events read from the store at a time.
    public var batchSize = 50_000
    /// How often a query with a time relative to now (`--active-at now`) is compared with the
    /// store although no change came: what is in effect changes with the clock alone (a
    /// schedule's hours begin or end, planned works begin, a report goes unheard of too long).
    public var timeCheckInterval: TimeInterval = 60

    public init(queries: [StandingQuery], state: WatchState?) {
        self.queries = queries
        areas = queries.map { PreparedArea($0.area) }
        filters = queries.map(\.filter)
        let fingerprint = Self.fingerprint(queries)
        if var state, state.queries == fingerprint || state.queries == LegacyWatchFingerprint.text(queries) {
            // Drop what belongs to queries no longer asked; a state saved before the explicit
            // fingerprint is resumed under it.
            state.inside = state.inside.filter { name, _ in queries.contains { $0.name == name } }
            state.queries = fingerprint
            self.state = state
        } else {
            var fresh = WatchState()
            fresh.queries = fingerprint
            self.state = fresh
        }
    }

    /// What the standing queries are, as text (`WatchQuestion`, a line of JSON each): a saved
    /// state of other queries is not resumed, and a new filter field at its default changes nothing.
    public static func fingerprint(_ queries: [StandingQuery]) -> String {
        queries.map { WatchQuestion($0).text }.joined(separator: "\n")
    }

    /// Reads the change feed up to its end and returns the events, oldest first. `deliver` is
    /// called with each batch's events before the state moves past them (save the state after
    /// it returns: a crash in between repeats that batch rather than losing it).
    public mutating func poll(_ store: any StoreReader, now: Date = Date(),
                              deliver: ([WatchEvent], WatchState) async throws -> Void) async throws {
        filters = queries.map { $0.filter(at: now) }
        let bounds = try await store.changeFeedBounds()
        if state.lastSequence == nil || state.lastSequence! + 1 < bounds.first || state.lastSequence! > bounds.latest {
            // Start, a gap, or another store: compare with the current state instead.
            // Reading the store blocks: on a store thread, not the task's.
            let events = try await onStoreThread { try $0.resync(store, now: now) }
            state.lastSequence = bounds.latest
            lastTimeCheck = now
            try await deliver(events, state)
        }
        while true {
            let changes = try await store.changes(after: state.lastSequence ?? 0, limit: batchSize)
            guard let last = changes.last else { break }
            let events = try await onStoreThread { try $0.match(changes, store: store, now: now) }
            state.lastSequence = last.sequence
            try await deliver(events, state)
        }
        // What the batches did not touch may have expired meanwhile (the batches judged what
        // they touched as live or not already).
        let expired = expire(now: now)
        if !expired.isEmpty { try await deliver(expired, state) }
        // What the clock alone brings in or takes out, for the queries that ask about now.
        let moving = Set(queries.indices.filter { queries[$0].relativeTimes.activeAt != nil })
        if !moving.isEmpty, lastTimeCheck.map({ now.timeIntervalSince($0) >= timeCheckInterval }) ?? true {
            lastTimeCheck = now
            let events = try await onStoreThread { try $0.resync(store, now: now, only: moving) }.map { var e = $0; e.byClock = true; return e }
            if !events.isEmpty { try await deliver(events, state) }
        }
    }

    /// Runs `work` on a store thread (reading the store blocks) on a copy of this matcher, and
    /// keeps the copy's state: what crosses threads is a value, not this variable.
    private mutating func onStoreThread(_ work: @escaping @Sendable (inout WatchMatcher) throws -> [WatchEvent]) async throws -> [WatchEvent] {
        let before = self
        let (events, after) = try await StoreThreads.run {
            var matcher = before
            let events = try work(&matcher)
            return (events, matcher)
        }
        self = after
        return events
    }

    /// The events for one batch of changes.
    @available(*, noasync)
    mutating func match(_ changes: [Change], store: any StoreReader, now: Date) throws -> [WatchEvent] {
        // The last change of each incident decides; a change event needs an edit among them.
        var order: [Int64] = []
        var last: [Int64: Change] = [:]
        var edited: Set<Int64> = []
        for change in changes {
            if last[change.storeID] == nil { order.append(change.storeID) }
            last[change.storeID] = change
            if change.kind == .new || change.kind == .updated { edited.insert(change.storeID) }
        }
        order.sort { last[$0]!.sequence < last[$1]!.sequence }
        let current = try store.incidents(ids: order)
        var events: [WatchEvent] = []
        for id in order {
            let change = last[id]!
            let stored = current[id]
            let geocentric = stored?.incident.position.map(GeocentricPoint.init)
            for (q, query) in queries.enumerated() {
                let member = state.inside[query.name]?[id]
                let placed = stored.flatMap { evaluate($0, q, geocentric, now: now) }
                switch (member, placed) {
                case let (nil, (true, distance, position)?):
                    state.inside[query.name, default: [:]][id] = WatchState.Member(stored!.incident, at: position)
                    events.append(event(.enter, query, change, stored!.incident, id, distance, reason: nil, ended: stored?.ended))
                case let (_?, (true, distance, position)?):
                    state.inside[query.name]![id] = WatchState.Member(stored!.incident, at: position)
                    if edited.contains(id) { events.append(event(.change, query, change, stored!.incident, id, distance, reason: nil, ended: stored?.ended)) }
                case let (member?, placed):
                    state.inside[query.name]![id] = nil
                    let reason = stored.map { leaveReason($0, q, placed: placed, now: now) } ?? "removed"
                    events.append(event(.leave, query, change, stored?.incident ?? member.incident, id, placed?.1, reason: reason, ended: stored?.ended))
                case (nil, _):
                    break
                }
            }
        }
        return events
    }

    /// Whether a stored incident is inside the query's area and passes its filters: (inside,
    /// distance, position), nil without a position.
    private func evaluate(_ stored: StoredIncident, _ q: Int, _ geocentric: GeocentricPoint?, now: Date) -> (Bool, Double?, Coordinate)? {
        guard let position = stored.incident.position, let geocentric else { return nil }
        let (inside, distance) = areas[q].locate(position, geocentric)
        return (inside && stored.isLive(at: now) && filters[q].matches(stored), distance, position)
    }

    private func evaluate(_ stored: StoredIncident, _ q: Int, now: Date) -> (Bool, Double?, Coordinate)? {
        evaluate(stored, q, stored.incident.position.map(GeocentricPoint.init), now: now)
    }

    private func leaveReason(_ stored: StoredIncident, _ q: Int, placed: (Bool, Double?, Coordinate)?, now: Date) -> String {
        if let ended = stored.ended, ended <= now { return "ended" }
        if let expires = stored.incident.expires, expires <= now { return "expired" }
        guard let position = stored.incident.position else { return "no position" }
        guard queries[q].area.locate(position).inside else { return "moved" }
        // Out of effect at the asked time (outside its schedule's hours, not heard of for too
        // long), though it would still pass every other filter.
        var untimed = filters[q]
        untimed.activeAt = nil
        return filters[q].activeAt != nil && untimed.matches(stored) ? "not in effect" : "filtered"
    }

    private func event(_ kind: WatchEvent.Kind, _ query: StandingQuery, _ change: Change?, _ incident: Incident, _ id: Int64,
                       _ distance: Double?, reason: String?, ended: Date?) -> WatchEvent {
        WatchEvent(kind: kind, watch: query.name, sequence: change?.sequence, at: change?.at ?? Date(), reason: reason,
                   incident: incident, storeID: id, distance: distance, ended: ended)
    }

    /// Members whose expiry time has passed leave (time ends them, not an ingest).
    mutating func expire(now: Date) -> [WatchEvent] {
        var events: [WatchEvent] = []
        for (q, query) in queries.enumerated() {
            // Only the expired ones sorted (for a stable order): a query may hold many thousands.
            let expired = (state.inside[query.name] ?? [:]).filter { $0.value.expires.map { $0 <= now } ?? false }
            for (id, member) in expired.sorted(by: { $0.key < $1.key }) {
                let expires = member.expires!
                state.inside[query.name]![id] = nil
                let position = Coordinate(latitude: member.latitude, longitude: member.longitude)
                let distance = areas[q].locate(position, GeocentricPoint(position)).distance
                events.append(WatchEvent(kind: .leave, watch: query.name, sequence: nil, at: expires, reason: "expired",
                                         incident: member.incident, storeID: id, distance: distance))
            }
        }
        return events
    }

    /// Compares each query's members (or those of the queries `only` names) with what the store
    /// holds inside its area now.
    @available(*, noasync)
    mutating func resync(_ store: any StoreReader, now: Date, only: Set<Int>? = nil) throws -> [WatchEvent] {
        var events: [WatchEvent] = []
        for (q, query) in queries.enumerated() where only?.contains(q) ?? true {
            var found: [Int64: (StoredIncident, Double?)] = [:]
            let handle: (QueryResult) throws -> Void = { result in
                guard let placed = self.evaluate(result.stored, q, now: now), placed.0 else { return }
                found[result.stored.storeID] = (result.stored, placed.1)
            }
            if let circle = query.area.searchCircle {
                try store.within(radius: circle.radius, of: circle.center, filter: filters[q], handle: handle)
            } else if let box = query.area.searchBox {
                try store.inBoundingBox(box, filter: filters[q], handle: handle)
            }
            let before = state.inside[query.name] ?? [:]
            var after: [Int64: WatchState.Member] = [:]
            for (id, (stored, distance)) in found.sorted(by: { $0.key < $1.key }) {
                after[id] = WatchState.Member(stored.incident, at: stored.incident.position!)
                if before[id] == nil {
                    var found = event(.enter, query, nil, stored.incident, id, distance, reason: nil, ended: stored.ended)
                    found.lastChanged = stored.lastChanged
                    events.append(found)
                }
            }
            for (id, member) in before.sorted(by: { $0.key < $1.key }) where after[id] == nil {
                let stored = try store.incident(id: id)
                let placed = stored.flatMap { evaluate($0, q, now: now) }
                let reason = stored.map { leaveReason($0, q, placed: placed, now: now) } ?? "removed"
                var left = event(.leave, query, nil, stored?.incident ?? member.incident, id, placed?.1, reason: reason, ended: stored?.ended)
                left.lastChanged = stored?.lastChanged
                events.append(left)
            }
            state.inside[query.name] = after
        }
        return events.map { var e = $0; e.at = now; return e }
    }
}
