import Foundation
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoStore
import TrafficGeoSupport

/// What a standing query reports about one incident.
public struct WatchEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// It came into the area (new, moved in, started matching the filters).
        case enter
        /// It changed while inside.
        case change
        /// It left: ended, expired, removed, moved out, or stopped matching the filters.
        case leave
    }

    public var kind: Kind
    /// The standing query's name.
    public var watch: String
    /// The change-feed event that caused it (nil: found by comparing with the store's state, at
    /// the start or after a gap).
    public var sequence: Int64?
    public var at: Date
    /// Why an incident left: ended, expired, removed, moved, filtered.
    public var reason: String?
    /// The incident as it is now (for a removed one: as it was last seen inside).
    public var incident: Incident
    public var storeID: Int64
    /// From the circle's centre or the route (nil for a box).
    public var distance: Double?
    /// When its source stopped listing it: the incident's `state` in the event says "ended".
    public var ended: Date? = nil
    /// When the incident last changed in the store (for events found by comparing with the
    /// store, which have no `sequence`).
    public var lastChanged: Date? = nil
    /// Found by the clock alone (`WatchMatcher.timeCheckInterval`: a schedule's hours began or
    /// ended), not by a change: the same incident may enter every morning unchanged.
    public var byClock = false

    /// The same for the same event however often it is delivered: deliveries are at least once
    /// (a watch killed while delivering a batch delivers it again after its restart), and a
    /// receiver drops what it has seen by this key. One change-feed event concerns one incident,
    /// so the watch and the sequence number name it; an expiry is named by its incident and time;
    /// an event of a comparison by its kind, its incident and the incident's last change, so that
    /// a comparison made again (after a kill, even after an ingest) names the same event alike;
    /// one the clock brought by its incident and the time it was found.
    public var key: String {
        if let sequence { return "\(watch)/\(sequence)" }
        if kind == .leave, reason == "expired" { return "\(watch)/expired/\(storeID)/\(Int64(at.timeIntervalSince1970))" }
        // The clock's: each morning's enter is another event, named by when it was found.
        if byClock { return "\(watch)/\(kind.rawValue)/\(storeID)/clock/\(Int64(at.timeIntervalSince1970))" }
        let version = lastChanged.map { String(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? (reason ?? "-")
        return "\(watch)/\(kind.rawValue)/\(storeID)/\(version)"
    }

    /// The event as one JSON object (a line of NDJSON, a webhook's body, `--exec`'s stdin).
    public var jsonText: String {
        var o = JSONObjectText()
        o.add("event", kind.rawValue)
        o.add("watch", watch)
        o.add("seq", sequence.map(Double.init))
        o.add("key", key)
        o.add("at", TimestampParser.format(at))
        o.add("reason", reason)
        o.add(raw: "incident", Annotation(QueryResult(stored: StoredIncident(storeID: storeID, incident: incident, firstSeen: at, lastChanged: at, ended: ended),
                                                      distance: distance)).jsonText)
        return o.closed()
    }

    /// One line for a person on a terminal.
    public var line: String {
        let sign = kind == .enter ? "+" : kind == .change ? "~" : "-"
        var text = "\(TimestampParser.format(at)) \(sign) \(kind.rawValue) [\(watch)] \(incident.title)"
        if let category = incident.category { text += " (\(category.rawValue))" }
        if let distance { text += " · " + Annotation.formatDistance(distance) }
        if let reason { text += " · \(reason)" }
        return text
    }
}
