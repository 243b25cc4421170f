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

    /// The event as one JSON object (a line of NDJSON, a webhook's body, `--exec`'s stdin).
    public var jsonText: String {
        var o = JSONObjectText()
        o.add("event", kind.rawValue)
        o.add("watch", watch)
        o.add("seq", sequence.map(Double.init))
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
