import Foundation

/// One scale of how bad an incident is, onto which the standards' values map: DATEX II
/// (`lowest` … `highest`), Open511 (`MINOR`, `MODERATE`, `MAJOR`) and the words of other feeds.
///
///     Severity(word: "MAJOR")    // .high
///     Severity(word: "highest")  // .highest
///     Severity(word: "unknown")  // nil
public enum Severity: Int, Sendable, CaseIterable, Comparable, Codable {
    case lowest = 0, low, medium, high, highest

    public init?(word: String) {
        let key = word.lowercased().filter { $0.isLetter }
        switch key {
        case "none", "lowest", "verylow", "negligible": self = .lowest
        case "low", "minor", "slight", "light": self = .low
        case "medium", "moderate", "average": self = .medium
        case "high", "major", "serious", "heavy": self = .high
        case "highest", "veryhigh", "severe", "critical", "extreme": self = .highest
        default: return nil
        }
    }

    /// A stored detail's word on the scale, as both stores' queries read it (`lower(severity) IN
    /// words(atLeast:)`): the words of `init(word:)` as feeds write them, lower case.
    public init?(stored text: String) {
        guard let severity = Self.storedWords[text.lowercased()] else { return nil }
        self = severity
    }

    /// Every stored word (lower case) on this step of the scale or above it.
    public static func words(atLeast lowest: Severity) -> [String] {
        storedWords.filter { $0.value >= lowest }.map(\.key).sorted()
    }

    private static let storedWords: [String: Severity] = {
        var table: [String: Severity] = [:]
        let steps: [(Severity, [String])] = [
            (.lowest, ["none", "lowest", "very low", "verylow", "very_low", "negligible"]),
            (.low, ["low", "minor", "slight", "light"]),
            (.medium, ["medium", "moderate", "average"]),
            (.high, ["high", "major", "serious", "heavy"]),
            (.highest, ["highest", "very high", "veryhigh", "very_high", "severe", "critical", "extreme"]),
        ]
        for (severity, words) in steps { for w in words { table[w] = severity } }
        return table
    }()

    public var name: String {
        switch self {
        case .lowest: "lowest"
        case .low: "low"
        case .medium: "medium"
        case .high: "high"
        case .highest: "highest"
        }
    }

    public static func < (a: Severity, b: Severity) -> Bool { a.rawValue < b.rawValue }
}
