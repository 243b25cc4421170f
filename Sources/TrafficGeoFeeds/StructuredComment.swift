import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// A comment written as `key : value` lines, the way National Highways writes its DATEX II
/// comments, and what the lines say:
///
///     TYPE : GDP
///     Event Location : The M1 southbound between J29A and J30
///     Event Reason : Congestion
///     Event Status : Currently Active
///     Return To Normal : Normal traffic conditions are expected between 14:15 and 14:30
///
/// Kept as the incident's details `location`, `reason`, `event_status` and `return_to_normal`
/// (`Incident.detailProperties`), and the location is the headline: "Queuing traffic – M1
/// southbound between J29A and J30" instead of "… – TYPE : GDP".
struct StructuredComment {
    /// The lines in order, keys as written.
    let fields: [(key: String, value: String)]

    /// Nil unless at least two of the comment's lines, and most of them, are `key : value`
    /// lines: prose with one colon ("Achtung: Stau") stays prose.
    init?(_ raw: String) {
        let lines = raw.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count >= 2, lines.count <= 64 else { return nil }
        var fields: [(key: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).normalizedWhitespace
            // A key is a few words of letters ("Event Location", "TYPE"), not a time ("14:15").
            let words = key.split(separator: " ")
            guard !words.isEmpty, words.count <= 4, key.count <= 40, key.allSatisfy({ $0.isLetter || $0 == " " || $0 == "/" || $0 == "-" }),
                  !value.isEmpty else { continue }
            fields.append((key, value))
        }
        guard fields.count >= 2, fields.count * 2 > lines.count else { return nil }
        self.fields = fields
    }

    /// The value of the first key that folds to one of `names` ("Event Location", "LOCATION").
    func value(_ names: Set<String>) -> String? {
        fields.first { names.contains($0.key.lowercased().normalizedWhitespace) }?.value
    }

    /// The details this comment gives, by the property names of `Incident.detailProperties`.
    var details: [String: String] {
        var out: [String: String] = [:]
        for (property, names) in Self.detailNames { if let v = value(names) { out[property] = String(v.prefix(512)) } }
        if let delay = value(["delay", "current delay", "expected delay", "delays"]).flatMap(Self.minutes) { out["delay_minutes"] = String(delay) }
        return out
    }

    /// A delay as people write it in a sentence: "30 minutes", "1 hour 15 mins", "up to 45 min",
    /// "2h", "90 seconds", "1 Std. 15 Min."; nil when it names no length of time ("Moderate").
    /// Each number followed by a unit of time counts, in the units `IncidentMeasure` reads a
    /// delay's detail in (one table of units); whole minutes, rounded.
    static func minutes(_ text: String) -> Int? {
        let words = text.lowercased().replacingOccurrences(of: "(\\d)([a-z])", with: "$1 $2", options: .regularExpression)
            .split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        var total = 0.0, found = false
        for (k, word) in words.enumerated() where k + 1 < words.count {
            guard let n = Int(word), n < 10_000, let factor = IncidentMeasure.minutes(per: words[k + 1]) else { continue }
            total += Double(n) * factor
            found = true
        }
        return found ? Int(total.rounded()) : nil
    }

    /// Where it is, as a headline: "The M1 southbound …" without its article.
    var place: String? {
        guard let location = value(forDetail: "location") else { return nil }
        for article in ["The ", "the "] where location.hasPrefix(article) { return String(location.dropFirst(article.count)) }
        return location
    }

    /// What the cause is ("Congestion", "Accident"), when short enough to name the kind.
    var reason: String? { value(forDetail: "reason").flatMap { $0.count <= 48 ? $0 : nil } }

    /// The value of a detail (`detailNames`) by its property name.
    private func value(forDetail property: String) -> String? {
        Self.detailNames.first { $0.0 == property }.flatMap { value($0.1) }
    }

    /// Keys seen in such comments for each detail (lower case).
    static let detailNames: [(String, Set<String>)] = [
        ("location", ["event location", "location"]),
        ("reason", ["event reason", "reason", "cause"]),
        ("event_status", ["event status", "status"]),
        ("return_to_normal", ["return to normal", "expected return to normal"]),
    ]
}
