import Foundation
import Logging
import PostgresNIO
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// Nearest, within-radius and bounding-box answers from PostGIS, exact: the index proposes
/// candidates, Karney's geodesic distance (`Geodesic`, the same code as the SQLite store's)
/// decides. So both stores give the same incidents at the same distances.
extension PostGISIncidentStore {
    /// How far PostGIS's `<->` on geography (a great-circle distance on a sphere of the mean
    /// Earth radius) can lie above the WGS84 geodesic: the ellipsoid's radii of curvature span
    /// 6,335 to 6,400 km against the sphere's 6,371, so the two differ by at most 0.56 %. A
    /// candidate at `<->` distance s is at least s × (1 − this) away on the ellipsoid.
    static let sphereExcess = 0.01

    /// A point parameter as a geography.
    private static func point(_ p: Coordinate, _ query: inout BoundSQL) -> String {
        "ST_SetSRID(ST_MakePoint(\(query.bind(p.longitude)), \(query.bind(p.latitude))), 4326)::geography"
    }

    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [QueryResult] {
        try read { connection in
            let neighbours = try nearestNeighbours(connection, to: point, limit: limit, maxDistance: maxDistance, filter: filter)
            let incidents = try neighbours.isEmpty ? [:] : fetch(connection, ids: neighbours.map(\.storeID))
            return try neighbours.map {
                let (distance, bearing) = Geodesic.inverse(from: point, to: $0.position)
                guard let stored = incidents[$0.storeID] else {
                    throw StoreError.readFailed(location, reason: "incident \($0.storeID) vanished during the query")
                }
                return QueryResult(stored: stored, distance: distance, bearing: bearing)
            }.sorted { QueryResult.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID)) }
        }
    }

    /// The `limit` nearest as ids and exact distances. Candidates come in `<->` order, a batch at
    /// a time; once the k-th exact distance lies below what any candidate not yet seen could
    /// have (the last one's `<->` distance less `sphereExcess`), no other can be nearer. Most
    /// queries need one batch of 2k + 10.
    func nearestNeighbours(_ connection: PostgresConnection, to point: Coordinate, limit: Int, maxDistance: Double?,
                           filter: IncidentFilter) throws -> [Neighbour] {
        guard limit > 0 else { return [] }
        var candidates = max(2 * limit, limit + 10)
        while true {
            var query = BoundSQL()
            let p = Self.point(point, &query)
            let condition = filter.condition(binding: &query)
            query.sql = """
                SELECT i.id, i.external_id, i.latitude, i.longitude, i.position <-> \(p) FROM incidents i
                WHERE i.position IS NOT NULL AND \(condition) ORDER BY i.position <-> \(p) LIMIT \(query.bind(candidates))
                """
            let rows = try connection.rows(query.query, logger: logger)
            var best: [Neighbour] = []
            var lastSphere = 0.0
            let q = GeocentricPoint(point)
            for row in rows {
                let (id, externalID, lat, lon, sphere) = try row.decode((Int64, String, Double, Double, Double).self)
                lastSphere = sphere
                let position = Coordinate(latitude: lat, longitude: lon)
                // Measured as the SQLite store measures (the short-line formula, Karney near a limit).
                let distance = Geodesic.distance(q, GeocentricPoint(position), from: point, to: position, limit: maxDistance)
                if let maxDistance, distance > maxDistance { continue }
                best.append(Neighbour(storeID: id, id: externalID, distance: distance, position: position))
            }
            best.sort { QueryResult.precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
            if best.count > limit { best.removeLast(best.count - limit) }
            let unseenAtLeast = lastSphere * (1 - Self.sphereExcess)
            if rows.count < candidates                                        // every candidate seen
                || (maxDistance.map { unseenAtLeast > $0 } ?? false)           // the rest lie beyond the limit
                || (best.count == limit && best[limit - 1].distance < unseenAtLeast) {
                return best
            }
            candidates *= 4
        }
    }

    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws {
        let q = GeocentricPoint(center)
        try read { connection in
            try scan(connection, selecting: PostGISRows.selection, filter: filter, where: { query in Self.withinCondition(center, radius, &query) }) { row in
                let stored = try PostGISRows.decode(row)
                guard let position = stored.incident.position else { return }
                // Measured as the SQLite store measures (the short-line formula, Karney near the radius).
                let p = GeocentricPoint(position)
                let distance = Geodesic.distance(q, p, from: center, to: position, limit: radius)
                if distance <= radius {
                    let bearing = Geodesic.bearing(q, p, from: center, to: position)
                    try asCaller { try handle(QueryResult(stored: stored, distance: distance, bearing: bearing)) }
                }
            }
        }
    }

    /// `inBoundingBox` as store ids and positions, nothing decoded (`NeighbourSearch.boxNeighbours`).
    func boxNeighbours(_ connection: PostgresConnection, _ box: LonLatBox, filter: IncidentFilter) throws -> [Neighbour] {
        var found: [Neighbour] = []
        try scan(connection, selecting: "i.id, i.latitude, i.longitude", filter: filter, where: { query in Self.boxCondition(box, &query) }) { row in
            let (id, lat, lon) = try (row[0].decode(Int64.self), row[1].decode(Double.self), row[2].decode(Double.self))
            let position = Coordinate(latitude: lat, longitude: lon)
            if box.contains(position) { found.append(Neighbour(storeID: id, id: "", distance: 0, position: position)) }
        }
        return found
    }

    /// The candidates of a box: through the index as the circle that holds it, up to
    /// `indexedBoxSpan` degrees a side; by latitude and longitude beyond. The caller checks the box.
    private static func boxCondition(_ box: LonLatBox, _ query: inout BoundSQL) -> String {
        if let (center, radius) = box.enclosingCircle(maxSpan: indexedBoxSpan) {
            return "ST_DWithin(i.position, \(point(center, &query)), \(query.bind(radius * (1 + sphereExcess))), false)"
        }
        let lon = box.west <= box.east
            ? "i.longitude BETWEEN \(query.bind(box.west)) AND \(query.bind(box.east))"
            : "(i.longitude >= \(query.bind(box.west)) OR i.longitude <= \(query.bind(box.east)))"
        return "i.latitude BETWEEN \(query.bind(box.south)) AND \(query.bind(box.north)) AND \(lon)"
    }

    func withinNeighbours(_ connection: PostgresConnection, radius: Double, of center: Coordinate, filter: IncidentFilter) throws -> [Neighbour] {
        var found: [Neighbour] = []
        let q = GeocentricPoint(center)
        try scan(connection, selecting: "i.id, i.external_id, i.latitude, i.longitude", filter: filter, where: { query in
            Self.withinCondition(center, radius, &query)
        }) { row in
            let (id, externalID, lat, lon) = try (row[0].decode(Int64.self), row[1].decode(String.self), row[2].decode(Double.self), row[3].decode(Double.self))
            let position = Coordinate(latitude: lat, longitude: lon)
            let distance = Geodesic.distance(q, GeocentricPoint(position), from: center, to: position, limit: radius)
            if distance <= radius { found.append(Neighbour(storeID: id, id: externalID, distance: distance, position: position)) }
        }
        return found.sorted { QueryResult.precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
    }

    /// The candidates of a radius query: PostGIS's test on the sphere (cheaper than on the
    /// spheroid: a tenth of a 10 km query on 1M points) with the radius widened by `sphereExcess`
    /// and a metre, so that it holds every point within `radius` on the ellipsoid; the exact test
    /// of the caller decides, as in the SQLite store.
    private static func withinCondition(_ center: Coordinate, _ radius: Double, _ query: inout BoundSQL) -> String {
        "ST_DWithin(i.position, \(point(center, &query)), \(query.bind(radius * (1 + sphereExcess) + 1)), false)"
    }

    /// A box up to `indexedBoxSpan` degrees a side is read through the index, as the circle
    /// around its centre that holds it (the SQLite store's way), then each candidate is checked
    /// against the box itself; larger boxes are scanned by latitude and longitude.
    public func inBoundingBox(_ box: LonLatBox, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws {
        try read { connection in
            try scan(connection, selecting: PostGISRows.selection, filter: filter, where: { query in Self.boxCondition(box, &query) }) { row in
                let stored = try PostGISRows.decode(row)
                guard let position = stored.incident.position, box.contains(position) else { return }
                try asCaller { try handle(QueryResult(stored: stored)) }
            }
        }
    }

    /// Boxes up to this many degrees of latitude and of longitude go through the index.
    static let indexedBoxSpan = 30.0

    public func all(filter: IncidentFilter, locatedOnly: Bool, handle: (QueryResult) throws -> Void) throws {
        try read { connection in
            try scan(connection, selecting: PostGISRows.selection, filter: filter, where: { _ in locatedOnly ? "i.latitude IS NOT NULL" : "TRUE" }) { row in
                let result = QueryResult(stored: try PostGISRows.decode(row))
                try asCaller { try handle(result) }
            }
        }
    }

    public func count(filter: IncidentFilter, locatedOnly: Bool) throws -> Int {
        try readOne { connection in
            var query = BoundSQL()
            let condition = filter.condition(binding: &query)
            query.sql = "SELECT count(*) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition)"
            return try connection.rows(query.query, logger: logger).first?.decode(Int.self) ?? 0
        }
    }

    public func all(filter: IncidentFilter, locatedOnly: Bool, offset: Int, limit: Int) throws -> [QueryResult] {
        try readOne { connection in
            var query = BoundSQL()
            let condition = filter.condition(binding: &query)
            query.sql = """
                SELECT \(PostGISRows.selection) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition) \
                ORDER BY i.id LIMIT \(query.bind(max(0, limit))) OFFSET \(query.bind(max(0, offset)))
                """
            return try connection.rows(query.query, logger: logger).map { QueryResult(stored: try PostGISRows.decode($0)) }
        }
    }

    /// One read transaction for all of `body`'s queries: every query sees the same committed state.
    /// `body`'s own errors pass as they are; its queries report the database's as failed reads.
    public func withNeighbourSearch<T>(_ body: (any NeighbourSearch) throws -> T) throws -> T {
        try read { connection in try asCaller { try body(PostGISNeighbourSearch(store: self, connection: connection)) } }
    }

    /// The rows matching `filter` and a condition of ours, in store order, a page at a time (a
    /// whole export is never held in memory): pages follow the last id seen, inside the
    /// caller's one transaction.
    private func scan(_ connection: PostgresConnection, selecting columns: String, filter: IncidentFilter,
                      where condition: (inout BoundSQL) -> String, page: Int = 2000, handle: (PostgresRandomAccessRow) throws -> Void) throws {
        var after = Int64.min
        while true {
            var query = BoundSQL()
            let own = condition(&query)
            let filtered = filter.condition(binding: &query)
            query.sql = """
                SELECT \(columns) FROM incidents i WHERE \(own) AND \(filtered) AND i.id > \(query.bind(after)) \
                ORDER BY i.id LIMIT \(query.bind(page))
                """
            let rows = try connection.rows(query.query, logger: logger)
            for row in rows {
                let access = PostgresRandomAccessRow(row)
                after = try access[0].decode(Int64.self)
                try handle(access)
            }
            if rows.count < page { return }
        }
    }
}

/// Lean queries inside one read transaction of the PostGIS store.
private struct PostGISNeighbourSearch: NeighbourSearch {
    let store: PostGISIncidentStore
    let connection: PostgresConnection

    func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [Neighbour] {
        try store.reportingReadFailure { try store.nearestNeighbours(connection, to: point, limit: limit, maxDistance: maxDistance, filter: filter) }
    }

    func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter) throws -> [Neighbour] {
        try store.reportingReadFailure { try store.withinNeighbours(connection, radius: radius, of: center, filter: filter) }
    }

    func boxNeighbours(_ box: LonLatBox, filter: IncidentFilter) throws -> [Neighbour] {
        try store.reportingReadFailure { try store.boxNeighbours(connection, box, filter: filter) }
    }
}
