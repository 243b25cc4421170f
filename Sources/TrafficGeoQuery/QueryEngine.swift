import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore
import TrafficGeoSupport

/// Its methods block (the store's work); async code runs them on a store thread:
/// `try await StoreThreads.run { try engine.nearest(…) }`.
///
/// Answers nearest, within-radius and bounding-box queries with exact WGS84 distances, from any
/// store (`IncidentStore`: the search itself is the store's, each with its own index), and sorts
/// answers. It returns values; formatting is the output stage's job.
///
///     let engine = QueryEngine(store: store)
///     let nearest = try engine.nearest(to: Coordinate(latitude: 50.94, longitude: 6.96), limit: 5)
public final class QueryEngine: Sendable {
    public let store: any StoreReader

    public init(store: any StoreReader) {
        self.store = store
    }

    // MARK: - Nearest

    /// The `limit` incidents nearest to `point` by geodesic distance, nearest first, optionally no
    /// farther than `maxDistance` metres. Equal to a brute-force scan.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                        filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        try store.nearest(to: point, limit: limit, maxDistance: maxDistance, filter: filter)
    }

    /// `nearest` without decoding the incidents: ids and distances, nearest first.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                                  filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
        try session { try $0.nearestNeighbours(to: point, limit: limit, maxDistance: maxDistance, filter: filter) }
    }

    // MARK: - Sessions

    /// Runs `body` on one consistent state of the store: every query made through the session
    /// sees the same committed data (an ingest running meanwhile is invisible to it), and a batch
    /// of queries pays for that once. The session must not escape `body`.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func session<T>(_ body: (any NeighbourSearch) throws -> T) throws -> T {
        try store.withNeighbourSearch(body)
    }

    // MARK: - Within

    /// Every incident within `radius` metres of `center` (boundary included), nearest first.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        var results: [QueryResult] = []
        try within(radius: radius, of: center, filter: filter) { results.append($0) }
        return results.sorted { QueryResult.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID)) }
    }

    /// Streams every incident within `radius` metres of `center`, in store order (`within` sorts them).
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter(),
                       handle: (QueryResult) throws -> Void) throws {
        try store.within(radius: radius, of: center, filter: filter, handle: handle)
    }

    /// Every incident within `radius` metres, as ids and distances (not decoded), nearest first.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
        try session { try $0.withinNeighbours(radius: radius, of: center, filter: filter) }
    }

    // MARK: - Bounding box and scan

    /// Incidents inside a longitude/latitude box (edges included), in store order; `west > east`
    /// crosses the antimeridian.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func inBoundingBox(west: Double, south: Double, east: Double, north: Double,
                              filter: IncidentFilter = IncidentFilter(), handle: (QueryResult) throws -> Void) throws {
        try inBoundingBox(LonLatBox(west: west, south: south, east: east, north: north), filter: filter, handle: handle)
    }

    /// Incidents inside `box` (edges included), in store order.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func inBoundingBox(_ box: LonLatBox, filter: IncidentFilter = IncidentFilter(), handle: (QueryResult) throws -> Void) throws {
        try store.inBoundingBox(box, filter: filter, handle: handle)
    }

    /// Every incident matching `filter` (located or not), in store order; for export.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func all(filter: IncidentFilter = IncidentFilter(), locatedOnly: Bool = false,
                    handle: (QueryResult) throws -> Void) throws {
        try store.all(filter: filter, locatedOnly: locatedOnly, handle: handle)
    }

    // MARK: - Along a route

    /// Every incident within `buffer` metres of the route, in the order a driver from its start
    /// meets them (`RouteCourse.meet`: the first stretch that passes within the buffer; ties by
    /// distance from the route, then store id). An incident with a road segment (a work zone's
    /// line) counts when the route passes within the buffer of the line, not only of its start.
    /// Each answer's `alongRoute` is the metres driven to it, its `distance` how far off the route
    /// it is. The store is asked about a band of boxes along the route (`RouteCourse.searchBoxes`,
    /// widened by `RouteCourse.segmentReach` for the segments), each incident tested once.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public func along(_ course: RouteCourse, buffer: Double, filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        var seen = Set<Int64>()
        var found: [QueryResult] = []
        for box in course.searchBoxes(buffer: buffer + RouteCourse.segmentReach) {
            try store.inBoundingBox(box, filter: filter) { result in
                guard seen.insert(result.stored.storeID).inserted, let position = result.incident.position else { return }
                let meeting: RouteCourse.Meeting?
                if let segment = result.incident.segment, segment.count >= 2 {
                    meeting = course.meet(segment: segment, within: buffer)
                } else {
                    meeting = course.meet(position, within: buffer)
                }
                guard let meeting else { return }
                var r = result
                r.distance = meeting.offset
                r.bearing = nil
                r.alongRoute = meeting.along
                found.append(r)
            }
        }
        return found.sorted {
            if $0.alongRoute != $1.alongRoute { return $0.alongRoute! < $1.alongRoute! }
            return QueryResult.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID))
        }
    }

    // MARK: - Sorting

    /// Sorts results; ties (and missing values, which go last) fall back to distance, then store id.
    public static func sort(_ results: [QueryResult], by key: QuerySort) -> [QueryResult] {
        func tieBreak(_ a: QueryResult, _ b: QueryResult) -> Bool {
            if a.distance != b.distance { return (a.distance ?? .infinity) < (b.distance ?? .infinity) }
            return a.stored.storeID < b.stored.storeID
        }
        func compareOptional<T: Comparable>(_ x: T?, _ y: T?, _ a: QueryResult, _ b: QueryResult, descending: Bool) -> Bool {
            switch (x, y) {
            case let (x?, y?) where x != y: return descending ? x > y : x < y
            case (nil, _?): return false
            case (_?, nil): return true
            default: return tieBreak(a, b)
            }
        }
        switch key {
        case .distance: return results.sorted(by: tieBreak)
        case .updated: return results.sorted { compareOptional($0.incident.updated, $1.incident.updated, $0, $1, descending: true) }
        case .expires: return results.sorted { compareOptional($0.incident.expires, $1.incident.expires, $0, $1, descending: false) }
        case .severity:
            return results.sorted {
                compareOptional($0.incident.properties["severity"].flatMap(Severity.init(stored:)),
                                $1.incident.properties["severity"].flatMap(Severity.init(stored:)), $0, $1, descending: true)
            }
        case .title:
            return results.sorted {
                let a = TextFolding.fold($0.incident.title), b = TextFolding.fold($1.incident.title)
                return a != b ? a < b : tieBreak($0, $1)
            }
        }
    }
}
