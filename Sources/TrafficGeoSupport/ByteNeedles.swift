/// A set of byte strings looked for in one pass over a text: each byte is compared only with the
/// needles that begin with it. Byte-exact (feeds write NFC text); needles that begin with an ASCII
/// byte, as all here do, start at a character boundary.
///
///     let words = ByteNeedles([" und ", ", "])
///     words.firstMatch(in: "Wenden und Krombach"[...])   // the index of " und "
package struct ByteNeedles: Sendable {
    /// Needles by their first byte (256 slots; most empty).
    private let byFirstByte: [[[UInt8]]]

    package init(_ needles: [String]) {
        var table = [[[UInt8]]](repeating: [], count: 256)
        for needle in needles where !needle.isEmpty {
            let bytes = Array(needle.utf8)
            table[Int(bytes[0])].append(bytes)
        }
        byFirstByte = table
    }

    /// Where the first needle starts in `s`, or nil.
    package func firstMatch(in s: Substring) -> String.Index? {
        var s = s
        let offset = s.withUTF8 { bytes -> Int? in
            for i in 0..<bytes.count {
                for needle in byFirstByte[Int(bytes[i])] where i + needle.count <= bytes.count {
                    var k = 1
                    while k < needle.count, bytes[i + k] == needle[k] { k += 1 }
                    if k == needle.count { return i }
                }
            }
            return nil
        }
        return offset.map { s.utf8.index(s.utf8.startIndex, offsetBy: $0) }
    }

    package func occurs(in s: Substring) -> Bool { firstMatch(in: s) != nil }
}

extension StringProtocol {
    /// Where `needle` first occurs, from `start` on, compared byte for byte in UTF-8: the same
    /// answer as Foundation's `range(of:)` for an exact search, without bridging to NSString
    /// (which was most of the time of reading a message's words).
    package func utf8Range(of needle: String, from start: Index? = nil) -> Range<Index>? {
        let n = Array(needle.utf8)
        guard let first = n.first else { return nil }
        let bytes = utf8
        var i = start ?? bytes.startIndex
        while i != bytes.endIndex {
            if bytes[i] == first {
                var j = i, k = 0
                while k < n.count, j != bytes.endIndex, bytes[j] == n[k] {
                    j = bytes.index(after: j)
                    k += 1
                }
                if k == n.count { return i..<j }
            }
            i = bytes.index(after: i)
        }
        return nil
    }

    /// Whether `needle` occurs, by UTF-8 bytes.
    package func utf8Contains(_ needle: String) -> Bool { utf8Range(of: needle) != nil }
}
