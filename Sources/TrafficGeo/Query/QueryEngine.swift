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
    /// WGS84 geodesic distance in metres.
    public var distance: Double
    /// Where the incident is (for a bearing: `Geodesic.inverse`).
    public var position: Coordinate
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
/// Distances are WGS84 geodesics: Karney's algorithm, or for chords under 30 km the short-line
/// formula of `Geodesic.shortLineDistance` (the same numbers to a few nanometres, 10× cheaper).
public final class QueryEngine {
    public let store: IncidentStore

    public init(store: IncidentStore) throws {
        self.store = store
    }

    /// The tree's nodes read by an earlier query on the same connection, while no other
    /// connection has committed since (`PRAGMA data_version`): a one-shot query then does not
    /// read the tree's top nodes again (a fifth of a 10-NN query).
    private var reusable: (version: Int64, cache: QueryCache)?

    private func queryCache(_ db: Database) throws -> QueryCache {
        let version = try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? -1
        if let reusable, reusable.cache.db === db, reusable.version == version { return reusable.cache }
        let cache = try QueryCache(db)
        reusable = (version, cache)
        return cache
    }

    // MARK: - Nearest

    /// The `limit` incidents nearest to `point` by geodesic distance, nearest first, optionally no
    /// farther than `maxDistance` metres. Equal to a brute-force scan, computed best-first.
    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                        filter: IncidentFilter = IncidentFilter()) throws -> [QueryResult] {
        // One read transaction: the incidents fetched are the ones the index pointed at.
        // Decoded results carry Karney's distance (it comes with the bearing) for every result.
        try store.read { db in
            try Self.nearestNeighbours(db, cache: queryCache(db), point: point, limit: limit, maxDistance: maxDistance, filter: filter).map {
                let (distance, bearing) = Geodesic.inverse(from: point, to: $0.position)
                return try Self.result(db, id: $0.storeID, distance: distance, bearing: bearing)
            }.sorted { Self.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID)) }
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
        try store.read { db in try body(QuerySession(db: db, cache: queryCache(db))) }
    }

    /// Lean queries (ids and distances) on one read snapshot; see `QueryEngine.session`.
    public struct QuerySession {
        let db: Database
        /// The index's nodes and prepared statements, kept for the whole session.
        let cache: QueryCache

        public func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double? = nil,
                                      filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
            try QueryEngine.nearestNeighbours(db, cache: cache, point: point, limit: limit, maxDistance: maxDistance, filter: filter)
        }

        public func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
            try QueryEngine.withinNeighbours(db, cache: cache, radius: radius, of: center, filter: filter)
        }
    }

    private static func nearestNeighbours(_ db: Database, cache: QueryCache, point: Coordinate, limit: Int,
                                          maxDistance: Double?, filter: IncidentFilter) throws -> [Neighbour] {
        guard limit > 0 else { return [] }
        var candidates = try Candidates(db, cache: cache, around: point, maxDistance: maxDistance ?? .greatestFiniteMagnitude, filter: filter)
        defer { candidates.close() }
        var best: [Neighbour] = []
        best.reserveCapacity(limit + 1)
        let q = candidates.query
        while let (p, position) = try candidates.next() {
            if best.count == limit {
                let kth = best[limit - 1].distance
                // Entries come in increasing order of their box's chord, a lower bound for all they hold.
                if candidates.entryChord > kth { break }
                if q.chord(to: p) > kth { continue }
            }
            let distance = Self.distance(q, p, from: point, to: position, limit: maxDistance)
            if let maxDistance, distance > maxDistance { continue }
            let storeID = candidates.storeID
            if best.count == limit {
                guard precedes((distance, storeID), (best[limit - 1].distance, best[limit - 1].storeID)) else { continue }
                best.removeLast()
            }
            let at = best.firstIndex(where: { precedes((distance, storeID), ($0.distance, $0.storeID)) }) ?? best.endIndex
            best.insert(Neighbour(storeID: storeID, id: candidates.externalID, distance: distance, position: position), at: at)
            if best.count == limit { candidates.farthest = Swift.min(candidates.farthest, best[limit - 1].distance) }
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

    /// Streams every incident within `radius` metres of `center`, in store order (`within` sorts them).
    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter(),
                       handle: (QueryResult) throws -> Void) throws {
        try store.read { db in
            var candidates = try Candidates(db, cache: queryCache(db), around: center, maxDistance: radius, filter: filter,
                                            inIDOrder: true, decoding: true)
            defer { candidates.close() }
            try Self.scanWithin(&candidates, radius: radius, of: center) { found, distance in
                try handle(QueryResult(stored: IncidentRowLayout.decode(found.row, startingAt: Candidates.incidentColumn), distance: distance,
                                       bearing: Geodesic.inverse(from: center, to: found.position).bearing))
            }
        }
    }

    /// Every incident within `radius` metres, as ids and distances (not decoded), nearest first.
    public func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter = IncidentFilter()) throws -> [Neighbour] {
        try session { try $0.withinNeighbours(radius: radius, of: center, filter: filter) }
    }

    private static func withinNeighbours(_ db: Database, cache: QueryCache, radius: Double, of center: Coordinate, filter: IncidentFilter) throws -> [Neighbour] {
        var candidates = try Candidates(db, cache: cache, around: center, maxDistance: radius, filter: filter, inIDOrder: true)
        defer { candidates.close() }
        var found: [Neighbour] = []
        try scanWithin(&candidates, radius: radius, of: center) { row, distance in
            found.append(Neighbour(storeID: row.storeID, id: row.externalID, distance: distance, position: row.position))
        }
        return found.sorted { precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
    }

    /// Calls `body` with the exact distance of each candidate within `radius` (boundary included).
    private static func scanWithin(_ candidates: inout Candidates, radius: Double, of center: Coordinate,
                                   body: (Candidates, Double) throws -> Void) throws {
        let q = candidates.query
        while let (p, position) = try candidates.next() {
            if q.chord(to: p) > radius { continue }
            let distance = Self.distance(q, p, from: center, to: position, limit: radius)
            if distance <= radius { try body(candidates, distance) }
        }
    }

    // MARK: - Bounding box and scan

    /// Incidents inside a longitude/latitude box (edges included), in store order; `west > east`
    /// crosses the antimeridian.
    ///
    /// A box up to `indexedBoxSpan` degrees a side is read through the spatial index: its
    /// candidates are those within the circle around the box's centre that holds the whole box,
    /// then each is checked against the box itself. Larger boxes hold much of the table anyway
    /// and are scanned.
    public func inBoundingBox(west: Double, south: Double, east: Double, north: Double,
                              filter: IncidentFilter = IncidentFilter(), handle: (QueryResult) throws -> Void) throws {
        let box = LonLatBox(west: west, south: south, east: east, north: north)
        if let (center, radius) = box.enclosingCircle(maxSpan: Self.indexedBoxSpan) {
            try store.read { db in
                var candidates = try Candidates(db, cache: queryCache(db), around: center, maxDistance: radius, filter: filter,
                                                inIDOrder: true, decoding: true)
                defer { candidates.close() }
                while let (_, position) = try candidates.next() {
                    guard box.contains(position) else { continue }
                    try handle(QueryResult(stored: IncidentRowLayout.decode(candidates.row, startingAt: Candidates.incidentColumn)))
                }
            }
            return
        }
        let (condition, arguments) = filter.sql()
        let lonCondition = west <= east ? "i.longitude BETWEEN ? AND ?" : "(i.longitude >= ? OR i.longitude <= ?)"
        try store.read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(IncidentRowLayout.selection) FROM incidents i
                WHERE i.latitude BETWEEN ? AND ? AND \(lonCondition) AND \(condition) ORDER BY i.id
                """, arguments: [south, north, west, east] + arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: IncidentRowLayout.decode(row))) }
        }
    }

    /// Boxes up to this many degrees of latitude and of longitude go through the index.
    static let indexedBoxSpan = 30.0

    /// Every incident matching `filter` (located or not), in store order; for export.
    public func all(filter: IncidentFilter = IncidentFilter(), locatedOnly: Bool = false,
                    handle: (QueryResult) throws -> Void) throws {
        let (condition, arguments) = filter.sql()
        try store.read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(IncidentRowLayout.selection) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition) ORDER BY i.id
                """, arguments: arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: IncidentRowLayout.decode(row))) }
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

    /// The geodesic distance of a candidate, compared with `limit` (a radius or maximum distance)
    /// by the caller: within a micrometre of it Karney's algorithm decides (the short-line
    /// formula is nanometres off), so a limit of exactly a reported distance includes it.
    @inline(__always)
    private static func distance(_ q: GeocentricPoint, _ p: GeocentricPoint, from a: Coordinate, to b: Coordinate, limit: Double?) -> Double {
        let distance = Geodesic.distance(q, p, from: a, to: b)
        if let limit, abs(distance - limit) < 1e-6 { return Geodesic.distance(from: a, to: b) }
        return distance
    }

    private static func result(_ db: Database, id: Int64, distance: Double, bearing: Double) throws -> QueryResult {
        guard let stored = try IncidentRowLayout.fetch(db, id: id) else {
            throw StoreError.readFailed("", reason: "index entry \(id) has no incident")
        }
        return QueryResult(stored: stored, distance: distance, bearing: bearing)
    }

    @inline(__always)
    private static func precedes(_ a: (Double, Int64), _ b: (Double, Int64)) -> Bool {
        a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }
}

/// The rows of the spatial index's entries, best-first: entries in increasing order of the chord
/// from the query point to their box (`RTreeSearch`), each entry's rows by one range
/// scan of the incidents table. `next()` yields only the rows an entry owns (`BlockIndex.owns`),
/// so every located incident comes once.
///
/// The tree's nodes are read once per session (`QueryCache`); each entry's rows come from one statement stepped through SQLite's C API rather than GRDB's cursors, whose `Row`
/// costs a retain and release per row: this loop runs for every candidate (hundreds per query).
struct Candidates {
    let query: GeocentricPoint
    private let db: Database
    private var search: RTreeSearch
    /// Keeps the statement behind `rows` alive.
    private let statement: Statement
    private let rows: SQLiteStatement
    /// With `decoding`: the GRDB cursor whose row view `row` is (kept: it resets the statement when it goes).
    private var rowCursor: RowCursor?
    /// With `decoding`: the current row, `IncidentRowLayout.selection` from `incidentColumn`.
    private(set) var row = Row()
    static let incidentColumn = 4
    private var entryID: Int64 = 0
    private var box = BlockIndex.Box(minX: 0, maxX: 0, minY: 0, maxY: 0, minZ: 0, maxZ: 0)
    private var rowsPending = false
    /// The chord from the query point to the current entry's box.
    private(set) var entryChord = 0.0
    /// The current row's position.
    private(set) var position = Coordinate(latitude: 0, longitude: 0)
    /// Entries and rows certainly farther than this (metres) are skipped, rows before any trigonometry.
    var farthest: Double {
        didSet { search.bound = farthest }
    }
    private let latitude: Double

    // Reading in id order (radius queries): the blocks within reach sorted by first id, the
    // single entries, and the runs of adjacent ids to scan.
    private let inIDOrder: Bool
    private var ownership = BlockIndex.RisingIDOwnership(entries: [])
    private var runs: [(first: Int64, last: Int64)] = []
    private var nextRun = 0

    /// Metres per degree of latitude at least: a(1 − e²)·π/180 (the meridian's radius of
    /// curvature is smallest at the equator), less a part in 10⁶ for rounding. Any path between
    /// two latitudes is at least this long per degree between them.
    private static let minimumMetresPerDegree = Geodesic.wgs84SemiMajorAxis * (1 - GeocentricPoint.e2) * .pi / 180 * (1 - 1e-6)

    /// Rows come best-first (by their entry's box), or with `inIDOrder` in increasing id order:
    /// for radius queries, which read every entry within reach anyway. Then all entries are
    /// collected first and entries next to each other in id space (most blocks within reach:
    /// they were stored along the curve) are read by one range scan instead of one each: a 10 km
    /// radius reads ~110 blocks of 8.
    init(_ db: Database, cache: QueryCache, around center: Coordinate, maxDistance: Double, filter: IncidentFilter,
         inIDOrder: Bool = false, decoding: Bool = false) throws {
        query = GeocentricPoint(center)
        latitude = center.latitude
        self.db = db
        search = RTreeSearch(cache.nodes, around: query, bound: maxDistance)
        farthest = maxDistance
        statement = try cache.rowStatement(filter, decoding: decoding)
        rows = statement.sqliteStatement
        if decoding {
            // A GRDB row that reads the statement's current row: the candidate loop steps the
            // statement itself, and decodes an incident only once it is a result.
            let cursor = try Row.fetchCursor(statement, arguments: statement.arguments)
            rowCursor = cursor
            row = cursor._element(sqliteStatement: rows)
        }
        self.inIDOrder = inIDOrder
        if inIDOrder { try planRuns() }
    }

    private mutating func planRuns() throws {
        var spans: [(first: Int64, last: Int64)] = []
        var entries: [(id: Int64, box: BlockIndex.Box)] = []
        while let entry = try search.next() {
            entries.append((entry.id, entry.box))
            spans.append(BlockIndex.range(ofEntry: entry.id))
        }
        ownership = BlockIndex.RisingIDOwnership(entries: entries)
        spans.sort { $0.first < $1.first }
        for span in spans {
            if let last = runs.last, span.first <= last.last + 1 {
                runs[runs.count - 1].last = max(last.last, span.last)
            } else {
                runs.append(span)
            }
        }
    }

    /// The next row an entry owns: its geocentric point and position.
    mutating func next() throws -> (GeocentricPoint, Coordinate)? {
        if inIDOrder { return try nextInIDOrder() }
        while true {
            if rowsPending, try step(rows) {
                guard let p = readRow() else { continue }
                if BlockIndex.owns(entryID: entryID, box: box, p) { return (p, position) }
                continue
            }
            rowsPending = false
            guard let entry = try search.next() else { return nil }
            entryID = entry.id
            box = entry.box
            entryChord = entry.chord
            let (first, last) = BlockIndex.range(ofEntry: entryID)
            sqlite3_reset(rows)
            sqlite3_bind_int64(rows, 1, first)
            sqlite3_bind_int64(rows, 2, last)
            rowsPending = true
        }
    }

    private mutating func nextInIDOrder() throws -> (GeocentricPoint, Coordinate)? {
        while true {
            if rowsPending, try step(rows) {
                guard let p = readRow() else { continue }
                let owners = ownership.owners(of: sqlite3_column_int64(rows, 0), at: p)
                if owners.block || owners.single { return (p, position) }
                continue
            }
            rowsPending = false
            guard nextRun < runs.count else { return nil }
            sqlite3_reset(rows)
            sqlite3_bind_int64(rows, 1, runs[nextRun].first)
            sqlite3_bind_int64(rows, 2, runs[nextRun].last)
            nextRun += 1
            rowsPending = true
        }
    }

    /// The current row's position (also in `position`), or nil for a row certainly farther than
    /// `farthest`: not a result whichever entry owns it, so skipping it skips it everywhere.
    private mutating func readRow() -> GeocentricPoint? {
        let rowLatitude = sqlite3_column_double(rows, 1)
        if abs(rowLatitude - latitude) * Self.minimumMetresPerDegree > farthest { return nil }
        position = Coordinate(latitude: rowLatitude, longitude: sqlite3_column_double(rows, 2))
        return GeocentricPoint(position)
    }

    /// Whether `statement` has a row; throws what SQLite reports.
    private func step(_ statement: SQLiteStatement) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
        }
    }

    /// Stops reading (the statement stays cached for the next query).
    func close() {
        sqlite3_reset(rows)
    }

    var storeID: Int64 { sqlite3_column_int64(rows, 0) }

    /// The feed's id of the current row, read without GRDB's value conversion.
    var externalID: String {
        guard let bytes = sqlite3_column_text(rows, 3) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(rows, 3))), as: UTF8.self)
    }
}

/// What queries share while the database is unchanged: the index's nodes as read (`RTreeNodes`).
final class QueryCache {
    let nodes: RTreeNodes
    /// The connection the nodes were read on.
    let db: Database

    init(_ db: Database) throws {
        self.db = db
        nodes = try RTreeNodes(db)
    }

    /// The rows of the incident ids `?1`…`?2` that have a position and pass `filter`: columns
    /// id, latitude, longitude, feed id, and with `decoding` the `IncidentRowLayout.selection`
    /// columns from `Candidates.incidentColumn`. From the connection's statement cache: a
    /// single query must not pay for preparing it (that made one 10-NN query 2× slower).
    func rowStatement(_ filter: IncidentFilter, decoding: Bool) throws -> Statement {
        let (condition, arguments) = filter.sql()
        let statement = try db.cachedStatement(sql: """
            SELECT i.id, i.latitude, i.longitude, i.external_id\(decoding ? ", " + IncidentRowLayout.selection : "") FROM incidents i
            WHERE i.id BETWEEN ? AND ? AND i.latitude IS NOT NULL AND \(condition)
            """)
        // The range is bound per entry; the filter's values stay bound across resets.
        try statement.setArguments([0, 0] + arguments)
        return statement
    }
}
