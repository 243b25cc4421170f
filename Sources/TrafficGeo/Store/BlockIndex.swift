import GRDB

/// The spatial index: an R*Tree (`incident_blocks`) over *blocks* of incidents stored next to
/// each other, plus single entries for the incidents no block covers.
///
/// Why blocks: an R*Tree entry per point cost 52 bytes a point and made SQLite's R*Tree walk a
/// million leaves' worth of priority queue per query. New incidents are instead stored in
/// Hilbert-curve order of their positions (`IncidentWriter`), so nearby incidents get
/// consecutive ids, and each run of up to `blockSize` ids becomes one entry whose box encloses
/// them. A query walks the (8× smaller) tree best-first and reads each block's rows with one
/// range scan of the incidents table: no separate copy of positions or ids anywhere.
///
/// Entry ids say what an entry covers:
///   - `id > 0`: a block, the incidents `id >> 8` … `(id >> 8) + (id & 255)`. A row in that range
///     belongs to the block only while its position lies inside the block's box (as stored:
///     float32, rounded outward). Ordered by first id, so the R*Tree's own `%_rowid` table finds
///     the block of an id.
///   - `id < 0`: the single incident `-id`, whose position lies in no block's box that covers
///     its id: an incident added without a block (a geocoded one), or one that moved out of its box.
/// Invariant (checked by `verify`, kept by `BlockIndexWriter`): every located incident is found
/// through exactly one entry. Membership is decided by `GeocentricPoint` (closed form) on both
/// sides, so writer and reader agree to the bit.
enum BlockIndex {
    static let table = "incident_blocks"
    /// Incidents per block. At most 256 (the count lives in the entry id's low byte). On 1M
    /// points a 10-NN query reads 65 / 123 / 222 rows with blocks of 8 / 16 / 32, through about
    /// 8 entries either way; 8 against 16: 10-NN 0.035 vs 0.042 ms, 10 km radius 0.29 vs
    /// 0.275 ms, file 98.4 vs 95.2 MiB (docs/benchmarks.md).
    static let blockSize = 8

    static func blockID(first: Int64, last: Int64) -> Int64 { first << 8 | (last - first) }
    static func singleID(_ rowID: Int64) -> Int64 { -rowID }

    /// The first and the last incident id that an entry covers.
    @inline(__always)
    static func range(ofEntry id: Int64) -> (first: Int64, last: Int64) {
        id > 0 ? (id >> 8, (id >> 8) + (id & 255)) : (-id, -id)
    }

    /// An entry's box in geocentric metres.
    struct Box {
        var minX: Double, maxX: Double, minY: Double, maxY: Double, minZ: Double, maxZ: Double

        @inline(__always)
        func contains(_ p: GeocentricPoint) -> Bool {
            p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY && p.z >= minZ && p.z <= maxZ
        }

        /// The straight-line distance from `p` to the box: a lower bound of the geodesic
        /// distance to everything inside.
        @inline(__always)
        func chord(from p: GeocentricPoint) -> Double {
            let dx = Swift.max(minX - p.x, 0, p.x - maxX)
            let dy = Swift.max(minY - p.y, 0, p.y - maxY)
            let dz = Swift.max(minZ - p.z, 0, p.z - maxZ)
            return (dx * dx + dy * dy + dz * dz).squareRoot()
        }

        static func enclosing(_ points: ArraySlice<GeocentricPoint>) -> Box {
            let f = points.first!
            var b = Box(minX: f.x, maxX: f.x, minY: f.y, maxY: f.y, minZ: f.z, maxZ: f.z)
            for p in points.dropFirst() {
                b.minX = Swift.min(b.minX, p.x); b.maxX = Swift.max(b.maxX, p.x)
                b.minY = Swift.min(b.minY, p.y); b.maxY = Swift.max(b.maxY, p.y)
                b.minZ = Swift.min(b.minZ, p.z); b.maxZ = Swift.max(b.maxZ, p.z)
            }
            return b
        }
    }

    /// Whether the entry (`entryID`, `box`) is the one that finds a row at `p` among the rows it covers.
    @inline(__always)
    static func owns(entryID: Int64, box: Box, _ p: GeocentricPoint) -> Bool {
        entryID < 0 || box.contains(p)
    }

    /// The position of a row for the index, from the stored latitude and longitude.
    @inline(__always)
    static func point(latitude: Double, longitude: Double) -> GeocentricPoint {
        GeocentricPoint(Coordinate(latitude: latitude, longitude: longitude))
    }

    /// Index problems: located incidents found through no entry or through two, single entries
    /// of unlocated or missing incidents, and what `rtreecheck` says. Reads every located row.
    static func verify(_ db: Database) throws -> [String] {
        var problems: [String] = []
        let rtree = try String.fetchOne(db, sql: "SELECT rtreecheck('\(table)')") ?? "ok"
        if rtree != "ok" { problems.append(rtree) }
        var blocks: [(first: Int64, last: Int64, box: Box)] = []
        for row in try Row.fetchAll(db, sql: "SELECT id, min_x, max_x, min_y, max_y, min_z, max_z FROM \(table) WHERE id > 0 ORDER BY id") {
            let (first, last) = range(ofEntry: row[0])
            if let previous = blocks.last, previous.last >= first { problems.append("blocks \(previous.first)… and \(first)… overlap") }
            blocks.append((first, last, Box(minX: row[1], maxX: row[2], minY: row[3], maxY: row[4], minZ: row[5], maxZ: row[6])))
        }
        let singles = Set(try Int64.fetchAll(db, sql: "SELECT -id FROM \(table) WHERE id < 0"))
        var found = 0, unlisted = 0, doubled = 0
        var next = 0
        let rows = try Row.fetchCursor(db, sql: "SELECT id, latitude, longitude FROM incidents WHERE latitude IS NOT NULL ORDER BY id")
        while let row = try rows.next() {
            let id: Int64 = row[0]
            while next < blocks.count, blocks[next].last < id { next += 1 }
            let inBlock = next < blocks.count && blocks[next].first <= id
                && blocks[next].box.contains(point(latitude: row[1], longitude: row[2]))
            let single = singles.contains(id)
            if single { found += 1 }
            if inBlock && single { doubled += 1 }
            if !inBlock && !single { unlisted += 1 }
        }
        if unlisted > 0 { problems.append("\(unlisted) located incidents missing from the spatial index") }
        if doubled > 0 { problems.append("\(doubled) located incidents indexed twice") }
        if found != singles.count { problems.append("\(singles.count - found) single index entries without a located incident") }
        return problems
    }
}

/// Keeps `incident_blocks` right inside an open write transaction.
final class BlockIndexWriter {
    private let db: Database
    private let findBlock: Statement
    private let readBox: Statement
    private let putEntry: Statement
    private let deleteEntry: Statement

    init(db: Database) throws {
        self.db = db
        // Block entry ids grow with their first incident id, so the greatest id up to (id << 8 | 255) is
        // the block with the greatest first id ≤ id; blocks hold at most 256, hence the lower end.
        findBlock = try db.makeStatement(sql: """
            SELECT rowid FROM \(BlockIndex.table)_rowid WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT 1
            """)
        readBox = try db.makeStatement(sql: "SELECT min_x, max_x, min_y, max_y, min_z, max_z FROM \(BlockIndex.table) WHERE id = ?")
        putEntry = try db.makeStatement(sql: "INSERT OR REPLACE INTO \(BlockIndex.table) VALUES (?, ?, ?, ?, ?, ?, ?)")
        deleteEntry = try db.makeStatement(sql: "DELETE FROM \(BlockIndex.table) WHERE id = ?")
    }

    /// The first id that no incident and no block has used: new blocks never overlap old ones,
    /// even after the incidents with the highest ids were deleted.
    func nextFreeID() throws -> Int64 {
        let maxIncident = try Int64.fetchOne(db, sql: "SELECT max(id) FROM incidents") ?? 0
        let lastBlock = try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM \(BlockIndex.table)_rowid WHERE rowid > 0")
        return max(maxIncident, lastBlock.map { BlockIndex.range(ofEntry: $0).last } ?? 0) + 1
    }

    /// Indexes the just-stored incidents `firstID`, `firstID + 1`, … at `points` (in that order,
    /// nearby points next to each other) as blocks. Into an empty index, the tree is bulk-loaded.
    func addBlocks(firstID: Int64, points: [GeocentricPoint]) throws {
        guard !points.isEmpty else { return }
        let parts = (points.count + BlockIndex.blockSize - 1) / BlockIndex.blockSize
        var entries: [RTreeBulkLoader.Entry] = []
        entries.reserveCapacity(parts)
        for range in RTreeBulkLoader.evenRanges(points.count, parts: parts) {
            let first = firstID + Int64(range.lowerBound), last = firstID + Int64(range.upperBound - 1)
            entries.append(RTreeBulkLoader.Entry(id: BlockIndex.blockID(first: first, last: last), box: .enclosing(points[range])))
        }
        if try RTreeBulkLoader.isEmpty(db) {
            try RTreeBulkLoader.load(entries, into: db)
        } else {
            for e in entries {
                try putEntry.execute(arguments: [e.id, e.box.minX, e.box.maxX, e.box.minY, e.box.maxY, e.box.minZ, e.box.maxZ])
            }
        }
    }

    /// Keeps the index right after the stored position of incident `id` changed (nil: it has none now).
    func positionChanged(id: Int64, to position: Coordinate?) throws {
        guard let position else {
            try deleteEntry.execute(arguments: [BlockIndex.singleID(id)])
            return
        }
        let p = GeocentricPoint(position)
        if let box = try blockBox(covering: id), box.contains(p) {
            try deleteEntry.execute(arguments: [BlockIndex.singleID(id)])
        } else {
            try putEntry.execute(arguments: [BlockIndex.singleID(id), p.x, p.x, p.y, p.y, p.z, p.z])
        }
    }

    /// The stored box of the block whose id range covers `id`, if any.
    private func blockBox(covering id: Int64) throws -> BlockIndex.Box? {
        guard let entry = try Int64.fetchOne(findBlock, arguments: [max(1, id - 255) << 8, id << 8 | 255]) else { return nil }
        let (first, last) = BlockIndex.range(ofEntry: entry)
        guard first <= id, id <= last, let b = try Row.fetchOne(readBox, arguments: [entry]) else { return nil }
        return BlockIndex.Box(minX: b[0], maxX: b[1], minY: b[2], maxY: b[3], minZ: b[4], maxZ: b[5])
    }
}
