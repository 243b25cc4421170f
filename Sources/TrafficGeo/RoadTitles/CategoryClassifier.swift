import Foundation

/// Infers the kind of event from the words of a traffic message (German and English).
///
///     CategoryClassifier.classify("Achtung, Ihnen kommt ein Falschfahrer entgegen!") // .wrongWayDriver
///
/// Rules are tried in order of severity so that "Unfall, Stau" is an accident, not a queue.
public enum CategoryClassifier {
    private static let rules: [(IncidentCategory, [String])] = [
        (.wrongWayDriver, ["falschfahrer", "geisterfahrer", "wrong-way", "wrong way"]),
        (.accident, ["unfall", "unfälle", "verunglückt", "accident", "crash", "collision"]),
        (.closure, ["gesperrt", "sperrung", "vollsperrung", "closed", "closure"]),
        (.obstacle, ["gegenstände", "gegenstand", "hindernis", "ladung verloren", "verlorene ladung",
                     "tiere auf der fahrbahn", "debris", "obstacle", "obstruction"]),
        (.roadworks, ["baustelle", "bauarbeiten", "arbeitsstelle", "fahrbahnerneuerung", "roadworks", "road works", "construction"]),
        (.standstill, ["stillstand", "standstill", "stehender verkehr"]),
        (.queue, ["stau", "queue", "traffic jam", "congestion"]),
        (.slowTraffic, ["stockender verkehr", "zähfließend", "slow traffic", "angespannte verkehrslage"]),
        (.weather, ["glätte", "glatteis", "schnee", "nebel", "sturm", "aquaplaning", "ice", "fog", "snow"]),
        (.danger, ["gefahr", "achtung", "danger", "hazard", "warning"]),
    ]

    /// The rules with their words folded like the text they are matched against.
    private static let foldedRules: [(IncidentCategory, [String])] = rules.map { category, words in
        (category, words.map { TextFolding.fold($0).split(separator: " ").joined(separator: " ") })
    }

    public static func classify(_ texts: String?...) -> IncidentCategory? {
        // Folding makes "Gegenstaende" and "Gegenstände" one word; single spaces keep phrases matchable.
        let text = TextFolding.fold(texts.compactMap { $0 }.joined(separator: " ")).split(separator: " ").joined(separator: " ")
        guard !text.isEmpty else { return nil }
        // "Stau" must not match "Staufenberg": words match at word starts only.
        for (category, words) in foldedRules where words.contains(where: { containsWordStart(text, $0) }) {
            return category
        }
        return nil
    }

    private static func containsWordStart(_ text: String, _ word: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let r = text.range(of: word, range: searchRange) {
            if r.lowerBound == text.startIndex || !text[text.index(before: r.lowerBound)].isLetter {
                // "stau" must be a whole word or a compound start such as "Staugefahr", never "Staufenberg".
                if word == "stau" {
                    let rest = text[r.upperBound...].prefix(6)
                    if rest.first.map({ !$0.isLetter }) ?? true || rest.hasPrefix("gefahr") || rest.hasPrefix("ende") || rest.hasPrefix("laenge") {
                        return true
                    }
                } else {
                    return true
                }
            }
            searchRange = r.upperBound..<text.endIndex
        }
        return false
    }
}
