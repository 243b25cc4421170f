import GRDB
import TrafficGeoSupport

extension StableHash {
    /// One stored column value; NULL, text and numbers hash apart from each other (little-endian
    /// numbers, each kind with its own tag byte).
    mutating func combine(column value: DatabaseValue) {
        switch value.storage {
        case .null:
            combine(raw: [UInt8](), tag: 0xfe)
        case let .string(text):
            combine(raw: text.utf8, tag: 0xff)
        case let .double(number):
            combine(raw: Self.littleEndian(number.bitPattern), tag: 0xfd)
        case let .int64(number):
            combine(raw: Self.littleEndian(UInt64(bitPattern: number)), tag: 0xfc)
        case let .blob(data):
            combine(raw: data, tag: 0xfb)
        }
    }

    private static func littleEndian(_ bits: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: bits >> (8 * UInt64($0))) }
    }
}
