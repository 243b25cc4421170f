import Foundation
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoProjection

/// What ingest, geocoding, queries and maintenance need of a store, and nothing of how it keeps
/// its data: `SQLiteIncidentStore` (one file, the default) and `PostGISIncidentStore` implement
/// it. Every answer is exact: distances are WGS84 geodesics (Karney), ties broken by store id,
/// so two stores holding the same incidents give the same answers.
///
/// Reading and writing are separate protocols, as GRDB separates them: `serve`, the query
/// engine and a watch need only an `StoreReader` (a store opened read-only is one);
/// ingest, geocoding, junction learning and pruning are an `StoreWriter`'s.
public protocol IncidentStore: StoreReader, StoreWriter {}

/// What reading and writing share: where the store is, and (IncidentStore+Async) running
/// blocking work on a store thread.
public protocol StoreHandle: AnyObject, Sendable {
    /// Where the store is (a file path, a URL without its password), for messages.
    var location: String { get }
}

/// Questions to a store: queries, the change feed, statistics, what it knows of feeds,
/// junctions and its merge settings. Nothing here changes the data.
public protocol StoreReader: StoreHandle {

    /// The fetch history of every source that has one, by source name.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func feedHealth() throws -> [FeedHealth]

    /// The junctions the store knows, optionally only on these roads.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func knownJunctions(roads: Set<String>?) throws -> [KnownJunction]

    /// Positions of incidents on `road` (a sample of at most `limit`): where the road runs.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func roadPositions(road: String, limit: Int) throws -> [Coordinate]

    /// The thresholds by which this store merges reports into events.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func conflationSettings() throws -> ConflationSettings

    /// The `--field` mapping and `--crs` kept for a source (`SourceReading`), nil when none is.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func sourceReading(for source: String) throws -> SourceReading?

    /// The incident with this store id.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func incident(id: Int64) throws -> StoredIncident?

    /// The `limit` incidents nearest to `point`, nearest first, no farther than `maxDistance` metres.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func nearest(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [QueryResult]

    /// Every incident within `radius` metres of `center` (boundary included), in store order.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func within(radius: Double, of center: Coordinate, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws

    /// Every incident inside the box (edges included), in store order.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func inBoundingBox(_ box: LonLatBox, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws

    /// Every incident matching `filter` (with `locatedOnly`, only those with a position), in store order.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func all(filter: IncidentFilter, locatedOnly: Bool, handle: (QueryResult) throws -> Void) throws

    /// How many incidents `all` would hand over (a server's `numberMatched`).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func count(filter: IncidentFilter, locatedOnly: Bool) throws -> Int

    /// `all`'s incidents from the `offset`-th on, at most `limit` of them (a server's pages).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func all(filter: IncidentFilter, locatedOnly: Bool, offset: Int, limit: Int) throws -> [QueryResult]

    /// Runs `body` on one consistent state of the store: lean queries (ids and distances) for
    /// batches. The search must not escape `body`.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func withNeighbourSearch<T>(_ body: (any NeighbourSearch) throws -> T) throws -> T

    /// `withNeighbourSearch` on up to `sessions` searches at once, each on its own store thread
    /// and every one on the same committed state: `body` runs once per session (with its number,
    /// 0 ..< the count that opened) and the answers come back in that order. A store that cannot
    /// give several connections one state answers with one session (the default).
    func withNeighbourSearches<T: Sendable>(upTo sessions: Int,
                                            _ body: @escaping @Sendable (Int, any NeighbourSearch) throws -> T) async throws -> [T]

    /// Up to `limit` events after sequence number `sequence`, oldest first.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func changes(after sequence: Int64, limit: Int) throws -> [Change]

    /// The events the feed holds.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func changeFeedBounds() throws -> ChangeFeedBounds

    /// The first event recorded at or after `date`, if any.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func firstChange(atOrAfter date: Date) throws -> Int64?

    /// The events with these store ids (missing ones, deleted since or merged into another
    /// event, are left out).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func incidents(ids: [Int64]) throws -> [Int64: StoredIncident]

    /// Counts for `trafficgeo stats`.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func statistics(now: Date) throws -> StoreStatistics

    /// How many incidents there are, and how many are active at `now` (serve's /metrics): one
    /// pass over the table, without the rest of `statistics`.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func incidentCounts(now: Date) throws -> IncidentCounts

    /// Bounds every statement from now on to `limit` where the database itself can stop one
    /// (PostgreSQL's `statement_timeout`): `serve` sets its request time limit, so a query the
    /// client no longer waits for does not run on. The SQLite store is stopped through `QueryStop`.
    func limitStatements(to limit: Duration)

    /// The smallest longitude/latitude box that holds every located incident (west ≤ east:
    /// data across the antimeridian spans the globe's width); nil when none is located.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func locatedExtent() throws -> LonLatBox?

    /// Problems with the stored data or its index; empty when sound.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func checkIntegrity() throws -> [String]
}

/// What changes a store: ingest (and each fetch's record), geocoding results and their cache,
/// junction knowledge, how reports merge into events, pruning.
public protocol StoreWriter: StoreHandle, GeocodeCaching {

    /// Runs `read` inside one transaction and stores every incident it emits (insert, or update
    /// by source and feed id). A `FeedError.malformed` thrown by `read` keeps the entries emitted
    /// before it (the summary says so); any other error leaves the store as it was. Incidents an
    /// older version filed under `formerNames` join `source` first.
    ///
    /// With a `snapshot`, what `read` emits is all the source (or the parts named) holds now: its
    /// incidents not emitted end (a feed that broke off, or entries skipped, end nothing they
    /// might name). Every new, changed and ended incident is recorded in the change feed, in the
    /// same transaction.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func ingest(source: String, format: FeedFormat?, adopting formerNames: FormerSourceNames, snapshot: SnapshotScope?, now: Date,
                read: ((FeedEvent) throws -> Void) throws -> Void) throws -> IngestSummary

    /// Records how a fetch of a source went (feed health in `statistics`).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func recordFetch(_ report: FetchReport) throws

    /// Incidents without a position that have not been given up on (nor ended), oldest first.
    /// `retryNotFound` also returns those a geocoder definitely did not find before.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func pendingGeocodes(source: String?, retryNotFound: Bool, limit: Int) throws -> [StoredIncident]

    /// Records a geocoding outcome: a position (indexed), or why there is none.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func recordGeocode(storeID: Int64, result: Result<LocatedPosition?, GeocodingError>, geocoder: String) throws

    /// Learns from every positioned incident of the store.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func relearnJunctions() throws -> JunctionLearning

    /// Records observations from outside the incidents (a geocoder's junction answer, an import).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func recordJunctionObservations(_ observations: [JunctionObservation], observer: String, replacing: Bool) throws

    /// Keeps new thresholds: every ingest and geocode from now on merges by them
    /// (`rebuildEvents` applies them to the reports stored).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func setConflationSettings(_ settings: ConflationSettings) throws

    /// Keeps how a source is read for its later ingests; nil (or an empty reading) forgets it.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func setSourceReading(_ reading: SourceReading?, for source: String) throws

    /// Merges every stored report into events anew, source by source in the order they were
    /// first read: the events of several reports are made again (with new ids), which the
    /// change feed records.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func rebuildEvents() throws -> EventChanges

    /// Deletes incidents whose `expires` lies before `date`; returns how many.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func pruneExpired(before date: Date) throws -> Int

    /// Deletes incidents that ended before `date`; returns how many.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func pruneEnded(before date: Date) throws -> Int

    /// Forgets change-feed events recorded before `date` (sequence numbers are not reused).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    func pruneChanges(before date: Date) throws -> Int
}

/// Lean queries on one consistent state of a store (`IncidentStore.withNeighbourSearch`).
public protocol NeighbourSearch {
    /// The `limit` nearest incidents as ids and distances, nearest first.
    func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [Neighbour]
    /// Every incident within `radius` metres as ids and distances, nearest first.
    func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter) throws -> [Neighbour]
    /// Every located incident inside the box (edges included; `west > east` crosses the
    /// antimeridian), in store-id order, as store ids and positions only: no incident decoded,
    /// no feed id (`id` is empty), `distance` 0. What counting and ranking a map's view costs.
    func boxNeighbours(_ box: LonLatBox, filter: IncidentFilter) throws -> [Neighbour]
}

extension NeighbourSearch {
    public func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double? = nil) throws -> [Neighbour] {
        try nearestNeighbours(to: point, limit: limit, maxDistance: maxDistance, filter: IncidentFilter())
    }

    public func withinNeighbours(radius: Double, of center: Coordinate) throws -> [Neighbour] {
        try withinNeighbours(radius: radius, of: center, filter: IncidentFilter())
    }
}

// The usual arguments.
extension StoreReader {
    /// Nothing to set: stores whose work `QueryStop` ends need no limit of their own.
    public func limitStatements(to limit: Duration) {}

    /// One session: `withNeighbourSearch` on a store thread.
    public func withNeighbourSearches<T: Sendable>(upTo sessions: Int,
                                                   _ body: @escaping @Sendable (Int, any NeighbourSearch) throws -> T) async throws -> [T] {
        [try await StoreThreads.run { try self.withNeighbourSearch { try body(0, $0) } }]
    }
}

extension StoreReader {
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func knownJunctions() throws -> [KnownJunction] { try knownJunctions(roads: nil) }

    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func roadPositions(road: String) throws -> [Coordinate] { try roadPositions(road: road, limit: 4000) }

    /// By streaming `all`; a store with a query language counts in it.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func count(filter: IncidentFilter, locatedOnly: Bool) throws -> Int {
        var n = 0
        try all(filter: filter, locatedOnly: locatedOnly) { _ in n += 1 }
        return n
    }

    /// By streaming `all` up to the page's end; a store with a query language pages in it.
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func all(filter: IncidentFilter, locatedOnly: Bool, offset: Int, limit: Int) throws -> [QueryResult] {
        var seen = 0
        var page: [QueryResult] = []
        do {
            try all(filter: filter, locatedOnly: locatedOnly) { result in
                seen += 1
                if seen > offset { page.append(result) }
                if page.count >= limit { throw PageIsFull() }
            }
        } catch is PageIsFull {}
        return page
    }

    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func statistics() throws -> StoreStatistics { try statistics(now: Date()) }

    /// Every incident in store order (export, tests).
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func allIncidents() throws -> [StoredIncident] {
        var all: [StoredIncident] = []
        try self.all(filter: IncidentFilter(), locatedOnly: false) { all.append($0.stored) }
        return all
    }
}

extension StoreWriter {
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func ingest(source: String, format: FeedFormat? = nil, adopting formerNames: FormerSourceNames = .none,

                       snapshot: SnapshotScope? = nil, now: Date = Date(),
                       read: ((FeedEvent) throws -> Void) throws -> Void) throws -> IngestSummary {
        try ingest(source: source, format: format, adopting: formerNames, snapshot: snapshot, now: now, read: read)
    }
    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func pendingGeocodes(source: String? = nil, retryNotFound: Bool = false, limit: Int = -1) throws -> [StoredIncident] {
        try pendingGeocodes(source: source, retryNotFound: retryNotFound, limit: limit)
    }

    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    public func recordJunctionObservations(_ observations: [JunctionObservation], observer: String) throws {
        try recordJunctionObservations(observations, observer: observer, replacing: false)
    }

    @available(*, noasync, message: "blocks its thread: use the async overload (await) in async code")
    @discardableResult
    public func pruneExpired() throws -> Int { try pruneExpired(before: Date()) }
}

/// Ends the streaming of `all` once a page is full (the default paging).
private struct PageIsFull: Error {}
