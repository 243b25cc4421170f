
/// SQLite's R*Tree node format (ext/rtree/rtree.c, "Database Format of R-Tree Tables"), for a
/// 3-D tree of float32 coordinates: the one definition `RTreeNodes` reads and `RTreeBulkLoader`
/// writes.
///
/// A node is a fixed-size blob in `%_node(nodeno, data)`; node 1 is the root. Bytes 0-1: the
/// tree depth (root only; leaves are level 0), bytes 2-3: the cell count, then the cells: an
/// 8-byte id (an entry id in leaves, a child node number above) and six float32 coordinates
/// (min x, max x, min y, max y, min z, max z). Everything big-endian.
enum RTreeNodeFormat {
    static let headerSize = 4
    /// 8-byte id + 6 float32 coordinates.
    static let cellSize = 8 + 6 * 4
    /// A box as stored: six float32s, in the order above.
    typealias StoredBox = (Float, Float, Float, Float, Float, Float)

    /// How many cells fit a node blob of `nodeSize` bytes.
    static func capacity(nodeSize: Int) -> Int { (nodeSize - headerSize) / cellSize }

    // MARK: - Reading

    /// The depth written in the root's header.
    static func depth(_ node: UnsafeRawBufferPointer) -> Int { u16(node, 0) }

    /// The cell count; nil when the blob is too short for it.
    static func cellCount(_ node: UnsafeRawBufferPointer) -> Int? {
        guard node.count >= headerSize else { return nil }
        let count = u16(node, 2)
        return headerSize + count * cellSize <= node.count ? count : nil
    }

    /// Cell `index`: its id or child node number, and its box in geocentric metres.
    static func cell(_ node: UnsafeRawBufferPointer, _ index: Int) -> (ref: Int64, box: BlockIndex.Box) {
        let at = headerSize + index * cellSize
        func f32(_ i: Int) -> Double { Double(Float(bitPattern: u32(node, at + 8 + 4 * i))) }
        let ref = Int64(bitPattern: UInt64(u32(node, at)) << 32 | UInt64(u32(node, at + 4)))
        return (ref, BlockIndex.Box(minX: f32(0), maxX: f32(1), minY: f32(2), maxY: f32(3), minZ: f32(4), maxZ: f32(5)))
    }

    private static func u16(_ b: UnsafeRawBufferPointer, _ at: Int) -> Int { Int(b[at]) << 8 | Int(b[at + 1]) }

    private static func u32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }

    // MARK: - Writing

    /// Clears `node` and writes its header (`depth` only for the root).
    static func writeHeader(depth: Int?, cellCount: Int, into node: inout [UInt8]) {
        for i in node.indices { node[i] = 0 }
        if let depth { put16(UInt16(depth), at: 0, in: &node) }
        put16(UInt16(cellCount), at: 2, in: &node)
    }

    /// Writes cell `index`.
    static func writeCell(_ index: Int, ref: Int64, box: StoredBox, into node: inout [UInt8]) {
        let at = headerSize + index * cellSize
        put64(UInt64(bitPattern: ref), at: at, in: &node)
        // Six float32s, written without an array per cell.
        put32(box.0.bitPattern, at: at + 8, in: &node); put32(box.1.bitPattern, at: at + 12, in: &node)
        put32(box.2.bitPattern, at: at + 16, in: &node); put32(box.3.bitPattern, at: at + 20, in: &node)
        put32(box.4.bitPattern, at: at + 24, in: &node); put32(box.5.bitPattern, at: at + 28, in: &node)
    }

    /// The box in float32, rounded outward as SQLite does, so it contains everything the exact box does.
    static func storedBox(_ b: BlockIndex.Box) -> StoredBox {
        (down(b.minX), up(b.maxX), down(b.minY), up(b.maxY), down(b.minZ), up(b.maxZ))
    }

    private static func down(_ v: Double) -> Float { let f = Float(v); return Double(f) > v ? f.nextDown : f }
    private static func up(_ v: Double) -> Float { let f = Float(v); return Double(f) < v ? f.nextUp : f }

    private static func put16(_ v: UInt16, at i: Int, in b: inout [UInt8]) {
        b[i] = UInt8(v >> 8); b[i + 1] = UInt8(v & 0xff)
    }

    private static func put32(_ v: UInt32, at i: Int, in b: inout [UInt8]) {
        for k in 0..<4 { b[i + k] = UInt8((v >> (24 - 8 * UInt32(k))) & 0xff) }
    }

    private static func put64(_ v: UInt64, at i: Int, in b: inout [UInt8]) {
        for k in 0..<8 { b[i + k] = UInt8((v >> (56 - 8 * UInt64(k))) & 0xff) }
    }
}
