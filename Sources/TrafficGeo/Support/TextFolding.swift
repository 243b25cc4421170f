import Foundation
import GRDB

/// Folds text for search: lower case, umlauts spelled out (ä → ae, ß → ss), other diacritics
/// dropped, punctuation to single spaces, so that "Koeln", "Köln" and "KÖLN" are one word.
///
///     TextFolding.fold("A4: Köln – Olpe")  // "a4 koeln olpe"
public enum TextFolding {
    static let sqlFunctionName = "tg_fold"

    public static func fold(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        func emit(_ bytes: some Sequence<UInt8>) {
            if pendingSpace, !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(contentsOf: bytes)
        }
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x80 {
                // ASCII fast path: letters lowered, digits kept, everything else separates words.
                let b = UInt8(v)
                switch b {
                case 0x41...0x5A, 0x61...0x7A, 0x30...0x39:
                    if pendingSpace, !out.isEmpty { out.append(0x20) }
                    pendingSpace = false
                    out.append(b >= 0x41 && b <= 0x5A ? b + 0x20 : b)
                default:
                    pendingSpace = true
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
        return String(decoding: out, as: UTF8.self)
    }

    static func register(on db: Database) {
        db.add(function: DatabaseFunction(sqlFunctionName, argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return nil }
            return fold(text)
        })
    }
}
