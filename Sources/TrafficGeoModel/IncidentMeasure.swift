import Foundation

/// A number an incident's details give, which a filter compares and both stores keep as a
/// number beside the detail's text (a column of its own, named `column`): the detail stays as
/// the feed wrote it ("15-20" is shown as such), and every store, the in-memory test and every
/// output read the number one way (`value(of:)`). Before, "15-20" was 15 to SQLite's `CAST`, an
/// error to PostgreSQL's `::int`, and nothing to Swift's `Int()`.
///
/// A new measure is a case here: the stores add its column (and fill it from the details already
/// stored) when they are opened, and a filter field asks it through `QueryField.measure`.
public enum IncidentMeasure: String, Sendable, CaseIterable, Hashable, Codable {
    /// How long the incident holds traffic up, in minutes (DATEX II's delay, a comment's
    /// "Delay : 15 minutes", a CSV column).
    case delayMinutes = "delay_minutes"
    /// How many lanes are closed or restricted (DATEX II's `numberOfLanesRestricted`, WZDx's
    /// closed travel lanes).
    case lanesRestricted = "lanes_restricted"

    /// The detail (`Incident.properties`) it is read from.
    public var property: String { rawValue }

    /// The column both stores keep it in.
    public var column: String { rawValue }

    /// The number the incident's detail says, nil when it gives none or no number.
    public func value(of incident: Incident) -> Double? { Self.number(incident.properties[property]) }

    /// A detail's text as a number: "15", "15.5", "15 min", "2 lanes"; a range ("15-20",
    /// "15–20", "15 to 20") counts as its upper end, so that a desk asking for delays of 20
    /// minutes or more is shown the incident that may hold it up 20 minutes. Negative, non-finite
    /// or wordy texts ("about 15", "unknown") are no number.
    public static func number(_ text: String?) -> Double? {
        guard var text = text?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        // A unit after the number: "15 min", "15min", "2 lanes".
        while let last = text.last, last.isLetter || last == "." { text.removeLast() }
        text = text.trimmingCharacters(in: .whitespaces)
        var parts: [Substring] = [Substring(text)]
        for separator in [" to ", "–", "—", "-"] where parts.count == 1 {
            let split = text.components(separatedBy: separator)
            if split.count == 2 { parts = split.map { Substring($0) } }
        }
        var most: Double?
        for part in parts {
            let piece = part.trimmingCharacters(in: .whitespaces)
            guard !piece.isEmpty, piece.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                  let value = Double(piece), value.isFinite, value >= 0 else { return nil }
            most = max(most ?? value, value)
        }
        return most
    }
}
