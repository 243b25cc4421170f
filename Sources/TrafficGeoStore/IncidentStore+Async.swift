import Foundation
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoProjection

/// The store API for async code: every blocking call runs on a store thread (`StoreThreads`),
/// never on Swift's cooperative pool. The same names as the synchronous API, which is
/// `noasync`: in async code the compiler picks these.
///
///     let nearest = try await store.nearest(to: point, limit: 5, maxDistance: nil, filter: IncidentFilter())
///     let written = try await store.perform { store in   // several calls on one store thread
///         try store.all(filter: filter, locatedOnly: true) { try writer.write($0) }
///     }
extension StoreHandle {
    /// Runs `body` on a store thread with the synchronous API: several calls in one hop, or
    /// streaming (`all`, `within` with a handler) into a writer. Cancelling the awaiting task
    /// stops the work (`StoreThreads.run`).
    public func perform<T: Sendable>(_ body: @escaping @Sendable (Self) throws -> T) async throws -> T {
        try await StoreThreads.run { try body(self) }
    }
}

extension StoreReader {
    public func feedHealth() async throws -> [FeedHealth] { try await perform { try $0.feedHealth() } }

    public func knownJunctions(roads: Set<String>? = nil) async throws -> [KnownJunction] { try await perform { try $0.knownJunctions(roads: roads) } }

    public func roadPositions(road: String, limit: Int = 4000) async throws -> [Coordinate] {
        try await perform { try $0.roadPositions(road: road, limit: limit) }
    }

    public func conflationSettings() async throws -> ConflationSettings { try await perform { try $0.conflationSettings() } }
    public func sourceReading(for source: String) async throws -> SourceReading? { try await perform { try $0.sourceReading(for: source) } }

    public func incident(id: Int64) async throws -> StoredIncident? { try await perform { try $0.incident(id: id) } }

    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) async throws -> [QueryResult] {
        try await perform { try $0.nearest(to: point, limit: limit, maxDistance: maxDistance, filter: filter) }
    }

    /// Every incident within `radius` metres of `center`, in store order.
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter) async throws -> [QueryResult] {
        try await perform { store in
            var found: [QueryResult] = []
            try store.within(radius: radius, of: center, filter: filter) { found.append($0) }
            return found
        }
    }

    /// Every incident inside the box, in store order.
    public func inBoundingBox(_ box: LonLatBox, filter: IncidentFilter) async throws -> [QueryResult] {
        try await perform { store in
            var found: [QueryResult] = []
            try store.inBoundingBox(box, filter: filter) { found.append($0) }
            return found
        }
    }

    public func count(filter: IncidentFilter, locatedOnly: Bool) async throws -> Int {
        try await perform { try $0.count(filter: filter, locatedOnly: locatedOnly) }
    }

    public func all(filter: IncidentFilter, locatedOnly: Bool, offset: Int, limit: Int) async throws -> [QueryResult] {
        try await perform { try $0.all(filter: filter, locatedOnly: locatedOnly, offset: offset, limit: limit) }
    }

    /// Every incident in store order (export, tests).
    public func allIncidents() async throws -> [StoredIncident] { try await perform { try $0.allIncidents() } }

    public func changes(after sequence: Int64, limit: Int) async throws -> [Change] { try await perform { try $0.changes(after: sequence, limit: limit) } }

    public func changeFeedBounds() async throws -> ChangeFeedBounds { try await perform { try $0.changeFeedBounds() } }

    public func firstChange(atOrAfter date: Date) async throws -> Int64? { try await perform { try $0.firstChange(atOrAfter: date) } }

    public func incidents(ids: [Int64]) async throws -> [Int64: StoredIncident] { try await perform { try $0.incidents(ids: ids) } }

    public func statistics(now: Date = Date()) async throws -> StoreStatistics { try await perform { try $0.statistics(now: now) } }

    public func incidentCounts(now: Date = Date()) async throws -> IncidentCounts { try await perform { try $0.incidentCounts(now: now) } }

    public func locatedExtent() async throws -> LonLatBox? { try await perform { try $0.locatedExtent() } }

    public func checkIntegrity() async throws -> [String] { try await perform { try $0.checkIntegrity() } }
}

extension StoreWriter {
    public func ingest(source: String, format: FeedFormat? = nil, adopting formerNames: FormerSourceNames = .none,

                       snapshot: SnapshotScope? = nil, now: Date = Date(),
                       read: @escaping @Sendable ((FeedEvent) throws -> Void) throws -> Void) async throws -> IngestSummary {
        try await perform { try $0.ingest(source: source, format: format, adopting: formerNames, snapshot: snapshot, now: now, read: read) }
    }
    public func recordFetch(_ report: FetchReport) async throws { try await perform { try $0.recordFetch(report) } }

    public func pendingGeocodes(source: String? = nil, retryNotFound: Bool = false, limit: Int = -1) async throws -> [StoredIncident] {
        try await perform { try $0.pendingGeocodes(source: source, retryNotFound: retryNotFound, limit: limit) }
    }

    public func recordGeocode(storeID: Int64, result: Result<LocatedPosition?, GeocodingError>, geocoder: String) async throws {
        try await perform { try $0.recordGeocode(storeID: storeID, result: result, geocoder: geocoder) }
    }

    public func relearnJunctions() async throws -> JunctionLearning { try await perform { try $0.relearnJunctions() } }

    public func recordJunctionObservations(_ observations: [JunctionObservation], observer: String, replacing: Bool = false) async throws {
        try await perform { try $0.recordJunctionObservations(observations, observer: observer, replacing: replacing) }
    }

    public func setConflationSettings(_ settings: ConflationSettings) async throws { try await perform { try $0.setConflationSettings(settings) } }
    public func setSourceReading(_ reading: SourceReading?, for source: String) async throws { try await perform { try $0.setSourceReading(reading, for: source) } }

    public func rebuildEvents() async throws -> EventChanges { try await perform { try $0.rebuildEvents() } }

    public func pruneExpired(before date: Date = Date()) async throws -> Int { try await perform { try $0.pruneExpired(before: date) } }

    public func pruneEnded(before date: Date) async throws -> Int { try await perform { try $0.pruneEnded(before: date) } }

    public func pruneChanges(before date: Date) async throws -> Int { try await perform { try $0.pruneChanges(before: date) } }
}
