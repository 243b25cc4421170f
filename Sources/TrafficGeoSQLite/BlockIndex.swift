import GRDB
import TrafficGeoModel
import TrafficGeoProjection

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
            // Two-argument max: the three-argument one is variadic and was not inlined (1 % of a
            // 10-nearest request in `serve`).
            let dx = Swift.max(Swift.max(minX - p.x, p.x - maxX), 0)
            let dy = Swift.max(Swift.max(minY - p.y, p.y - maxY), 0)
            let dz = Swift.max(Swift.max(minZ - p.z, p.z - maxZ), 0)
            return (dx * dx + dy * dy + dz * dz).squareRoot()
        }
    }

    /// The ownership rule, the one place it is written: whether the entry (`entryID`, `box`) is
    /// the one that finds a row at `p` among the rows its id range covers. A single entry owns its
    /// row; a block owns the rows of its range whose position lies in its box (a row that moved out
    /// has a single entry of its own instead).
    @inline(__always)
    static func owns(entryID: Int64, box: Box, _ p: GeocentricPoint) -> Bool {
        entryID < 0 || box.contains(p)
    }

    /// Which entries find each row, for rows read in rising id order: the blocks sorted by first
    /// id (a cursor that only moves forward) and the single entries. Used by radius queries,
    /// which read runs of ids, and by `verify`.
    struct RisingIDOwnership {
        private var blocks: [(id: Int64, first: Int64, last: Int64, box: Box)]
        private let singles: Set<Int64>
        private var cursor = 0

        init(entries: [(id: Int64, box: Box)]) {
            var blocks: [(id: Int64, first: Int64, last: Int64, box: Box)] = []
            var singles: Set<Int64> = []
            for entry in entries {
                let (first, last) = BlockIndex.range(ofEntry: entry.id)
                if entry.id > 0 { blocks.append((entry.id, first, last, entry.box)) } else { singles.insert(first) }
            }
            self.blocks = blocks.sorted { $0.first < $1.first }
            self.singles = singles
        }

        var singleCount: Int { singles.count }
        /// Consecutive blocks whose id ranges overlap (never, in a sound index).
        var overlaps: [(Int64, Int64)] {
            zip(blocks, blocks.dropFirst()).filter { $0.0.last >= $0.1.first }.map { ($0.0.first, $0.1.first) }
        }

        /// Whether the block covering `id` owns the row at `p`, and whether a single entry does.
        /// `id` must not be less than the id of the previous call.
        @inline(__always)
        mutating func owners(of id: Int64, at p: GeocentricPoint) -> (block: Bool, single: Bool) {
            while cursor < blocks.count, blocks[cursor].last < id { cursor += 1 }
            let block = cursor < blocks.count && blocks[cursor].first <= id
                && BlockIndex.owns(entryID: blocks[cursor].id, box: blocks[cursor].box, p)
            return (block, singles.contains(id))
        }
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
        let entries = try Row.fetchAll(db, sql: "SELECT id, min_x, max_x, min_y, max_y, min_z, max_z FROM \(table)").map {
            (id: $0[0] as Int64, box: Box(minX: $0[1], maxX: $0[2], minY: $0[3], maxY: $0[4], minZ: $0[5], maxZ: $0[6]))
        }
        var ownership = RisingIDOwnership(entries: entries)
        for (previous, next) in ownership.overlaps { problems.append("blocks \(previous)… and \(next)… overlap") }
        var found = 0, unlisted = 0, doubled = 0
        let rows = try Row.fetchCursor(db, sql: "SELECT id, latitude, longitude FROM incidents WHERE latitude IS NOT NULL ORDER BY id")
        while let row = try rows.next() {
            let owners = ownership.owners(of: row[0], at: point(latitude: row[1], longitude: row[2]))
            if owners.single { found += 1 }
            if owners.block && owners.single { doubled += 1 }
            if !owners.block && !owners.single { unlisted += 1 }
        }
        if unlisted > 0 { problems.append("\(unlisted) located incidents missing from the spatial index") }
        if doubled > 0 { problems.append("\(doubled) located incidents indexed twice") }
        if found != ownership.singleCount { problems.append("\(ownership.singleCount - found) single index entries without a located incident") }
        return problems
    }
}

extension BlockIndex {
    /// The block entries over `count` points stored with consecutive ids, made one point at a
    /// time (an external sort's merge never holds all the points): `count / blockSize` blocks,
    /// rounded up, of sizes as even as they can be.
    struct Builder {
        /// The announced points, cut into `parts` blocks as the bulk loader cuts (`evenRange`),
        /// one block's range at a time (a list of them was 20 MB at 10M points): `block` is the
        /// current one's, made when the block before it ends, not for every point.
        private let count: Int, parts: Int
        private var block: Range<Int>
        private(set) var entries: [RTreeBulkLoader.Entry] = []
        private var added = 0, part = 0, firstID: Int64 = 0
        private var box = Box(minX: 0, maxX: 0, minY: 0, maxY: 0, minZ: 0, maxZ: 0)

        init(count: Int) {
            self.count = count
            parts = RTreeBulkLoader.evenPartCount(count, parts: (count + BlockIndex.blockSize - 1) / BlockIndex.blockSize)
            block = RTreeBulkLoader.evenRange(0, of: parts, count: count)
            entries.reserveCapacity(parts)
        }

        /// The next point, stored as `id` (one more than the point before).
        mutating func add(_ p: GeocentricPoint, id: Int64) {
            precondition(part < parts && added < count, "more points than announced")
            if added == block.lowerBound {
                firstID = id
                box = Box(minX: p.x, maxX: p.x, minY: p.y, maxY: p.y, minZ: p.z, maxZ: p.z)
            } else {
                box.minX = Swift.min(box.minX, p.x); box.maxX = Swift.max(box.maxX, p.x)
                box.minY = Swift.min(box.minY, p.y); box.maxY = Swift.max(box.maxY, p.y)
                box.minZ = Swift.min(box.minZ, p.z); box.maxZ = Swift.max(box.maxZ, p.z)
            }
            added += 1
            if added == block.upperBound {
                entries.append(RTreeBulkLoader.Entry(id: BlockIndex.blockID(first: firstID, last: id), box: box))
                part += 1
                block = RTreeBulkLoader.evenRange(part, of: parts, count: count)
            }
        }
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
        var blocks = BlockIndex.Builder(count: points.count)
        for (k, p) in points.enumerated() { blocks.add(p, id: firstID + Int64(k)) }
        try add(blocks.entries)
    }

    /// Indexes block entries made by a `BlockIndex.Builder`.
    func add(_ entries: [RTreeBulkLoader.Entry]) throws {
        guard !entries.isEmpty else { return }
        // The bulk loader writes the R*Tree's shadow tables, which SQLite refuses in defensive
        // mode (SQLITE_DBCONFIG_DEFENSIVE, which an application or a build may turn on): then the
        // entries go in one by one, as into a tree that is not empty.
        if try RTreeBulkLoader.isEmpty(db), !SQLiteConnectionMode.isDefensive(db) {
            try RTreeBulkLoader.load(entries, into: db)
        } else {
            for e in entries {
                try putEntry.execute(arguments: [e.id, e.box.minX, e.box.maxX, e.box.minY, e.box.maxY, e.box.minZ, e.box.maxZ])
            }
        }
    }

    /// Deletes the block entries none of whose incidents is left (after a prune or a merge of
    /// sources): a query would otherwise still walk to them, and the tree keep them forever.
    /// Returns how many went. (A block with some incidents left keeps its box; single entries go
    /// with their incident, by trigger.)
    @discardableResult
    func dropEmptyBlocks() throws -> Int {
        let blocks = try Int64.fetchAll(db, sql: "SELECT id FROM \(BlockIndex.table) WHERE id > 0")
        let anyIncident = try db.makeStatement(sql: "SELECT EXISTS (SELECT 1 FROM incidents WHERE id BETWEEN ? AND ?)")
        var dropped = 0
        for block in blocks {
            let (first, last) = BlockIndex.range(ofEntry: block)
            if try Bool.fetchOne(anyIncident, arguments: [first, last]) == false {
                try deleteEntry.execute(arguments: [block])
                dropped += 1
            }
        }
        return dropped
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
