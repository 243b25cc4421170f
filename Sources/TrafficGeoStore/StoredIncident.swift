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

    public init(storeID: Int64, incident: Incident, firstSeen: Date, lastChanged: Date, ended: Date? = nil) {
        self.storeID = storeID
        self.incident = incident
        self.firstSeen = firstSeen
        self.lastChanged = lastChanged
        self.ended = ended
    }

    /// Not ended and not expired at `date` (whatever its start time: planned roadworks count).
    public func isLive(at date: Date) -> Bool {
        if let ended, ended <= date { return false }
        if let expires = incident.expires, expires <= date { return false }
        return true
    }
}
