import GRDB
import TrafficGeoSupport

extension StableHash {
    /// One stored column value; NULL, text and numbers hash apart from each other (little-endian
    /// numbers, each kind with its own tag byte).
    mutating func combine(column value: DatabaseValue) {
        switch value.storage {
        case .null:
            combine(raw: UnsafeRawBufferPointer(start: nil, count: 0), tag: 0xfe)
        case let .string(text):
            var text = text
            text.withUTF8 { combine(raw: UnsafeRawBufferPointer($0), tag: 0xff) }
        case let .double(number):
            withUnsafeBytes(of: number.bitPattern.littleEndian) { combine(raw: $0, tag: 0xfd) }
        case let .int64(number):
            withUnsafeBytes(of: UInt64(bitPattern: number).littleEndian) { combine(raw: $0, tag: 0xfc) }
        case let .blob(data):
            data.withUnsafeBytes { combine(raw: $0, tag: 0xfb) }
        }
    }
}
