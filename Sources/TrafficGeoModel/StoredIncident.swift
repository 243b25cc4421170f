import Foundation
import TrafficGeoModel

/// An incident as the store keeps it: the incident plus its store id and bookkeeping times.
public struct StoredIncident: Sendable, Equatable {
    /// The store's id (the R*Tree key).
    public var storeID: Int64
    public var incident: Incident
    public var firstSeen: Date
    public var lastChanged: Date
    /// When a snapshot of its source stopped listing it (`SnapshotScope`); nil while it goes on.
    public var ended: Date?
    /// A report of its own, a report merged into an event, or an event of several reports
    /// (docs/conflation.md).
    public var role: EventRole
    /// For a merged report (`EventRole.member`): the store id of its event.
    public var memberOf: Int64?
    /// For an event of several reports (`EventRole.event`): its reports, the first one first.
    public var memberReports: [ReportReference]
    /// For one that neither expires nor has ended: the last time a snapshot of its source
    /// (of one of its reports' sources, for an event) was read, which listed it, else nil. A feed
    /// followed by snapshots vouches for what it still lists (`IncidentFilter.isUnconfirmed`).
    public var listedAt: Date?

    public init(storeID: Int64, incident: Incident, firstSeen: Date, lastChanged: Date, ended: Date? = nil,
                role: EventRole = .report, memberOf: Int64? = nil, memberReports: [ReportReference] = [], listedAt: Date? = nil) {
        self.storeID = storeID
        self.incident = incident
        self.firstSeen = firstSeen
        self.lastChanged = lastChanged
        self.ended = ended
        self.role = role
        self.memberOf = memberOf
        self.memberReports = memberReports
        self.listedAt = listedAt
    }

    /// The store id of the event it is or belongs to: what `serve` links to, `watch` follows and
    /// the change feed names. Stable while any of the event's reports lives.
    public var event: Int64 { memberOf ?? storeID }

    /// The reports of the event it is: its members, or itself for a report of its own; none for a
    /// merged report (answered with `--reports`, it names its `event`).
    public var reports: [ReportReference] {
        switch role {
        case .report: [ReportReference(self)]
        case .member: []
        case .event: memberReports
        }
    }

    /// Not ended and not expired at `date` (whatever its start time: planned roadworks count).
    public func isLive(at date: Date) -> Bool {
        if let ended, ended <= date { return false }
        if let expires = incident.expires, expires <= date { return false }
        return true
    }
}
