import Foundation
import GRDB
import TrafficGeoStore

/// Builds the R*Tree `incident_blocks` in one pass when it is empty: a packed Hilbert R-tree
/// written straight into the R*Tree's shadow tables, instead of one R*-tree insertion per entry.
///
/// Why: SQLite inserts into an R*Tree one entry at a time (choose-subtree, split), about 11 µs an
/// entry on this machine, and leaves nodes ~55-70 % full. A packed tree is built in a sort and
/// one sequential write, its nodes are full (a third less disk) and its boxes barely overlap
/// (fewer nodes visited per query). Measured in docs/benchmarks.md.
///
/// The on-disk format is SQLite's own (ext/rtree/rtree.c, "Database Format of R-Tree Tables"):
///   `%_node(nodeno, data)`: node 1 is the root; data is a fixed-size blob (the size of the empty
///     root the table was created with): 2 bytes depth (root only, leaves = 0), 2 bytes cell
///     count, then cells of an 8-byte rowid or child node number and 2 × 3 float32 coordinates,
///     all big-endian.
///   `%_rowid(rowid, nodeno)`: the leaf of every entry. `%_parent(nodeno, parentnode)`: every
///   node but the root.
/// After loading, SQLite maintains the tree as usual (inserts, deletes, splits); `rtreecheck()`
/// verifies it (the store's `checkIntegrity` runs it).
enum RTreeBulkLoader {
    /// One entry to index: its id and its box in geocentric metres.
    struct Entry {
        var id: Int64
        var box: BlockIndex.Box
    }

    /// A cell of a node: a rowid (leaf) or child node index (inner), and its float32 box.
    private struct Cell {
        var ref: Int64
        var box: RTreeNodeFormat.StoredBox
        var centre: (Float, Float, Float) { ((box.0 + box.1) / 2, (box.2 + box.3) / 2, (box.4 + box.5) / 2) }
    }

    static let table = BlockIndex.table

    /// Whether the R*Tree has no entries (its shadow rowid table is empty).
    static func isEmpty(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM \(table)_rowid)") ?? true
    }

    /// Replaces the (empty) R*Tree with a packed tree over `entries`. Call inside a write transaction.
    static func load(_ entries: [Entry], into db: Database) throws {
        guard try isEmpty(db) else { throw StoreError.writeFailed("", reason: "bulk load into a non-empty R*Tree") }
        guard !entries.isEmpty else { return }
        guard let nodeSize = try Int.fetchOne(db, sql: "SELECT length(data) FROM \(table)_node WHERE nodeno = 1"),
              nodeSize >= RTreeNodeFormat.headerSize + RTreeNodeFormat.cellSize else {
            throw StoreError.writeFailed("", reason: "the R*Tree has no root node")
        }
        let fanout = RTreeNodeFormat.capacity(nodeSize: nodeSize)

        // Bottom-up: each level is its cells in packing order, grouped into nodes.
        var cells = entries.map { Cell(ref: $0.id, box: RTreeNodeFormat.storedBox($0.box)) }
        sortAlongHilbertCurve(&cells)
        var levels: [[[Cell]]] = []
        repeat {
            let nodes = pack(&cells, fanout: fanout)
            levels.append(nodes)
            // The next level's cells point at this level's nodes (by index, numbered below).
            cells = nodes.enumerated().map { Cell(ref: Int64($0.offset), box: union($0.element)) }
        } while levels.last!.count > 1

        // Node numbers: the root is 1, the rest follow level by level from the top.
        var numbers: [[Int64]] = Array(repeating: [], count: levels.count)
        var next: Int64 = 2
        for level in levels.indices.reversed() {
            if level == levels.count - 1 { numbers[level] = [1]; continue }
            numbers[level] = levels[level].indices.map { _ in defer { next += 1 }; return next }
        }

        try db.execute(sql: "DELETE FROM \(table)_node")
        let insertNode = try db.makeStatement(sql: "INSERT INTO \(table)_node (nodeno, data) VALUES (?, ?)")
        let insertParent = try db.makeStatement(sql: "INSERT INTO \(table)_parent (nodeno, parentnode) VALUES (?, ?)")
        var leafOf: [(rowid: Int64, node: Int64)] = []
        leafOf.reserveCapacity(entries.count)
        var blob = [UInt8](repeating: 0, count: nodeSize)
        for (level, nodes) in levels.enumerated() {
            let depth = levels.count - 1
            for (index, node) in nodes.enumerated() {
                let nodeno = numbers[level][index]
                RTreeNodeFormat.writeHeader(depth: nodeno == 1 ? depth : nil, cellCount: node.count, into: &blob)
                for (c, cell) in node.enumerated() {
                    let ref = level == 0 ? cell.ref : numbers[level - 1][Int(cell.ref)]
                    RTreeNodeFormat.writeCell(c, ref: ref, box: cell.box, into: &blob)
                    if level == 0 {
                        leafOf.append((cell.ref, nodeno))
                    } else {
                        try insertParent.execute(arguments: [ref, nodeno])
                    }
                }
                try insertNode.execute(arguments: [nodeno, Data(blob)])
            }
        }
        // Sorted by rowid, the rowid table is written as appends.
        leafOf.sort { $0.rowid < $1.rowid }
        let insertRowid = try db.makeStatement(sql: "INSERT INTO \(table)_rowid (rowid, nodeno) VALUES (?, ?)")
        for (rowid, node) in leafOf { try insertRowid.execute(arguments: [rowid, node]) }
    }

    /// Cuts `cells` (in packing order) into the fewest nodes of at most `fanout` cells, sized
    /// evenly so that no node is under-full (SQLite dissolves a node below a third full on the
    /// next delete).
    private static func pack(_ cells: inout [Cell], fanout: Int) -> [[Cell]] {
        evenRanges(cells.count, parts: (cells.count + fanout - 1) / fanout).map { Array(cells[$0]) }
    }

    /// Sorts the leaf cells along a 3-D Hilbert curve over their bounding box: neighbours on the
    /// curve are neighbours in space, so consecutive runs make compact nodes at every level.
    /// (Sort-Tile-Recursive slabs along x, y, z made long thin leaves here: points on the curved
    /// surface of the Earth fill a tilted 2-D patch of the 3-D box, and k-NN got 2× slower.)
    private static func sortAlongHilbertCurve(_ cells: inout [Cell]) {
        var lo = cells[0].centre, hi = cells[0].centre
        for c in cells {
            let p = c.centre
            lo = (min(lo.0, p.0), min(lo.1, p.1), min(lo.2, p.2))
            hi = (max(hi.0, p.0), max(hi.1, p.1), max(hi.2, p.2))
        }
        let span = max(hi.0 - lo.0, hi.1 - lo.1, hi.2 - lo.2, 1)
        let scale = Double(HilbertCurve3D.side - 1) / Double(span)
        func cellOf(_ v: Float, _ l: Float) -> UInt32 { UInt32(max(0, min(Double(HilbertCurve3D.side - 1), Double(v - l) * scale))) }
        let keyed = cells.map { c -> (UInt64, Cell) in
            let p = c.centre
            return (HilbertCurve3D.index(cellOf(p.0, lo.0), cellOf(p.1, lo.1), cellOf(p.2, lo.2)), c)
        }
        cells = keyed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// `count` items cut into `parts` consecutive ranges whose sizes differ by at most one.
    static func evenRanges(_ count: Int, parts: Int) -> [Range<Int>] {
        let parts = evenPartCount(count, parts: parts)
        return (0..<parts).map { evenRange($0, of: parts, count: count) }
    }

    /// How many ranges `evenRanges` makes: `parts`, but at least one and no more than the items.
    static func evenPartCount(_ count: Int, parts: Int) -> Int { max(1, min(parts, count)) }

    /// The `p`-th of `evenRanges`' ranges, without making the others (a builder that meets the
    /// items one at a time holds no list of ranges).
    static func evenRange(_ p: Int, of parts: Int, count: Int) -> Range<Int> {
        (count * p / parts)..<(count * (p + 1) / parts)
    }

    private static func union(_ cells: [Cell]) -> RTreeNodeFormat.StoredBox {
        var b = cells[0].box
        for c in cells.dropFirst() {
            b = (min(b.0, c.box.0), max(b.1, c.box.1), min(b.2, c.box.2), max(b.3, c.box.3), min(b.4, c.box.4), max(b.5, c.box.5))
        }
        return b
    }
}
