import Foundation
import GRDB
import GRDBSQLite
import TrafficGeoModel
import TrafficGeoProjection

/// New incidents waiting to be stored, packed into one byte buffer: about 100 bytes for a short
/// entry instead of ~550 as arrays of database values (a million-point ingest holds them all).
struct PendingInserts {
    /// Values are those of `IncidentRowLayout.NewRow.packedColumns`: source id, feed id, the
    /// fields, content hash.
    static let firstField = IncidentRowLayout.NewRow.firstPackedField

    private struct Item {
        var offset: Int
        var curveIndex: UInt64
        var latitude: Double, longitude: Double
        var located: Bool
        var storageKey: StorageKey { StorageKey(located: located, curveIndex: curveIndex) }
    }

    private var bytes: [UInt8] = []
    private var items: [Item] = []
    private var slots: [String: Int] = [:]

    var count: Int { items.count }

    static func key(source: String, id: String) -> String { source + "\u{0}" + id }

    func slot(of key: String) -> Int? { slots[key] }

    mutating func append(key: String, values: [DatabaseValue], position: Coordinate?) {
        slots[key] = items.count
        items.append(item(values, position))
    }

    /// A later entry with the same id: its values replace the earlier ones (the old bytes stay unused).
    mutating func replace(_ slot: Int, with values: [DatabaseValue], position: Coordinate?) {
        items[slot] = item(values, position)
    }

    func position(at slot: Int) -> Coordinate? {
        let item = items[slot]
        return item.located ? Coordinate(latitude: item.latitude, longitude: item.longitude) : nil
    }

    /// Where a row goes in storage order: unlocated rows first, then along the curve. Equal keys
    /// keep feed order here, and the earlier run's row first in `SpilledRuns.merge`.
    struct StorageKey: Comparable {
        var located: Bool, curveIndex: UInt64
        static func < (a: StorageKey, b: StorageKey) -> Bool {
            a.located != b.located ? !a.located : a.curveIndex < b.curveIndex
        }
    }

    /// Slots in the order to store them: unlocated first (in feed order), then along the curve.
    func storageOrder() -> [Int] {
        items.indices.sorted { a, b in
            let x = items[a].storageKey, y = items[b].storageKey
            return x != y ? x < y : a < b
        }
    }

    private mutating func item(_ values: [DatabaseValue], _ position: Coordinate?) -> Item {
        let offset = bytes.count
        bytes.append(UInt8(values.count))
        for value in values { encode(value) }
        guard let position else { return Item(offset: offset, curveIndex: 0, latitude: 0, longitude: 0, located: false) }
        return Item(offset: offset, curveIndex: HilbertCurve3D.index(of: GeocentricPoint(position)),
                    latitude: position.latitude, longitude: position.longitude, located: true)
    }

    // Encoding: a tag byte, then 8 bytes (integer, real) or a 4-byte length and the bytes (text, blob).
    private enum Tag: UInt8 { case null, integer, real, text, blob }

    private mutating func encode(_ value: DatabaseValue) {
        switch value.storage {
        case .null: bytes.append(Tag.null.rawValue)
        case let .int64(v): bytes.append(Tag.integer.rawValue); put(UInt64(bitPattern: v))
        case let .double(v): bytes.append(Tag.real.rawValue); put(v.bitPattern)
        case let .string(s):
            bytes.append(Tag.text.rawValue)
            var s = s
            s.withUTF8 { putBytes($0) }
        case let .blob(d):
            bytes.append(Tag.blob.rawValue)
            d.withUnsafeBytes { putBytes($0.bindMemory(to: UInt8.self)) }
        }
    }

    private mutating func put(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func putBytes(_ b: UnsafeBufferPointer<UInt8>) {
        withUnsafeBytes(of: UInt32(b.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: b)
    }

    /// One packed value, its bytes valid only inside `forEachValue`.
    private enum Packed {
        case null, integer(Int64), real(Double), text(UnsafeBufferPointer<UInt8>), blob(UnsafeBufferPointer<UInt8>)
    }

    /// Calls `body` with the index and value of each value of `slot`, in order.
    private func forEachValue(of slot: Int, _ body: (Int, Packed) -> Void) {
        bytes.withUnsafeBufferPointer { b in
            var at = items[slot].offset
            let n = Int(b[at])
            at += 1
            func word() -> UInt64 {
                var v: UInt64 = 0
                for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * UInt64(k)) }
                at += 8
                return v
            }
            func chunk() -> UnsafeBufferPointer<UInt8> {
                var length = 0
                for k in 0..<4 { length |= Int(b[at + k]) << (8 * k) }
                at += 4
                defer { at += length }
                return UnsafeBufferPointer(rebasing: b[at ..< at + length])
            }
            for k in 0..<n {
                let tag = Tag(rawValue: b[at])!
                at += 1
                switch tag {
                case .null: body(k, .null)
                case .integer: body(k, .integer(Int64(bitPattern: word())))
                case .real: body(k, .real(Double(bitPattern: word())))
                case .text: body(k, .text(chunk()))
                case .blob: body(k, .blob(chunk()))
                }
            }
        }
    }

    /// Binds the values of `slot` to the parameters `first`, `first + 1`, … of `statement`.
    func bind(_ slot: Int, to statement: SQLiteStatement, from first: Int32) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        forEachValue(of: slot) { k, value in
            let parameter = first + Int32(k)
            switch value {
            case .null: sqlite3_bind_null(statement, parameter)
            case let .integer(v): sqlite3_bind_int64(statement, parameter, v)
            case let .real(v): sqlite3_bind_double(statement, parameter, v)
            case let .text(bytes):
                // An empty value still needs a pointer: NULL would bind SQL NULL.
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    sqlite3_bind_text(statement, parameter, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
                } else {
                    sqlite3_bind_text(statement, parameter, "", 0, transient)
                }
            case let .blob(bytes):
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    sqlite3_bind_blob(statement, parameter, base, Int32(bytes.count), transient)
                } else {
                    sqlite3_bind_zeroblob(statement, parameter, 0)
                }
            }
        }
    }

    // MARK: - Records: rows as an external sort's run keeps them (`SpilledRuns`)

    /// What a run keeps of a row besides its packed values.
    struct RecordHeader {
        var curveIndex: UInt64
        var latitude: Double, longitude: Double
        var located: Bool
        var storageKey: StorageKey { StorageKey(located: located, curveIndex: curveIndex) }
    }

    /// Calls `body` with each row's header and packed values, in storage order.
    func forEachRecordInStorageOrder(_ body: (RecordHeader, UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        let order = storageOrder()
        try bytes.withUnsafeBufferPointer { b in
            for slot in order {
                let item = items[slot]
                let header = RecordHeader(curveIndex: item.curveIndex, latitude: item.latitude, longitude: item.longitude, located: item.located)
                try body(header, UnsafeBufferPointer(rebasing: b[item.offset ..< Self.end(ofValuesAt: item.offset, in: b)]))
            }
        }
    }

    /// Appends a row as a run kept it. Nothing looks a merged row up by its key, so it has none.
    mutating func appendRecord(_ header: RecordHeader, values: UnsafeBufferPointer<UInt8>) {
        items.append(Item(offset: bytes.count, curveIndex: header.curveIndex, latitude: header.latitude, longitude: header.longitude,
                          located: header.located))
        bytes.append(contentsOf: values)
    }

    /// Empties the rows, keeping the memory for the next ones.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        items.removeAll(keepingCapacity: true)
        slots.removeAll()
    }

    /// Where the packed values that start at `offset` end.
    private static func end(ofValuesAt offset: Int, in b: UnsafeBufferPointer<UInt8>) -> Int {
        var at = offset + 1
        for _ in 0 ..< Int(b[offset]) {
            let tag = Tag(rawValue: b[at])!
            at += 1
            switch tag {
            case .null: break
            case .integer, .real: at += 8
            case .text, .blob:
                var length = 0
                for k in 0..<4 { length |= Int(b[at + k]) << (8 * k) }
                at += 4 + length
            }
        }
        return at
    }

    func values(at slot: Int) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        forEachValue(of: slot) { _, value in
            switch value {
            case .null: values.append(.null)
            case let .integer(v): values.append(v.databaseValue)
            case let .real(v): values.append(v.databaseValue)
            case let .text(bytes): values.append(String(decoding: bytes, as: UTF8.self).databaseValue)
            case let .blob(bytes): values.append(Data(bytes).databaseValue)
            }
        }
        return values
    }
}
