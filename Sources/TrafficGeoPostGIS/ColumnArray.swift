import NIOCore
import PostgresNIO
import TrafficGeoModel

/// One column of many rows, bound as a single PostgreSQL array parameter, NULLs included
/// (postgres-nio's own arrays cannot hold NULL). A batch of rows is then one statement with one
/// parameter per column, `INSERT … SELECT * FROM unnest($1::bigint[], $2::text[], …)`, whatever
/// the number of rows: no statement text grows with the batch, and no 65,535-parameter limit.
struct ColumnArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>: PostgresNonThrowingEncodable, PostgresDynamicTypeEncodable {
    var values: [Element?]

    init(_ values: [Element?] = []) { self.values = values }

    mutating func append(_ value: Element?) { values.append(value) }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    /// PostgreSQL's binary array format: dimensions, a has-NULL flag, the element type, then per
    /// dimension its length and lower bound, then each element as length + bytes (-1: NULL).
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(values.count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            if let value {
                // Its length, then its bytes (postgres-nio's own `encodeRaw` is internal).
                let lengthAt = buffer.writerIndex
                buffer.writeInteger(0, as: Int32.self)
                value.encode(into: &buffer, context: context)
                buffer.setInteger(Int32(buffer.writerIndex - lengthAt - 4), at: lengthAt)
            } else {
                buffer.writeInteger(-1, as: Int32.self)
            }
        }
    }
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
