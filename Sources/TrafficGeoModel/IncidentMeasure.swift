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
    public func value(of incident: Incident) -> Double? { number(incident.properties[property]) }

    /// A detail's text as the measure's number, nil when it says none. A count is a number with
    /// any word after it ("2", "2 lanes"). A delay is in minutes, its unit read, since feeds
    /// write every kind: "15", "15 min", "1 h" (60), "1 h 15 min" and "1h15" (75), "90 s" (1.5);
    /// a word that is no unit of time is no delay ("15 km", "about 15", "unknown"), never a
    /// number read past its unit. A range ("15-20", "15–20 min", "1-2 h", "15 to 20") counts as
    /// its upper end, so that a desk asking for delays of 20 minutes or more is shown the
    /// incident that may hold it up 20 minutes. Negative, non-finite or other texts ("1:30",
    /// "1e3") are no number.
    public func number(_ text: String?) -> Double? {
        guard let text = text?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var parts = [text]
        for separator in [" to ", "–", "—", "-"] where parts.count == 1 {
            let split = text.components(separatedBy: separator)
            if split.count == 2 { parts = split }
        }
        var ends: [(value: Double, unit: Double?)] = []
        for part in parts {
            guard let end = amount(part) else { return nil }
            ends.append(end)
        }
        // "1-2 h", "15-20 min": the unit the range ends with is every end's.
        if let factor = ends.last?.unit {
            for k in ends.indices where ends[k].unit == nil { ends[k].value *= factor }
        }
        return ends.map(\.value).max()
    }

    /// One end of a range: its number in the measure's unit, and the size of the first unit it
    /// named in that unit (nil: it named none; a count's word is 1).
    private func amount(_ text: String) -> (value: Double, unit: Double?)? {
        let amounts = Self.amounts(text)
        guard !amounts.isEmpty else { return nil }
        switch self {
        case .lanesRestricted:
            guard amounts.count == 1 else { return nil }
            return (amounts[0].number, amounts[0].unit == nil ? nil : 1)
        case .delayMinutes:
            guard amounts.count > 1 || amounts[0].unit != nil else { return (amounts[0].number, nil) }
            var total = 0.0, factors: [Double] = []
            for (k, a) in amounts.enumerated() {
                if let unit = a.unit {
                    guard let factor = Self.minutes(per: unit) else { return nil }
                    total += a.number * factor
                    factors.append(factor)
                } else if k == amounts.count - 1, factors.last == 60 {
                    total += a.number   // "1h15": minutes after hours
                } else {
                    return nil
                }
            }
            return (total, factors.first)
        }
    }

    /// The text as numbers each with the word after it ("1 h 15 min": (1, h), (15, min)); none
    /// when anything else is in it (a sign, a colon, a word before the first number).
    static func amounts(_ text: String) -> [(number: Double, unit: Substring?)] {
        var out: [(number: Double, unit: Substring?)] = []
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !digits.isEmpty, digits.filter({ $0 == "." }).count <= 1, digits.first != ".",
                  let number = Double(digits), number.isFinite else { return [] }
            rest = rest.dropFirst(digits.count).drop { $0 == " " }
            let word = rest.prefix { $0.isLetter || $0 == "'" }
            rest = rest.dropFirst(word.count)
            if !word.isEmpty, rest.first == "." { rest = rest.dropFirst() }   // "min.", "Std."
            rest = rest.drop { $0 == " " }
            out.append((number, word.isEmpty ? nil : word))
        }
        return out
    }

    /// How many minutes one of a unit of time is, in the languages road authorities publish in;
    /// nil for a word that is no such unit. (The one table of units: a comment's sentence,
    /// `StructuredComment`, is read with it too.)
    public static func minutes(per unit: Substring) -> Double? {
        let u = unit.lowercased()
        if u == "m" || u == "'" || u.hasPrefix("min") { return 1 }
        if ["h", "hr", "hrs", "hour", "hours", "std", "stunde", "stunden", "uur", "heure", "heures", "hora", "horas", "ora", "ore",
            "timme", "timmar", "tunti", "tuntia", "godz"].contains(u) { return 60 }
        if ["s", "sec", "secs", "second", "seconds", "sek", "sekunde", "sekunden", "seg", "segundo", "segundos", "seconde", "secondes",
            "secondi", "seconden"].contains(u) { return 1.0 / 60 }
        return nil
    }
}
