import Foundation
import GRDB
import GRDBSQLite

/// One answer of a query: a stored incident with its exact distance and bearing from the query point.
public struct QueryResult: Sendable, Equatable {
    public var stored: StoredIncident
    /// WGS84 geodesic distance in metres (nil for queries without a reference point).
    public var distance: Double?
    /// Initial bearing from the query point, degrees clockwise from north.
    public var bearing: Double?

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
    public var distance: Double
    public var bearing: Double
}

/// How results are ordered; ties are broken by store id, so output is stable.
public enum QuerySort: String, Sendable, CaseIterable {
    case distance, updated, expires, title
}

/// Answers nearest, within-radius and bounding-box queries from the store with exact WGS84
/// distances. It returns values; formatting is the output stage's job.
///
///     let engine = try QueryEngine(store: store)
///     let nearest = try engine.nearest(to: Coordinate(latitude: 50.94, longitude: 6.96), limit: 5)
///
/// One engine owns one PROJ context: use it from one task at a time.
public final class QueryEngine {
    public let store: IncidentStore
    fileprivate let projector: Projector

    public init(store: IncidentStore) throws {
        self.store = store
        projector = try Projector(target: store.indexCRS)
    }

    // MARK: - Nearest

    /// The `limit` incidents nearest to `point` by geodesic distance, nearest first, optionally no
    /// farther than `maxDistance` metres. Equal to a brute-force scan, computed best-first.
    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                        filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        let q = try projector.forward(point)
        // One read transaction: the incidents fetched are the ones the index pointed at.
        return try store.read { db in
            try Self.nearestNeighbours(db, point: point, projected: q, limit: limit, maxDistance: maxDistance, filter: filter)
                .map { try Self.result(db, id: $0.storeID, distance: $0.distance, bearing: $0.bearing) }
        }
    }

    /// `nearest` without decoding the incidents: ids and distances, nearest first.
    public func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                                  filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
        try session { try $0.nearestNeighbours(to: point, limit: limit, maxDistance: maxDistance, filter: filter) }
    }

    // MARK: - Sessions

    /// Runs `body` inside one read transaction: every query made through the session sees the
    /// same committed state of the store (an ingest running meanwhile is invisible to it), and
    /// a batch of queries opens the transaction once instead of per query. The session must not
    /// escape `body`; a long session keeps the WAL from being checkpointed until it ends.
    public func session<T>(_ body: (QuerySession) throws -> T) throws -> T {
        try store.read { db in try body(QuerySession(engine: self, db: db)) }
    }

    /// Lean queries (ids and distances) on one read snapshot; see `QueryEngine.session`.
    public struct QuerySession {
        let engine: QueryEngine
        let db: Database

        public func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                                      filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
            let q = try engine.projector.forward(point)
            return try QueryEngine.nearestNeighbours(db, point: point, projected: q, limit: limit, maxDistance: maxDistance, filter: filter)
        }

        public func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
            try QueryEngine.withinNeighbours(db, radius: radius, of: center, projected: try engine.projector.forward(center), filter: filter)
        }
    }

    private static func nearestNeighbours(_ db: Database, point: Coordinate, projected q: ProjectedPoint, limit: Int,
                                          maxDistance: Double?, filter: IncidentFilter) throws -> [Neighbour] {
        guard limit > 0 else { return [] }
        let statement = try candidateStatement(db, filter: filter)
        var arguments: StatementArguments = [q.x, q.y, q.z, maxDistance ?? Double.greatestFiniteMagnitude]
        arguments += filter.sql().1
        var best: [Neighbour] = []
        best.reserveCapacity(limit + 1)
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try cursor.next() {
            let chord = NearestNeighbourSearch.chord(from: q, toBox: (row[3], row[4], row[5], row[6], row[7], row[8]))
            if best.count == limit, chord > best[limit - 1].distance { break }
            let (distance, bearing) = Geodesic.inverse(from: point, to: Coordinate(latitude: row[1], longitude: row[2]))
            if let maxDistance, distance > maxDistance { continue }
            let storeID: Int64 = row[0]
            if best.count == limit {
                guard precedes((distance, storeID), (best[limit - 1].distance, best[limit - 1].storeID)) else { continue }
                best.removeLast()
            }
            let at = best.firstIndex(where: { precedes((distance, storeID), ($0.distance, $0.storeID)) }) ?? best.endIndex
            best.insert(Neighbour(storeID: storeID, id: row[9], distance: distance, bearing: bearing), at: at)
        }
        return best
    }

    // MARK: - Within

    /// Every incident within `radius` metres of `center` (boundary included), nearest first.
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        var results: [QueryResult] = []
        try within(radius: radius, of: center, filter: filter) { results.append($0) }
        return results.sorted { Self.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID)) }
    }

    /// Streams every incident within `radius` metres of `center`, in approximately nearest-first order.
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter(),
                       handle: (QueryResult) throws -> Void) throws {
        try scanWithin(radius: radius, of: center, filter: filter, decode: true) { row, distance, bearing in
            try handle(QueryResult(stored: StoredIncident(row: row, startingAt: 10), distance: distance, bearing: bearing))
        }
    }

    /// Every incident within `radius` metres, as ids and distances (not decoded), nearest first.
    public func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
        try session { try $0.withinNeighbours(radius: radius, of: center, filter: filter) }
    }

    private static func withinNeighbours(_ db: Database, radius: Double, of center: Coordinate, projected q: ProjectedPoint,
                                         filter: IncidentFilter) throws -> [Neighbour] {
        let (condition, filterArguments) = filter.sql()
        // Only the columns the answer needs, read straight from the statement: this loop runs
        // once per result (hundreds per query), Row decoding was a fifth of its time.
        let statement = try db.cachedStatement(sql: """
            SELECT r.id, i.latitude, i.longitude, i.external_id
            FROM incident_index r CROSS JOIN incidents i ON i.id = r.id
            WHERE r.id MATCH \(NearestNeighbourSearch.functionName)(?, ?, ?, ?) AND \(condition)
            """)
        var arguments: StatementArguments = [q.x, q.y, q.z, radius]
        arguments += filterArguments
        var found: [Neighbour] = []
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        let raw = statement.sqliteStatement
        while try cursor.next() != nil {
            let point = Coordinate(latitude: sqlite3_column_double(raw, 1), longitude: sqlite3_column_double(raw, 2))
            let (distance, bearing) = Geodesic.inverse(from: center, to: point)
            guard distance <= radius else { continue }
            found.append(Neighbour(storeID: sqlite3_column_int64(raw, 0), id: text(raw, 3), distance: distance, bearing: bearing))
        }
        return found.sorted { precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
    }

    /// A text column, read without GRDB's value conversion.
    @inline(__always)
    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// The candidates of the radius search that lie within the radius by exact geodesic distance.
    private func scanWithin(radius: Double, of center: Coordinate, filter: IncidentFilter, decode: Bool,
                            body: (Row, Double, Double) throws -> Void) throws {
        let q = try projector.forward(center)
        try store.read { db in
            let statement = try Self.candidateStatement(db, filter: filter, withIncident: decode)
            var arguments: StatementArguments = [q.x, q.y, q.z, radius]
            arguments += filter.sql().1
            let cursor = try Row.fetchCursor(statement, arguments: arguments)
            while let row = try cursor.next() {
                let (distance, bearing) = Geodesic.inverse(from: center, to: Coordinate(latitude: row[1], longitude: row[2]))
                if distance <= radius { try body(row, distance, bearing) }
            }
        }
    }

    // MARK: - Bounding box and scan

    /// Incidents inside a longitude/latitude box; `west > east` crosses the antimeridian.
    public func inBoundingBox(west: Double, south: Double, east: Double, north: Double,
                              filter: IncidentFilter = IncidentFilter(), handle: (QueryResult) throws -> Void) throws {
        let (condition, arguments) = filter.sql()
        let lonCondition = west <= east ? "i.longitude BETWEEN ? AND ?" : "(i.longitude >= ? OR i.longitude <= ?)"
        try store.read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(StoredIncident.selection) FROM incidents i
                WHERE i.latitude BETWEEN ? AND ? AND \(lonCondition) AND \(condition) ORDER BY i.id
                """, arguments: [south, north, west, east] + arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: StoredIncident(row: row))) }
        }
    }

    /// Every incident matching `filter` (located or not), in store order; for export.
    public func all(filter: IncidentFilter = IncidentFilter(), locatedOnly: Bool = false,
                    handle: (QueryResult) throws -> Void) throws {
        let (condition, arguments) = filter.sql()
        try store.read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(StoredIncident.selection) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition) ORDER BY i.id
                """, arguments: arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: StoredIncident(row: row))) }
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
        case .title:
            return results.sorted {
                let a = TextFolding.fold($0.incident.title), b = TextFolding.fold($1.incident.title)
                return a != b ? a < b : tieBreak($0, $1)
            }
        }
    }

    // MARK: - Helpers

    /// The best-first candidate query. Columns: id, latitude, longitude, box (6 values), the feed
    /// id, then with `withIncident` the `StoredIncident.selection` columns (decoded only for rows that qualify).
    private static func candidateStatement(_ db: Database, filter: IncidentFilter, withIncident: Bool = false) throws -> Statement {
        let (condition, _) = filter.sql()
        // CROSS JOIN keeps the R*Tree as the outer loop, so rows arrive in best-first order.
        return try db.cachedStatement(sql: """
            SELECT r.id, i.latitude, i.longitude, r.min_x, r.max_x, r.min_y, r.max_y, r.min_z, r.max_z, i.external_id\(withIncident ? ", " + StoredIncident.selection : "")
            FROM incident_index r CROSS JOIN incidents i ON i.id = r.id
            WHERE r.id MATCH \(NearestNeighbourSearch.functionName)(?, ?, ?, ?) AND \(condition)
            """)
    }

    private static func result(_ db: Database, id: Int64, distance: Double, bearing: Double) throws -> QueryResult {
        guard let stored = try StoredIncident.fetch(db, id: id) else {
            throw StoreError.readFailed("", reason: "R*Tree entry \(id) has no incident")
        }
        return QueryResult(stored: stored, distance: distance, bearing: bearing)
    }

    @inline(__always)
    private static func precedes(_ a: (Double, Int64), _ b: (Double, Int64)) -> Bool {
        a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }
}
