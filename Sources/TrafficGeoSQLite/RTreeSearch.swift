import GRDB
import GRDBSQLite
import TrafficGeoModel
import TrafficGeoProjection

/// The nodes of the `incident_blocks` R*Tree, read straight from its `%_node` shadow table
/// (`RTreeNodeReader`) as a search reaches them and kept parsed: plain values, no connection;
/// and the positions of the leaf entries' rows as searches read them (`rows(ofEntry:read:)`).
///
/// Why not SQLite's own R*Tree query (`MATCH` with a query callback): for a 10-NN query that walk
/// was most of the time: every visited node re-read through a blob handle, every cell's box
/// decoded and handed to the callback through the virtual-table machinery. Here a node is read
/// once and searched in Swift (`RTreeSearch`), in SQLite's format (`RTreeNodeFormat`).
///
/// Nodes and rows are those of the snapshot they were read in: reuse them in another transaction
/// only while the database is unchanged (`IndexNodeCache` and a query thread's connection check
/// `PRAGMA data_version`).
/// Unchecked Sendable: kept per connection (in `IndexNodeCache`, or with a query thread's own
/// connection), and a connection serves one read at a time, so one instance is never used by two
/// threads at once.
final class RTreeNodes: @unchecked Sendable {
    struct Cell {
        var ref: Int64
        var box: BlockIndex.Box
    }

    struct Node {
        /// 0 for leaves.
        var level: Int
        var cells: [Cell]
    }

    /// A located incident of a leaf entry, as the entry owns it (`BlockIndex.owns`).
    struct Row {
        var id: Int64
        var position: Coordinate
    }

    /// Nodes read so far, and where each node number is among them.
    private(set) var loaded: [Node] = []
    private var slots: [Int64: Int32] = [:]
    private(set) var depth = 0

    /// The rows of the leaf entries read so far, positions only, for searches with no filter
    /// (`SQLiteCandidates`): stepping SQLite through a 10-nearest query's ~65 candidate rows was
    /// a tenth of a request in `serve`. Of the same snapshot as the nodes. 24 bytes a row; past
    /// `rowCapacity` the rows are dropped and read again as searches reach them.
    private(set) var rows: [Row] = []
    private var rowsOfEntry: [Int64: Range<Int>] = [:]
    private let rowCapacity: Int
    /// 2M rows: ≈ 50 MiB with their entry map, for each connection that keeps nodes (a query
    /// thread of `serve`).
    static let defaultRowCapacity = 2_000_000

    /// Reads the root.
    init(_ reader: RTreeNodeReader, rowCapacity: Int = RTreeNodes.defaultRowCapacity) throws {
        self.rowCapacity = rowCapacity
        guard let root = try load(1, level: nil, reader) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the R*Tree \(BlockIndex.table) has no root node")
        }
        depth = loaded[Int(root)].level
    }

    /// Where node `number`, which lies `level` levels above the leaves, is in `loaded` (read now if need be).
    func slot(_ number: Int64, level: Int, _ reader: RTreeNodeReader) throws -> Int32 {
        if let slot = slots[number] { return slot }
        guard let slot = try load(number, level: level, reader) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "the R*Tree \(BlockIndex.table) has no node \(number)")
        }
        return slot
    }

    /// Where the rows of leaf entry `id` are in `rows`, read by `read` (which appends them) the
    /// first time. Ranges handed out earlier are void once this reads: the rows may be dropped.
    func rows(ofEntry id: Int64, read: (inout [Row]) throws -> Void) rethrows -> Range<Int> {
        if let range = rowsOfEntry[id] { return range }
        if rows.count >= rowCapacity {
            rows.removeAll(keepingCapacity: true)
            rowsOfEntry.removeAll(keepingCapacity: true)
        }
        let start = rows.count
        do {
            try read(&rows)
        } catch {
            rows.removeSubrange(start...)
            throw error
        }
        rowsOfEntry[id] = start..<rows.count
        return start..<rows.count
    }

    private func load(_ number: Int64, level: Int?, _ reader: RTreeNodeReader) throws -> Int32? {
        guard let (cells, depth) = try reader.read(number) else { return nil }
        let slot = Int32(loaded.count)
        loaded.append(Node(level: level ?? depth, cells: cells))
        slots[number] = slot
        return slot
    }
}

/// Reads one node blob of the R*Tree inside a read transaction (the statement comes from the
/// connection's cache and is used only inside that transaction). The statement is looked up
/// only when a node is read: most searches find every node they need parsed already, and the
/// lookup (hashing the SQL text) was then ~0.5 % of a 10-nearest request in `serve` for nothing.
struct RTreeNodeReader {
    let db: Database

    init(_ db: Database) {
        self.db = db
    }

    /// The cells of node `number` and the depth in its header; nil when there is no such node.
    func read(_ number: Int64) throws -> (cells: [RTreeNodes.Cell], depth: Int)? {
        let statement = try db.cachedStatement(sql: Self.sql).sqliteStatement
        sqlite3_reset(statement)
        sqlite3_bind_int64(statement, 1, number)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW else {
            if code == SQLITE_DONE { return nil }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
        }
        let size = Int(sqlite3_column_bytes(statement, 0))
        guard size >= RTreeNodeFormat.headerSize, let blob = sqlite3_column_blob(statement, 0) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: blob, count: size)
        guard let count = RTreeNodeFormat.cellCount(bytes) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "R*Tree node \(number) is too short for its cells")
        }
        var cells: [RTreeNodes.Cell] = []
        cells.reserveCapacity(count)
        for c in 0..<count {
            let (ref, box) = RTreeNodeFormat.cell(bytes, c)
            cells.append(RTreeNodes.Cell(ref: ref, box: box))
        }
        return (cells, RTreeNodeFormat.depth(bytes))
    }

    private static let sql = "SELECT data FROM \(BlockIndex.table)_node WHERE nodeno = ?"
}
/// Best-first search of the R*Tree: yields leaf entries in increasing order of the chord from the
/// query point to their box (a lower bound of the geodesic distance to anything in the box),
/// skipping every box beyond `bound`, which the caller may lower while it reads (k-NN: to the
/// k-th distance found so far).
struct RTreeSearch {
    /// A node or leaf entry waiting in the queue: cell `cell` of the loaded node `parent` (the
    /// root: parent -1). Small on purpose: pushing and sifting items was a fifth of a 10-NN query
    /// when they carried their boxes.
    private struct Item {
        var chord: Double
        var parent: Int32
        var cell: Int32
    }

    private let nodes: RTreeNodes
    private let reader: RTreeNodeReader
    private let query: GeocentricPoint
    private var heap: [Item] = []
    var bound: Double

    init(_ nodes: RTreeNodes, reader: RTreeNodeReader, around query: GeocentricPoint, bound: Double) {
        self.nodes = nodes
        self.reader = reader
        self.query = query
        self.bound = bound
        heap.reserveCapacity(256)
        push(Item(chord: 0, parent: -1, cell: 0))
    }

    /// The next leaf entry: its id, its box and the chord to it; nil when none is left within `bound`.
    mutating func next() throws -> (id: Int64, box: BlockIndex.Box, chord: Double)? {
        while let item = pop() {
            if item.chord > bound { heap.removeAll(keepingCapacity: true); return nil }
            let child: Int32
            if item.parent < 0 {
                child = try nodes.slot(1, level: nodes.depth, reader)
            } else {
                let parent = nodes.loaded[Int(item.parent)]
                let cell = parent.cells[Int(item.cell)]
                if parent.level == 0 { return (cell.ref, cell.box, item.chord) }
                child = try nodes.slot(cell.ref, level: parent.level - 1, reader)
            }
            for (i, cell) in nodes.loaded[Int(child)].cells.enumerated() {
                let chord = cell.box.chord(from: query)
                if chord <= bound { push(Item(chord: chord, parent: child, cell: Int32(i))) }
            }
        }
        return nil
    }

    // A binary min-heap on `chord`, sifted through the array's buffer: indexing the array itself
    // checked its uniqueness and bounds at every step (a query pushes ~300 cells).
    private mutating func push(_ item: Item) {
        heap.append(item)
        heap.withUnsafeMutableBufferPointer { h in
            var i = h.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard item.chord < h[parent].chord else { break }
                h[i] = h[parent]
                i = parent
            }
            h[i] = item
        }
    }

    private mutating func pop() -> Item? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return top }
        heap.withUnsafeMutableBufferPointer { h in
            var i = 0
            let count = h.count
            while true {
                let l = 2 * i + 1
                guard l < count else { break }
                let r = l + 1
                let m = r < count && h[r].chord < h[l].chord ? r : l
                guard h[m].chord < last.chord else { break }
                h[i] = h[m]
                i = m
            }
            h[i] = last
        }
        return top
    }
}
