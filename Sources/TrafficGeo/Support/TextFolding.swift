import Foundation
import GRDB

/// Folds text for search: lower case, umlauts spelled out (ä → ae, ß → ss), other diacritics
/// dropped, punctuation to spaces, so that "Koeln", "Köln" and "KÖLN" are one word.
public enum TextFolding {
    static let sqlFunctionName = "tg_fold"

    public static func fold(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.lowercased().unicodeScalars {
            switch scalar {
            case "ä": out += "ae"
            case "ö": out += "oe"
            case "ü": out += "ue"
            case "ß": out += "ss"
            default:
                if scalar.isASCII {
                    let c = Character(scalar)
                    out.append(c.isLetter || c.isNumber ? c : " ")
                } else {
                    let stripped = String(scalar).applyingTransform(.stripDiacritics, reverse: false) ?? String(scalar)
                    out += stripped.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil }) ? stripped : " "
                }
            }
        }
        return out
    }

    static func register(on db: Database) {
        db.add(function: DatabaseFunction(sqlFunctionName, argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]) else { return nil }
            return fold(text)
        })
    }
}
