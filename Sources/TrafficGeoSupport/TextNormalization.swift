import Foundation

extension String {
    /// Collapses runs of whitespace (including newlines and NBSP) into single spaces and trims the ends.
    public var normalizedWhitespace: String {
        // Ingest normalises every title and summary, and nearly all are already normal: say so
        // from the bytes without building a copy.
        if utf8.withContiguousStorageIfAvailable(Self.isNormalizedWhitespace) == true { return self }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var pendingSpace = false
        for scalar in unicodeScalars {
            if Self.isTrimmable(scalar) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20); pendingSpace = false }
                out.append(contentsOf: scalar.utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when the UTF-8 text has no whitespace but single spaces between words. Conservative:
    /// the lead bytes of every non-ASCII whitespace scalar (U+0085, U+00A0, U+1680, U+2000–U+205F,
    /// U+3000 start with C2, E1, E2 or E3) send the text to the full check.
    private static func isNormalizedWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        whitespaceClass.withUnsafeBufferPointer { table in
            var afterSpace = true   // a leading space is not normal
            for byte in bytes {
                switch table[Int(byte)] {
                case 0: afterSpace = false
                case 1 where !afterSpace: afterSpace = true
                default: return false
                }
            }
            return !afterSpace || bytes.isEmpty
        }
    }

    /// Per byte for `isNormalizedWhitespace`: 0 a word byte, 1 a space, 2 anything that needs the full check.
    private static let whitespaceClass: [UInt8] = (0...255).map { byte in
        switch byte {
        case 0x20: 1
        case 0x09...0x0D, 0xC2, 0xE1, 0xE2, 0xE3: 2
        default: 0
        }
    }

    /// The string without leading and trailing whitespace or newlines. Like Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` without its UTF-16 round trip, and
    /// without a copy when there is nothing to trim (the usual case: readers call it per field).
    public var trimmed: String {
        // ASCII ends that are not white space: nothing to trim, found from two bytes.
        if let first = utf8.first, let last = utf8.last, first < 0x80, last < 0x80,
           !Self.isTrimmable(Unicode.Scalar(first)), !Self.isTrimmable(Unicode.Scalar(last)) {
            return self
        }
        let scalars = unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { return self }
        guard Self.isTrimmable(first) || Self.isTrimmable(last) else { return self }
        guard let start = scalars.firstIndex(where: { !Self.isTrimmable($0) }),
              let end = scalars.lastIndex(where: { !Self.isTrimmable($0) }) else { return "" }
        return String(scalars[start...end])
    }

    /// Whitespace as `trimmed` and `normalizedWhitespace` see it: an ASCII fast path, other
    /// scalars (NBSP, ideographic space, ...) by their Unicode property.
    @inline(__always)
    package static func isTrimmable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x80 ? scalar == " " || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    /// `nil` when the string is empty after trimming, else the trimmed, whitespace-normalised string.
    package var nonEmptyNormalized: String? {
        let s = normalizedWhitespace
        return s.isEmpty ? nil : s
    }
}
