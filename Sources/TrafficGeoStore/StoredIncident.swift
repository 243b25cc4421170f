import Foundation
import TrafficGeoModel

/// An incident as the store keeps it: the incident plus its store id and bookkeeping times.
public struct StoredIncident: Sendable, Equatable {
    /// The store's id (the R*Tree key).
    public var storeID: Int64
    public var incident: Incident
    public var firstSeen: Date
    public var lastChanged: Date

    public init(storeID: Int64, incident: Incident, firstSeen: Date, lastChanged: Date) {
        self.storeID = storeID
        self.incident = incident
        self.firstSeen = firstSeen
        self.lastChanged = lastChanged
    }
}
