import Foundation
import TrafficGeoSupport

/// What a stored row is in the model of reports and events (docs/conflation.md).
///
/// Every incident a feed gives is a *report*, kept as read. Reports that describe one real-world
/// event are one *event*: what queries answer by default. A report that no other report joins is
/// an event of its own (`report`); once a second report joins it, the event gets a row of its own
/// (`event`), with fields merged from its reports, and the reports become its `member`s.
public enum EventRole: Int, Sendable, Codable, CaseIterable {
    /// A report that is an event of its own: answered both as an event and as a report.
    case report = 0
    /// A report merged into an event of several (`StoredIncident.event` names it): answered only
    /// with `--reports`.
    case member = 1
    /// An event built from several reports: answered only as an event.
    case event = 2

    /// The source an event's row is filed under in a store (it shows its first report's): no
    /// feed is read under this name.
    public static let eventSourceName = "(events)"

    /// Whether a row in this role answers a query for events (the default) or for reports.
    @inlinable
    public func answers(reports: Bool) -> Bool { reports ? self != .event : self != .member }
}

/// One report of an event, as every output lists it (`reports`): which feed said it, under which
/// id, when, and how its position was found.
public struct ReportReference: Sendable, Equatable, Codable {
    /// The report's row in this store.
    public var storeID: Int64
    public var source: String
    /// The feed's id of the report.
    public var id: String
    public var updated: Date?
    /// feed, weblink or geocoder (`PositionSource.Kind`); nil without a position.
    public var positionSource: String?

    public init(storeID: Int64, source: String, id: String, updated: Date?, positionSource: String?) {
        self.storeID = storeID
        self.source = source
        self.id = id
        self.updated = updated
        self.positionSource = positionSource
    }

    public init(_ stored: StoredIncident) {
        self.init(storeID: stored.storeID, source: stored.incident.source, id: stored.incident.id, updated: stored.incident.updated,
                  positionSource: stored.incident.positionSource?.kind.rawValue)
    }
}

extension ReportReference {
    /// The references as a store keeps them on an event's row: a JSON array, times as seconds
    /// since 1970 (as the store keeps every time).
    package static func text(_ references: [ReportReference]) -> String {
        var out = "["
        for (k, r) in references.enumerated() {
            var o = JSONObjectText()
            o.add("storeID", r.storeID)
            o.add("source", r.source)
            o.add("id", r.id)
            if let updated = r.updated { o.add("updated", updated.timeIntervalSince1970, digits: 3) }
            o.add("positionSource", r.positionSource)
            out += (k == 0 ? "" : ",") + o.closed()
        }
        return out + "]"
    }

    /// The references `text(_:)` wrote; an unreadable text gives none.
    package static func parse(_ text: String) -> [ReportReference] {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] else { return [] }
        return array.compactMap { o in
            guard let storeID = (o["storeID"] as? NSNumber)?.int64Value, let source = o["source"] as? String, let id = o["id"] as? String else {
                return nil
            }
            return ReportReference(storeID: storeID, source: source, id: id,
                                   updated: (o["updated"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) },
                                   positionSource: o["positionSource"] as? String)
        }
    }
}
