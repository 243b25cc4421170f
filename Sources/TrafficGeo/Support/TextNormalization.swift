import Foundation

extension String {
    /// Collapses runs of whitespace (including newlines and NBSP) into single spaces and trims the ends.
    public var normalizedWhitespace: String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        var wroteAny = false
        for scalar in unicodeScalars {
            // ASCII fast path; other scalars (NBSP, ideographic space, ...) by their Unicode property.
            let isSpace = scalar.value < 0x80
                ? scalar == " " || (0x09...0x0D).contains(scalar.value)
                : scalar.properties.isWhitespace
            if isSpace {
                pendingSpace = wroteAny
            } else {
                if pendingSpace { out.append(" "); pendingSpace = false }
                out.append(scalar)
                wroteAny = true
            }
        }
        return String(out)
    }

    /// `nil` when the string is empty after trimming, else the trimmed, whitespace-normalised string.
    var nonEmptyNormalized: String? {
        let s = normalizedWhitespace
        return s.isEmpty ? nil : s
    }
}

/// FNV-1a, 64 bit: a stable hash for change detection and synthetic ids (Swift's `Hasher` is
/// seeded per process, so it cannot be stored).
struct StableHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ text: String?) {
        if let text {
            for byte in text.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        // A separator that no UTF-8 text contains keeps ("ab", "c") apart from ("a", "bc").
        value = (value ^ 0xff) &* 0x0000_0100_0000_01b3
    }

    mutating func combine(_ number: Double?) {
        combine(number.map { String($0.bitPattern) })
    }

    var hex: String { String(value, radix: 16) }
    /// The value as a signed integer, which is what SQLite stores.
    var int64: Int64 { Int64(bitPattern: value) }
}
