import NIOCore
import PostgresNIO
import TrafficGeoModel

/// One column of many rows, bound as a single PostgreSQL array parameter, NULLs included
/// (postgres-nio's own arrays cannot hold NULL). A batch of rows is then one statement with one
/// parameter per column, `INSERT … SELECT * FROM unnest($1::bigint[], $2::text[], …)`, whatever
/// the number of rows: no statement text grows with the batch, and no 65,535-parameter limit.
///
/// Each value is encoded as it is appended (length + bytes, PostgreSQL's binary array element),
/// so that binding the column is one copy of bytes: keeping the values and encoding them at the
/// end was a fifth of a big load's client time (every String retained, released and walked twice).
struct ColumnArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    /// The elements, each as its length (-1: NULL) and bytes; empty while all are NULL (most of
    /// a batch's columns often are: they are then written, if at all, only when encoded).
    private var elements = ByteBuffer()
    private(set) var count = 0
    private var hasNull = false
    /// No element holds a value (or there are none).
    private(set) var allNull = true

    /// Room for `rows` elements of about `bytesEach` bytes each, so that a batch's column is not
    /// copied as it grows.
    init(rows: Int = 0, bytesEach: Int = 8) {
        elements.reserveCapacity(rows * (4 + bytesEach))
    }

    init(_ values: [Element?]) {
        for value in values { append(value) }
    }

    mutating func append(_ value: Element?) {
        guard let value else { return appendNull() }
        beginValue()
        // Its length, then its bytes (postgres-nio's own `encodeRaw` is internal).
        let lengthAt = elements.writerIndex
        elements.writeInteger(0, as: Int32.self)
        value.encode(into: &elements, context: .default)
        elements.setInteger(Int32(elements.writerIndex - lengthAt - 4), at: lengthAt)
    }

    mutating func appendNull() {
        count += 1
        hasNull = true
        if !allNull { elements.writeInteger(-1, as: Int32.self) }
    }

    /// Counts the element about to be written, after the NULLs that came before the first value.
    @inline(__always)
    private mutating func beginValue() {
        if allNull {
            allNull = false
            for _ in 0..<count { elements.writeInteger(-1, as: Int32.self) }
        }
        count += 1
    }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's binary array format: dimensions, a has-NULL flag, the element type, then per
    /// dimension its length and lower bound, then the elements.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(count == 0 ? 0 : 1, as: Int32.self)
        buffer.writeInteger(hasNull ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
        if allNull {
            for _ in 0..<count { buffer.writeInteger(-1, as: Int32.self) }
        } else {
            buffer.writeImmutableBuffer(elements)
        }
    }
}

// The element types a batch writes most, each written with one call (the generic `append`
// makes three: length, bytes, length again).
extension ColumnArray where Element == Double {
    mutating func append(_ value: Double?) {
        guard let value else { return appendNull() }
        beginValue()
        elements.writeMultipleIntegers(Int32(8), value.bitPattern)
    }
}

extension ColumnArray where Element == Int64 {
    mutating func append(_ value: Int64?) {
        guard let value else { return appendNull() }
        beginValue()
        elements.writeMultipleIntegers(Int32(8), value)
    }
}

extension ColumnArray where Element == String {
    mutating func append(_ value: String?) {
        guard let value else { return appendNull() }
        beginValue()
        elements.writeInteger(Int32(value.utf8.count))
        elements.writeString(value)
    }

    /// Text given as its UTF-8 bytes (valid UTF-8 without NUL, as `TextFolding` writes).
    mutating func append(utf8 bytes: [UInt8]) {
        beginValue()
        elements.writeInteger(Int32(bytes.count), as: Int32.self)
        elements.writeBytes(bytes)
    }
}

/// A column of a batch, whatever its element type.
protocol BoundColumn {
    var allNull: Bool { get }
    func bind(into bindings: inout PostgresBindings)
}

extension ColumnArray: BoundColumn {
    func bind(into bindings: inout PostgresBindings) { bindings.append(self) }
}

/// Segments as well-known binary (little-endian), which PostGIS reads exactly
/// (`ST_GeogFromWKB`) and gives back exactly (`ST_AsBinary`): text forms round the doubles.
/// A real segment is a LineString; a degenerate one of a single point a Point, and an empty one
/// an empty LineString, so that nothing a feed gave is lost.
enum SegmentWKB {
    static func encode(_ points: [Coordinate]) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 9 + 16 * points.count)
        buffer.writeInteger(UInt8(1))
        if points.count == 1 {
            buffer.writeInteger(UInt32(1), endianness: .little)
        } else {
            buffer.writeInteger(UInt32(2), endianness: .little)
            buffer.writeInteger(UInt32(points.count), endianness: .little)
        }
        for p in points {
            buffer.writeInteger(p.longitude.bitPattern, endianness: .little)
            buffer.writeInteger(p.latitude.bitPattern, endianness: .little)
        }
        return buffer
    }

    /// The points of a WKB Point or LineString (either byte order); nil for anything else.
    static func decode(_ buffer: ByteBuffer) -> [Coordinate]? {
        var b = buffer
        guard let order = b.readInteger(as: UInt8.self) else { return nil }
        let endianness: Endianness = order == 1 ? .little : .big
        guard let type = b.readInteger(endianness: endianness, as: UInt32.self) else { return nil }
        func point() -> Coordinate? {
            guard let x = b.readInteger(endianness: endianness, as: UInt64.self),
                  let y = b.readInteger(endianness: endianness, as: UInt64.self) else { return nil }
            return Coordinate(latitude: Double(bitPattern: y), longitude: Double(bitPattern: x))
        }
        switch type {
        case 1: return point().map { [$0] }
        case 2:
            guard let n = b.readInteger(endianness: endianness, as: UInt32.self), Int(n) * 16 <= b.readableBytes else { return nil }
            var points: [Coordinate] = []
            points.reserveCapacity(Int(n))
            for _ in 0..<n {
                guard let p = point() else { return nil }
                points.append(p)
            }
            return points
        default: return nil
        }
    }
}
