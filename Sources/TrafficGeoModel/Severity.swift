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
