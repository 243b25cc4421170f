import Foundation

/// Folds text for search: lower case, umlauts spelled out (ä → ae, ß → ss), other diacritics
/// dropped, punctuation to single spaces, so that "Koeln", "Köln" and "KÖLN" are one word.
///
///     TextFolding.fold("A4: Köln – Olpe")  // "a4 koeln olpe"
public enum TextFolding {

    public static func fold(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `fold` with umlauts as plain vowels, typed or spelled out: "Mülheim" and "Muelheim" →
    /// "mulheim", so that Köln, Koeln and Koln are one word (`loosen` of `fold`).
    public static func foldPlain(_ text: String) -> String {
        loosen(fold(text))
    }

    /// Folded text with the spelled-out umlauts ae, oe, ue made plain vowels, left to right as
    /// SQL's `replace` does (the PostGIS store computes it there from the folded column, and the
    /// two must agree). A search word matches a text when its fold is in the text's fold, or its
    /// loosened fold in the text's loosened fold: "koln" finds "Koeln" and "Köln", "koeln" finds "Koln".
    public static func loosen(_ folded: String) -> String {
        guard folded.utf8.contains(UInt8(ascii: "e")) else { return folded }
        // By bytes, one vowel after the other, left to right (Foundation's replacingOccurrences
        // did the same, bridged through NSString at a cost): "ae", "oe", "ue" are ASCII and never
        // part of a longer UTF-8 sequence.
        var bytes = Array(folded.utf8)
        for vowel in [UInt8(ascii: "a"), UInt8(ascii: "o"), UInt8(ascii: "u")] {
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var i = 0
            while i < bytes.count {
                out.append(bytes[i])
                i += bytes[i] == vowel && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "e") ? 2 : 1
            }
            bytes = out
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `loosen` in SQL over a folded column or expression (SQLite and PostgreSQL alike).
    public static func loosenSQL(_ folded: String) -> String {
        "replace(replace(replace(\(folded), 'ae', 'a'), 'oe', 'o'), 'ue', 'u')"
    }

    /// Each ASCII byte folded: letters lowered, digits kept, 0 for the rest (word separators).
    private static let asciiFolding: [UInt8] = (0..<128).map { b in
        switch UInt8(b) {
        case 0x41...0x5A: UInt8(b) + 0x20
        case 0x61...0x7A, 0x30...0x39: UInt8(b)
        default: 0
        }
    }

    /// Appends the folded words of `text` to `out` (bytes of folded text), a space before them
    /// when `out` already holds words: several texts fold into one buffer as if joined. True when
    /// the text was ASCII throughout.
    @discardableResult
    package static func append(_ text: String, to out: inout [UInt8]) -> Bool {
        var pendingSpace = !out.isEmpty
        var text = text
        let done = text.withUTF8 { bytes -> Bool in
            // ASCII, nearly every message: byte by byte, no scalar decoding. Letters lowered,
            // digits kept, everything else separates words. At most one byte out per byte in,
            // plus the space before the first word; the first non-ASCII byte sends the whole
            // text to the scalar loop below (what was written is taken back).
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: bytes.count + 1))
            let end = out.withUnsafeMutableBufferPointer { o -> Int? in
                var n = start
                var space = pendingSpace
                return asciiFolding.withUnsafeBufferPointer { table -> Int? in
                    for b in bytes {
                        guard b < 0x80 else { return nil }
                        let folded = table[Int(b)]
                        if folded == 0 { space = true; continue }
                        if space, n > 0 { o[n] = 0x20; n += 1 }
                        space = false
                        o[n] = folded
                        n += 1
                    }
                    return n
                }
            }
            out.removeSubrange((end ?? start)...)
            return end != nil
        }
        if done { return true }
        func emit(_ bytes: some Sequence<UInt8>) {
            if pendingSpace, !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(contentsOf: bytes)
        }
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x80 {
                let b = UInt8(v)
                switch b {
                case 0x41...0x5A: emit(CollectionOfOne(b + 0x20))
                case 0x61...0x7A, 0x30...0x39: emit(CollectionOfOne(b))
                default: pendingSpace = true
                }
                continue
            }
            switch scalar {
            case "ä", "Ä": emit("ae".utf8)
            case "ö", "Ö": emit("oe".utf8)
            case "ü", "Ü": emit("ue".utf8)
            case "ß", "ẞ": emit("ss".utf8)
            default:
                guard scalar.properties.isAlphabetic || scalar.properties.numericType != nil else {
                    pendingSpace = true
                    continue
                }
                let lowered = String(scalar).lowercased()
                let stripped = lowered.applyingTransform(.stripDiacritics, reverse: false) ?? lowered
                emit(stripped.utf8)
            }
        }
        return false
    }
}
