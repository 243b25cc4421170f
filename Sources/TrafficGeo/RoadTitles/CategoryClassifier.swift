import Foundation

/// Infers the kind of event from the words of a traffic message (German and English).
///
///     CategoryClassifier.classify("Achtung, Ihnen kommt ein Falschfahrer entgegen!") // .wrongWayDriver
///
/// Rules are tried in order of severity so that "Unfall, Stau" is an accident, not a queue. A
/// keyword matches at the start of a word (so compounds such as "Unfallstelle" count) in the
/// folded text (so "Gegenstaende" and "Gegenstände" are the same word).
public enum CategoryClassifier {
    private static let rules: [(IncidentCategory, [String])] = [
        (.wrongWayDriver, ["falschfahrer", "geisterfahrer", "wrong-way", "wrong way"]),
        (.accident, ["unfall", "unfälle", "verunglückt", "accident", "crash", "collision"]),
        (.closure, ["gesperrt", "sperrung", "vollsperrung", "closed", "closure"]),
        (.obstacle, ["gegenstände", "gegenstand", "hindernis", "ladung verloren", "verlorene ladung",
                     "tiere auf der fahrbahn", "debris", "obstacle", "obstruction"]),
        (.roadworks, ["baustelle", "bauarbeiten", "arbeitsstelle", "fahrbahnerneuerung", "roadworks", "road works", "construction"]),
        (.standstill, ["stillstand", "standstill", "stehender verkehr"]),
        // "stau" alone would match "Staufenberg": only the word and its traffic compounds.
        (.queue, ["stau ", "staugefahr", "stauende", "staulänge", "queue", "traffic jam", "congestion"]),
        (.slowTraffic, ["stockender verkehr", "zähfließend", "slow traffic", "angespannte verkehrslage"]),
        (.weather, ["glätte", "glatteis", "schnee", "nebel", "sturm", "aquaplaning", "ice", "fog", "snow"]),
        (.danger, ["gefahr", "achtung", "danger", "hazard", "warning"]),
    ]

    /// The rules with their keywords folded like the text, as bytes.
    private static let foldedRules: [(IncidentCategory, [[UInt8]])] = rules.map { category, words in
        (category, words.map { word in
            // A trailing space in a keyword means "the whole word": keep it after folding.
            Array((TextFolding.fold(word) + (word.hasSuffix(" ") ? " " : "")).utf8)
        })
    }

    public static func classify(_ texts: String?...) -> IncidentCategory? {
        let folded = TextFolding.fold(texts.compactMap { $0 }.joined(separator: " "))
        guard !folded.isEmpty else { return nil }
        // A trailing space lets whole-word keywords match at the very end too.
        let text = Array(folded.utf8) + [0x20]
        for (category, keywords) in foldedRules where keywords.contains(where: { matchesAtWordStart(text, $0) }) {
            return category
        }
        return nil
    }

    private static func matchesAtWordStart(_ text: [UInt8], _ keyword: [UInt8]) -> Bool {
        guard !keyword.isEmpty, keyword.count <= text.count else { return false }
        let first = keyword[0]
        var i = 0
        let last = text.count - keyword.count
        while i <= last {
            if text[i] == first, i == 0 || text[i - 1] == 0x20 {
                var j = 1
                while j < keyword.count, text[i + j] == keyword[j] { j += 1 }
                if j == keyword.count { return true }
            }
            i += 1
        }
        return false
    }
}
