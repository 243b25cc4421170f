import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore
import TrafficGeoSupport

/// `/collections/incidents/events`: the change feed as Server-Sent Events. Each event carries
/// its sequence number as `id:` (so a reconnecting EventSource resumes with Last-Event-ID), its
/// kind (new, updated, ended, removed) as `event:`, and the incident as it is now as a GeoJSON
/// Feature in `data:`. Only incidents matching the request's conditions are sent; `removed`
/// (the incident is gone, nothing is left to match) always is.
struct EventStream: Sendable {
    var query: ItemsQuery
    /// Resume after this event; nil starts at the feed's end (only what happens from now).
    var lastEventID: Int64?
    var store: any StoreReader
    var runner: QueryRunner
    var configuration: ServeConfiguration
    var logger: Logger

    /// Whether an incident, as it is now, belongs to the stream.
    func passes(_ stored: StoredIncident) -> Bool {
        var conditions = query.filter
        conditions.activeAt = nil    // an ended incident must still reach the stream as `ended`
        guard conditions.matches(stored) else { return false }
        let needsPosition = query.bbox != nil || query.radius != nil
        guard let p = stored.incident.position else { return !needsPosition }
        if let box = query.bbox, !box.contains(p) { return false }
        if let centre = query.reference, let radius = query.radius, Geodesic.distance(from: centre, to: p) > radius { return false }
        return true
    }

    static func text(_ change: Change, _ stored: StoredIncident?, reference: Coordinate?) -> String {
        var data = JSONObjectText()
        data.add("seq", Double(change.sequence))
        data.add("change", change.kind.rawValue)
        data.add("at", TimestampParser.format(change.at))
        data.add("id", Double(change.storeID))
        if let stored {
            data.add(raw: "feature", String(decoding: FeatureDocuments.feature(QueryResult(stored: stored).measured(from: reference)), as: UTF8.self))
        }
        return "id: \(change.sequence)\nevent: \(change.kind.rawValue)\ndata: \(data.closed())\n\n"
    }

    func body() -> ResponseBody {
        ResponseBody { writer in
            // Counted while the body is being written: from the stream's start to its end,
            // whichever way it ends.
            configuration.metrics.eventStreamOpened()
            defer { configuration.metrics.eventStreamClosed() }
            let store = self.store
            let bounds = try await runner.run { try store.changeFeedBounds() }
            // A Last-Event-ID past the feed's end (another database, or a recreated one) follows
            // from the end: waiting for the feed to reach it would skip every event up to it.
            var after = min(lastEventID ?? bounds.latest, bounds.latest)
            // Reconnect after 2 s; a comment first, so the client knows the stream is open.
            var opening = "retry: 2000\n: trafficgeo events after \(after)\n\n"
            if let lastEventID, lastEventID > bounds.latest {
                opening += ": Last-Event-ID \(lastEventID) is past the newest event (\(bounds.latest)); reload the items to catch up\n\n"
            } else if let lastEventID, lastEventID < bounds.first - 1 {
                opening += ": events \(max(lastEventID, 0) + 1) to \(bounds.first - 1) were pruned; reload the items to catch up\n\n"
            }
            after = max(after, 0)
            try await writer.write(ByteBuffer(string: opening))
            var lastWrite = ContinuousClock.now
            // Ends when the client goes away (the write fails) or the server shuts down (checked
            // at every poll: a stopping server waits at most one poll interval for its streams).
            do {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    let from = after
                    let (changes, incidents) = try await runner.run { () throws -> ([Change], [Int64: StoredIncident]) in
                        let changes = try store.changes(after: from, limit: 1000)
                        return (changes, changes.isEmpty ? [:] : try store.incidents(ids: Array(Set(changes.map(\.storeID)))))
                    }
                    var text = ""
                    for change in changes {
                        let stored = incidents[change.storeID]
                        if let stored, !passes(stored) { continue }
                        if stored == nil, change.kind != .removed { continue }    // deleted since: its `removed` follows
                        text += Self.text(change, stored, reference: query.reference)
                    }
                    if let last = changes.last { after = last.sequence }
                    if !text.isEmpty || ContinuousClock.now - lastWrite >= configuration.eventHeartbeat {
                        try await writer.write(ByteBuffer(string: text.isEmpty ? ": keep-alive\n\n" : text))
                        lastWrite = .now
                    }
                    if changes.count < 1000 { try await Task.sleep(for: configuration.eventPollInterval) }
                }
            } catch is CancellationError {
                // The server is stopping: end the stream properly; the client reconnects elsewhere or later.
            }
            try await writer.finish(nil)
        }
    }
}
