import Foundation
import TrafficGeoSupport

/// A message's text as a subtitle: what happened first. Autobahn API messages begin with
/// boilerplate ("Beginn: 19.05.25 um 05:26 Uhr", "Angespannte Verkehrslage, seit 19.05.2025,
/// 05:26") and the direction twice ("Oldenburg -> Bremen – A28: Oldenburg -> Bremen, zwischen …"),
/// so a card cut to the screen showed times instead of the event. Those parts move to the end
/// (times in brackets) or go (the repeated direction); nothing else changes.
enum SubtitleText {
    static func eventFirst(_ text: String) -> String {
        guard text.contains("Beginn:") || text.contains("seit ") || text.contains(" – ") else { return text }
        var rest = text
        var times: [String] = []
        for pattern in boilerplate {
            let range = NSRange(rest.startIndex..., in: rest)
            let matches = pattern.matches(in: rest, range: range)
            for m in matches.reversed() {
                guard let r = Range(m.range, in: rest) else { continue }
                times.insert(String(rest[r]).normalizedWhitespace.trimmingCharacters(in: CharacterSet(charactersIn: " ,")), at: 0)
                rest.replaceSubrange(r, with: " ")
            }
        }
        // "X -> Y – A1: X -> Y, zwischen …": the leading direction is said again.
        if let dash = rest.range(of: " – ") {
            let head = rest[..<dash.lowerBound].trimmingCharacters(in: .whitespaces)
            if !head.isEmpty, rest[dash.upperBound...].contains(head) { rest = String(rest[dash.upperBound...]) }
        }
        rest = rest.normalizedWhitespace.trimmingCharacters(in: CharacterSet(charactersIn: " –-,"))
        rest = rest.replacingOccurrences(of: " – –", with: " –")
        guard !times.isEmpty else { return rest }
        return rest.isEmpty ? times.joined(separator: "; ") : rest + " (" + times.joined(separator: "; ") + ")"
    }

    private static let boilerplate: [NSRegularExpression] = [
        #"Zeitraum:\s*Beginn:\s*[\d.]+(\s*um\s*[\d:]+\s*Uhr)?(\s*Ende:\s*[\d.]+(\s*um\s*[\d:]+\s*Uhr)?)?"#,
        #"(?<!Zeitraum: )\bBeginn:\s*[\d.]+(\s*um\s*[\d:]+\s*Uhr)?"#,
        #"\bEnde:\s*[\d.]+(\s*um\s*[\d:]+\s*Uhr)?"#,
        #"Angespannte Verkehrslage,\s*seit\s*[\d.]+,?\s*[\d:]+( Uhr)?"#,
    ].map { try! NSRegularExpression(pattern: $0) }
}
