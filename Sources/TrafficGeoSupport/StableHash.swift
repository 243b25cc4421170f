/// FNV-1a, 64 bit: a stable hash for change detection and synthetic ids (Swift's `Hasher` is
/// seeded per process, so it cannot be stored).
package struct StableHash {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine(_ text: String?) {
        if let text {
            for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        // A separator that no UTF-8 text contains keeps ("ab", "c") apart from ("a", "bc").
        value = (value ^ 0xff) &* 0x0000_0100_0000_01b3
    }

    mutating func combine(_ number: Double?) {
        combine(number.map { String($0.bitPattern) })
    }

    /// Raw bytes, then `tag`, which says what kind of value they were (a stored column:
    /// `combine(column:)` in the SQLite store). Takes a buffer, not a generic sequence: called
    /// from another module for every column of every ingested row, a generic would not be
    /// specialised there.
    package mutating func combine(raw bytes: UnsafeRawBufferPointer, tag: UInt8) {
        for b in bytes { byte(b) }
        byte(tag)
    }

    @inline(__always)
    private mutating func byte(_ b: UInt8) { value = (value ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }

    package var hex: String { String(value, radix: 16) }
    /// The value as a signed integer, which is what SQLite stores.
    package var int64: Int64 { Int64(bitPattern: value) }
}
