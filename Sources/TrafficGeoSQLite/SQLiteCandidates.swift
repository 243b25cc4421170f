import Foundation
import GRDB
import GRDBSQLite
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// The rows of the spatial index's entries, best-first: entries in increasing order of the chord
/// from the query point to their box (`RTreeSearch`), each entry's rows by one range
/// scan of the incidents table. `next()` yields only the rows an entry owns (`BlockIndex.owns`),
/// so every located incident comes once.
///
/// The tree's nodes are read once per snapshot (`IndexNodeCache`); each entry's rows come from one
/// statement stepped through SQLite's C API rather than GRDB's cursors, whose `Row` costs a retain
/// and release per row: this loop runs for every candidate (hundreds per query).
struct SQLiteCandidates {
    let query: GeocentricPoint
    private let db: Database
    private let nodes: RTreeNodes
    private var search: RTreeSearch
    /// Keeps the statement behind `rows` alive; nil until a row set is read (`prepareRows`).
    private var statement: Statement?
    /// The row statement: set by `prepareRows`, in `init` for every reading but the row cache's.
    /// Kept beside `statement` rather than derived from it: the loops read it for every row, and
    /// `statement!.sqliteStatement` there made radius queries ~3 % slower (`ab-queries.sh`).
    private var rows: SQLiteStatement!
    private let filter: IncidentFilter
    private let decoding: Bool
    /// The lean columns each candidate row starts with (`leanColumns`, in `Lean` order); with
    /// `decoding`, the incident's follow.
    private enum Lean: Int32, CaseIterable { case id, latitude, longitude, externalID }
    private static let leanColumns = Lean.allCases.map { lean in
        switch lean {
        case .id: "i.id"
        case .latitude: "i.latitude"
        case .longitude: "i.longitude"
        case .externalID: "i.external_id"
        }
    }
    private static let incidentColumn = Int32(leanColumns.count)
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

    // Reading from the nodes' row cache (`RTreeNodes.rows`), best-first only: the current
    // entry's rows not yet taken and the current row's id.
    private let fromCache: Bool
    private var cached: ArraySlice<RTreeNodes.Row> = []
    private var cachedID: Int64 = 0

    /// Metres per degree of latitude at least: a(1 − e²)·π/180 (the meridian's radius of
    /// curvature is smallest at the equator), less a part in 10⁶ for rounding. Any path between
    /// two latitudes is at least this long per degree between them.
    private static let minimumMetresPerDegree = Geodesic.wgs84SemiMajorAxis * (1 - GeocentricPoint.e2) * .pi / 180 * (1 - 1e-6)

    /// Rows come best-first (by their entry's box), or with `inIDOrder` in increasing id order:
    /// for radius queries, which read every entry within reach anyway. Then all entries are
    /// collected first and entries next to each other in id space (most blocks within reach:
    /// they were stored along the curve) are read by one range scan instead of one each: a 10 km
    /// radius reads ~110 blocks of 8.
    /// With `positionsOnly` (the caller reads nothing but `storeID` and the positions) and no
    /// filter, best-first rows come from the nodes' row cache, read from the table once per
    /// snapshot.
    init(_ db: Database, nodes: RTreeNodes, around center: Coordinate, maxDistance: Double, filter: IncidentFilter,
         inIDOrder: Bool = false, decoding: Bool = false, positionsOnly: Bool = false) throws {
        query = GeocentricPoint(center)
        latitude = center.latitude
        self.db = db
        self.nodes = nodes
        fromCache = positionsOnly && !decoding && !inIDOrder && filter.isEmpty
        search = RTreeSearch(nodes, reader: RTreeNodeReader(db), around: query, bound: maxDistance)
        farthest = maxDistance
        self.filter = filter
        self.decoding = decoding
        self.inIDOrder = inIDOrder
        // From the row cache, a warm search reads no rows: looking the statement up (hashing its
        // SQL text) and binding its arguments were ~1 % of a 10-nearest request in `serve`.
        if !fromCache { try prepareRows() }
        if inIDOrder { try planRuns() }
    }

    /// Sets `rows` to the row statement, from the connection's statement cache, once.
    private mutating func prepareRows() throws {
        guard statement == nil else { return }
        let prepared = try Self.rowStatement(db, filter, decoding: decoding)
        statement = prepared
        rows = prepared.sqliteStatement
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
        if fromCache { return try nextFromCache() }
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

    private mutating func nextFromCache() throws -> (GeocentricPoint, Coordinate)? {
        while true {
            while let row = cached.popFirst() {
                if abs(row.position.latitude - latitude) * Self.minimumMetresPerDegree > farthest { continue }
                position = row.position
                cachedID = row.id
                return (GeocentricPoint(row.position), row.position)
            }
            guard let entry = try search.next() else { return nil }
            entryChord = entry.chord
            // Let go of the last entry's rows first: a slice still held would make the cache
            // copy itself when it grows.
            cached = []
            let range = try nodes.rows(ofEntry: entry.id) { rows in
                try prepareRows()
                let (first, last) = BlockIndex.range(ofEntry: entry.id)
                sqlite3_reset(self.rows)
                sqlite3_bind_int64(self.rows, 1, first)
                sqlite3_bind_int64(self.rows, 2, last)
                while try step(self.rows) {
                    let position = Coordinate(latitude: sqlite3_column_double(self.rows, Lean.latitude.rawValue),
                                              longitude: sqlite3_column_double(self.rows, Lean.longitude.rawValue))
                    if BlockIndex.owns(entryID: entry.id, box: entry.box, GeocentricPoint(position)) {
                        rows.append(RTreeNodes.Row(id: sqlite3_column_int64(self.rows, Lean.id.rawValue), position: position))
                    }
                }
            }
            cached = nodes.rows[range]
        }
    }

    private mutating func nextInIDOrder() throws -> (GeocentricPoint, Coordinate)? {
        while true {
            if rowsPending, try step(rows) {
                guard let p = readRow() else { continue }
                let owners = ownership.owners(of: storeID, at: p)
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
        let rowLatitude = sqlite3_column_double(rows, Lean.latitude.rawValue)
        if abs(rowLatitude - latitude) * Self.minimumMetresPerDegree > farthest { return nil }
        position = Coordinate(latitude: rowLatitude, longitude: sqlite3_column_double(rows, Lean.longitude.rawValue))
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
        if statement != nil { sqlite3_reset(rows) }
    }

    /// With `decoding`: the current row's incident (decoded only once it is a result).
    var incident: StoredIncident {
        assert(!fromCache, "rows from the cache have no incident")
        return IncidentRowLayout.decode(rows, startingAt: Self.incidentColumn)
    }

    var storeID: Int64 { fromCache ? cachedID : sqlite3_column_int64(rows, Lean.id.rawValue) }

    /// The feed's id of the current row, read without GRDB's value conversion.
    var externalID: String {
        assert(!fromCache, "rows from the cache have no feed id")
        guard let bytes = sqlite3_column_text(rows, Lean.externalID.rawValue) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(rows, Lean.externalID.rawValue))), as: UTF8.self)
    }

    /// The rows of the incident ids `?1`…`?2` that have a position and pass `filter`: the lean
    /// columns, and with `decoding` the `IncidentRowLayout.selection` columns from
    /// `incidentColumn`. From the connection's statement cache: a single query must not pay for
    /// preparing it (that made one 10-NN query 2× slower).
    private static func rowStatement(_ db: Database, _ filter: IncidentFilter, decoding: Bool) throws -> Statement {
        let (condition, arguments) = filter.sql()
        // NOT INDEXED: the rows of an id range, in id order, by the table's own key. With a road
        // (or a time) in the filter, SQLite's planner chose that column's index and gave the
        // range's rows in the index's order, which the blocks' rising-id ownership misread:
        // `within --road US-6` found 0 of 6 (issue 49).
        let statement = try db.cachedStatement(sql: """
            SELECT \(leanColumns.joined(separator: ", "))\(decoding ? ", " + IncidentRowLayout.selection : "") FROM incidents i NOT INDEXED
            WHERE i.id BETWEEN ? AND ? AND i.latitude IS NOT NULL AND \(condition)
            """)
        // The range is bound per entry; the filter's values stay bound across resets.
        try statement.setArguments([0, 0] + arguments)
        return statement
    }
}
