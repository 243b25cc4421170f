import Foundation
import TrafficGeoModel

/// One answer of a query: a stored incident with its exact distance and bearing from the query point.
public struct QueryResult: Sendable, Equatable {
    public var stored: StoredIncident
    /// WGS84 geodesic distance in metres (nil for queries without a reference point).
    public var distance: Double?
    /// Initial bearing from the query point, degrees clockwise from north.
    public var bearing: Double?
    /// Along a route (`QueryEngine.along`): metres driven from the route's start to where the
    /// incident is passed (`distance` is then how far off the route it is).
    public var alongRoute: Double?

    public var incident: Incident { stored.incident }

    public init(stored: StoredIncident, distance: Double? = nil, bearing: Double? = nil) {
        self.stored = stored
        self.distance = distance
        self.bearing = bearing
    }
}

/// A lean answer: which incident and how far, without decoding the incident (batch queries).
public struct Neighbour: Sendable, Equatable {
    public var storeID: Int64
    /// The feed's id of the incident.
    public var id: String
    /// WGS84 geodesic distance in metres.
    public var distance: Double
    /// Where the incident is (for a bearing: `Geodesic.inverse`).
    public var position: Coordinate

    /// Inlinable, like `QueryResult.precedes`: a store makes one per answer of a radius query,
    /// hundreds a query, from its own module.
    @inlinable
    public init(storeID: Int64, id: String, distance: Double, position: Coordinate) {
        self.storeID = storeID
        self.id = id
        self.distance = distance
        self.position = position
    }
}

extension QueryResult {
    /// The order of answers: by distance, ties by store id (stable output). Inlinable: stores sort
    /// hundreds of answers a query with it, from other modules.
    @inlinable
    package static func precedes(_ a: (Double, Int64), _ b: (Double, Int64)) -> Bool {
        a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }
}
