import Foundation
import GRDB
import GRDBSQLite
import NIOConcurrencyHelpers
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// Nearest, within-radius and bounding-box answers from the SQLite file, exact and best-first
/// through the block index (`SQLiteCandidates`). Distances are WGS84 geodesics: Karney's
/// algorithm, or for chords under 30 km the short-line formula of `Geodesic.shortLineDistance`
/// (the same numbers to a few nanometres, 10× cheaper); near a limit Karney decides.
extension SQLiteIncidentStore {
    public func nearest(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [QueryResult] {
        // One read transaction: the incidents fetched are the ones the index pointed at.
        // Decoded results carry Karney's distance (it comes with the bearing) for every result.
        try read { db in
            let neighbours = try Self.nearestNeighbours(db, nodes: indexNodes(db), point: point, limit: limit, maxDistance: maxDistance,
                                                        filter: filter, feedIDs: false)
            let incidents = try IncidentRowLayout.fetch(db, ids: neighbours.map(\.storeID))
            return try neighbours.map {
                let (distance, bearing) = Geodesic.inverse(from: point, to: $0.position)
                guard let stored = incidents[$0.storeID] else {
                    throw StoreError.readFailed(path, reason: "index entry \($0.storeID) has no incident")
                }
                return QueryResult(stored: stored, distance: distance, bearing: bearing)
            }.sorted { QueryResult.precedes(($0.distance ?? 0, $0.stored.storeID), ($1.distance ?? 0, $1.stored.storeID)) }
        }
    }

    public func within(radius: Double, of center: Coordinate, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws {
        try read { db in
            var candidates = try SQLiteCandidates(db, nodes: indexNodes(db), around: center, maxDistance: radius, filter: filter,
                                                  inIDOrder: true, decoding: true)
            defer { candidates.close() }
            let q = candidates.query
            try Self.scanWithin(&candidates, radius: radius, of: center) { found, p, distance in
                try handle(QueryResult(stored: found.incident, distance: distance,
                                       bearing: Geodesic.bearing(q, p, from: center, to: found.position)))
            }
        }
    }

    /// A box up to `indexedBoxSpan` degrees a side is read through the spatial index: its
    /// candidates are those within the circle around the box's centre that holds the whole box,
    /// then each is checked against the box itself. Larger boxes hold much of the table anyway
    /// and are scanned.
    public func inBoundingBox(_ box: LonLatBox, filter: IncidentFilter, handle: (QueryResult) throws -> Void) throws {
        if let (center, radius) = box.enclosingCircle(maxSpan: Self.indexedBoxSpan) {
            try read { db in
                var candidates = try SQLiteCandidates(db, nodes: indexNodes(db), around: center, maxDistance: radius, filter: filter,
                                                      inIDOrder: true, decoding: true)
                defer { candidates.close() }
                while let (_, position) = try candidates.next() {
                    guard box.contains(position) else { continue }
                    try handle(QueryResult(stored: candidates.incident))
                }
            }
            return
        }
        let (condition, arguments) = filter.sql()
        let lonCondition = box.west <= box.east ? "i.longitude BETWEEN ? AND ?" : "(i.longitude >= ? OR i.longitude <= ?)"
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(IncidentRowLayout.selection) FROM incidents i
                WHERE i.latitude BETWEEN ? AND ? AND \(lonCondition) AND \(condition) ORDER BY i.id
                """, arguments: [box.south, box.north, box.west, box.east] + arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: IncidentRowLayout.decode(row))) }
        }
    }

    /// Boxes up to this many degrees of latitude and of longitude go through the index.
    static let indexedBoxSpan = 30.0

    public func all(filter: IncidentFilter, locatedOnly: Bool, handle: (QueryResult) throws -> Void) throws {
        let (condition, arguments) = filter.sql()
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(IncidentRowLayout.selection) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition) ORDER BY i.id
                """, arguments: arguments)
            while let row = try cursor.next() { try handle(QueryResult(stored: IncidentRowLayout.decode(row))) }
        }
    }

    public func count(filter: IncidentFilter, locatedOnly: Bool) throws -> Int {
        let (condition, arguments) = filter.sql()
        return try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition)",
                             arguments: arguments) ?? 0
        }
    }

    public func all(filter: IncidentFilter, locatedOnly: Bool, offset: Int, limit: Int) throws -> [QueryResult] {
        let (condition, arguments) = filter.sql()
        var page = arguments
        page += [limit, offset]
        return try read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(IncidentRowLayout.selection) FROM incidents i WHERE \(locatedOnly ? "i.latitude IS NOT NULL AND" : "") \(condition) \
                ORDER BY i.id LIMIT ? OFFSET ?
                """, arguments: page).map { QueryResult(stored: IncidentRowLayout.decode($0)) }
        }
    }

    /// One read transaction for all of `body`'s queries: every query sees the same committed
    /// state (an ingest running meanwhile is invisible to it), and a batch opens the transaction
    /// once. A long one keeps the WAL from being checkpointed until it ends.
    public func withNeighbourSearch<T>(_ body: (any NeighbourSearch) throws -> T) throws -> T {
        try read { db in try body(SQLiteNeighbourSearch(db: db, nodes: indexNodes(db))) }
    }

    /// Several connections at once, each in a read transaction on the same committed state
    /// (`sharedSnapshot`), each used on its own store thread; if commits kept coming while they
    /// began, one session, as `withNeighbourSearch`.
    public func withNeighbourSearches<T: Sendable>(upTo sessions: Int,
                                                   _ body: @escaping @Sendable (Int, any NeighbourSearch) throws -> T) async throws -> [T] {
        let connections = sessions > 1 ? try await StoreThreads.run { try self.sharedSnapshot(connections: sessions) } : nil
        guard let connections else { return [try await StoreThreads.run { try self.withNeighbourSearch { try body(0, $0) } }] }
        let path = self.path
        return try await withThrowingTaskGroup(of: (Int, T).self) { group in
            for (session, connection) in connections.enumerated() {
                group.addTask {
                    try await StoreThreads.run {
                        do {
                            return (session, try connection.inDatabase { db in
                                do {
                                    let answer = try body(session, SQLiteNeighbourSearch(db: db, nodes: RTreeNodes(RTreeNodeReader(db))))
                                    try db.execute(sql: "COMMIT TRANSACTION")
                                    return answer
                                } catch {
                                    try? db.execute(sql: "ROLLBACK TRANSACTION")
                                    throw error
                                }
                            })
                        } catch let error as DatabaseError {
                            throw StoreError.readFailed(path, reason: StoreError.describe(error))
                        }
                    }
                }
            }
            var answers: [(Int, T)] = []
            for try await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// `connections` read-only connections, each left inside a read transaction, all on the same
    /// committed state; nil when other processes' commits kept coming in between (three tries).
    /// SQLite shares a snapshot between connections only when built with SQLITE_ENABLE_SNAPSHOT,
    /// which Debian's library is not; so each connection reads its data version (which changes
    /// when another connection commits) before any snapshot begins, and again as its own begins.
    /// The last connection's two readings enclose every beginning: if they are equal, nothing
    /// was committed while the snapshots began, and they are one state.
    private func sharedSnapshot(connections count: Int) throws -> [DatabaseQueue]? {
        var configuration = threadConnectionConfiguration
        configuration.allowsUnsafeTransactions = true   // the transaction outlives `inDatabase`, by design
        do {
            let connections = try (0..<count).map { _ in try Self.retryingWhileBusy { try DatabaseQueue(path: path, configuration: configuration) } }
            for _ in 0..<3 {
                let before = try connections.map { try $0.inDatabase { try DataVersion.read($0) } }
                let began = try connections.map { connection in
                    try connection.inDatabase { db in
                        try db.execute(sql: "BEGIN DEFERRED TRANSACTION")
                        return try DataVersion.read(db)   // the first read: the snapshot begins here
                    }
                }
                if before == began { return connections }
                for connection in connections { try connection.inDatabase { try $0.execute(sql: "ROLLBACK TRANSACTION") } }
            }
            return nil
        } catch let error as DatabaseError {
            throw StoreError.readFailed(path, reason: StoreError.describe(error))
        }
    }

    /// The index's nodes for this read: parsed by an earlier read on the same connection while
    /// nothing has been committed since, else read afresh. A query thread's own connection keeps
    /// them itself; the pool's connections in `IndexNodeCache`.
    private func indexNodes(_ db: Database) throws -> RTreeNodes {
        try threadIndexNodes(db) ?? nodeCache.nodes(for: db)
    }

    // MARK: - The searches

    /// The `limit` nearest, measured; with `feedIDs` false their `id` is left empty (the decoded
    /// answer reads it with the incident: a String per candidate taken was 1 % of a request).
    fileprivate static func nearestNeighbours(_ db: Database, nodes: RTreeNodes, point: Coordinate, limit: Int,
                                              maxDistance: Double?, filter: IncidentFilter, feedIDs: Bool = true) throws -> [Neighbour] {
        guard limit > 0 else { return [] }
        var candidates = try SQLiteCandidates(db, nodes: nodes, around: point, maxDistance: maxDistance ?? .greatestFiniteMagnitude, filter: filter,
                                              positionsOnly: !feedIDs)
        defer { candidates.close() }
        var best: [Neighbour] = []
        best.reserveCapacity(min(limit, 4096) + 1)
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
                guard QueryResult.precedes((distance, storeID), (best[limit - 1].distance, best[limit - 1].storeID)) else { continue }
                best.removeLast()
            }
            let at = best.firstIndex(where: { QueryResult.precedes((distance, storeID), ($0.distance, $0.storeID)) }) ?? best.endIndex
            best.insert(Neighbour(storeID: storeID, id: feedIDs ? candidates.externalID : "", distance: distance, position: position), at: at)
            if best.count == limit { candidates.farthest = Swift.min(candidates.farthest, best[limit - 1].distance) }
        }
        return best
    }

    fileprivate static func withinNeighbours(_ db: Database, nodes: RTreeNodes, radius: Double, of center: Coordinate,
                                             filter: IncidentFilter) throws -> [Neighbour] {
        var candidates = try SQLiteCandidates(db, nodes: nodes, around: center, maxDistance: radius, filter: filter, inIDOrder: true)
        defer { candidates.close() }
        var found: [Neighbour] = []
        try scanWithin(&candidates, radius: radius, of: center) { row, _, distance in
            found.append(Neighbour(storeID: row.storeID, id: row.externalID, distance: distance, position: row.position))
        }
        return found.sorted { QueryResult.precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
    }

    /// `inBoundingBox` as store ids and positions: the same two ways (the index for boxes up to
    /// `indexedBoxSpan`, else latitude and longitude), nothing decoded.
    fileprivate static func boxNeighbours(_ db: Database, nodes: RTreeNodes, box: LonLatBox, filter: IncidentFilter) throws -> [Neighbour] {
        var found: [Neighbour] = []
        if let (center, radius) = box.enclosingCircle(maxSpan: indexedBoxSpan) {
            var candidates = try SQLiteCandidates(db, nodes: nodes, around: center, maxDistance: radius, filter: filter, inIDOrder: true, positionsOnly: true)
            defer { candidates.close() }
            while let (_, position) = try candidates.next() {
                if box.contains(position) { found.append(Neighbour(storeID: candidates.storeID, id: "", distance: 0, position: position)) }
            }
            return found
        }
        let (condition, arguments) = filter.sql()
        let lonCondition = box.west <= box.east ? "i.longitude BETWEEN ? AND ?" : "(i.longitude >= ? OR i.longitude <= ?)"
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT i.id, i.latitude, i.longitude FROM incidents i
            WHERE i.latitude BETWEEN ? AND ? AND \(lonCondition) AND \(condition) ORDER BY i.id
            """, arguments: [box.south, box.north, box.west, box.east] + arguments)
        while let row = try cursor.next() {
            found.append(Neighbour(storeID: row[0], id: "", distance: 0, position: Coordinate(latitude: row[1], longitude: row[2])))
        }
        return found
    }

    /// Calls `body` with each candidate within `radius` (boundary included), its geocentric
    /// point and its exact distance.
    private static func scanWithin(_ candidates: inout SQLiteCandidates, radius: Double, of center: Coordinate,
                                   body: (SQLiteCandidates, GeocentricPoint, Double) throws -> Void) throws {
        let q = candidates.query
        while let (p, position) = try candidates.next() {
            if q.chord(to: p) > radius { continue }
            let distance = Self.distance(q, p, from: center, to: position, limit: radius)
            if distance <= radius { try body(candidates, p, distance) }
        }
    }

    /// The geodesic distance of a candidate compared with `limit` by the caller (`Geodesic.distance(_:_:from:to:limit:)`).
    @inline(__always)
    private static func distance(_ q: GeocentricPoint, _ p: GeocentricPoint, from a: Coordinate, to b: Coordinate, limit: Double?) -> Double {
        Geodesic.distance(q, p, from: a, to: b, limit: limit)
    }
}

/// Lean queries inside one read transaction of the SQLite store.
private struct SQLiteNeighbourSearch: NeighbourSearch {
    let db: Database
    let nodes: RTreeNodes

    func nearestNeighbours(to point: Coordinate, limit: Int, maxDistance: Double?, filter: IncidentFilter) throws -> [Neighbour] {
        try SQLiteIncidentStore.nearestNeighbours(db, nodes: nodes, point: point, limit: limit, maxDistance: maxDistance, filter: filter)
    }

    func withinNeighbours(radius: Double, of center: Coordinate, filter: IncidentFilter) throws -> [Neighbour] {
        try SQLiteIncidentStore.withinNeighbours(db, nodes: nodes, radius: radius, of: center, filter: filter)
    }

    func boxNeighbours(_ box: LonLatBox, filter: IncidentFilter) throws -> [Neighbour] {
        try SQLiteIncidentStore.boxNeighbours(db, nodes: nodes, box: box, filter: filter)
    }
}

/// `PRAGMA data_version`: changes when another connection commits. The first statement of a read
/// transaction (it starts the snapshot).
enum DataVersion {
    /// From the statement cache (preparing the pragma anew was 1 % of a 10-nearest request),
    /// stepped through SQLite's C API (GRDB's `fetchOne` cost as much again).
    static func read(_ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: "PRAGMA data_version").sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
        return sqlite3_column_int64(statement, 0)
    }
}

/// The R*Tree's parsed nodes per reader connection, kept between reads while that connection
/// sees an unchanged database (`PRAGMA data_version`, which changes when another connection
/// commits): a one-shot query then does not read the tree's top nodes again (a fifth of a
/// 10-NN query). Only parsed values are kept, never a connection or a statement; the
/// connection is remembered weakly, to tell it apart from a later one. A connection serves one
/// read at a time, so its entry is never used by two threads at once.
final class IndexNodeCache: Sendable {
    /// Unchecked Sendable: the connection is only compared, never used, outside its read.
    private struct Entry: @unchecked Sendable {
        weak var connection: Database?
        var version: Int64
        var nodes: RTreeNodes
    }

    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])
    /// How many times the nodes were read afresh (tests: an unchanged store reuses them).
    let reads = NIOLockedValueBox(0)

    func nodes(for db: Database) throws -> RTreeNodes {
        let version = try DataVersion.read(db)
        let key = ObjectIdentifier(db)
        if let entry = entries.withLockedValue({ $0[key] }), entry.connection === db, entry.version == version {
            return entry.nodes
        }
        let nodes = try RTreeNodes(RTreeNodeReader(db))
        reads.withLockedValue { $0 += 1 }
        entries.withLockedValue { entries in
            entries = entries.filter { $0.value.connection != nil }
            entries[key] = Entry(connection: db, version: version, nodes: nodes)
        }
        return nodes
    }
}
