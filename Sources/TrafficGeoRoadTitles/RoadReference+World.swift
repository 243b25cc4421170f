import Foundation

/// Road references of other countries' schemes, for a road a person types or a feed's road
/// field gives (not free text, where "S1" may be a train): each in its normal form.
///
///     | typed                                     | normal form |
///     |-------------------------------------------|-------------|
///     | I-25, I 25, I25, Interstate 25, IH 35     | I-25        |
///     | US-40, US 40, US Highway 40, U.S. 40      | US-40       |
///     | SR 7, State Route 7; SH 7, State Highway 7 | SR-7; SH-7 |
///     | CO-7, CO 7, CA Highway 1 (a state's code) | CO-7, CA-1  |
///     | County Road 12, CR 12                     | CR-12       |
///     | M1, A1(M), A404, B1234 (UK), M50, N7, R132 (Ireland), A7, N7, RN7, D906, RD906 (France), A2, N201, R0 (Netherlands, Belgium), SS1 (Italy), E40 | M1, A1(M), A404, …, N7, D906, SS1, E40 |
enum WorldRoads {
    static func normalize(_ text: String) -> String? {
        // Upper case, dots dropped (U.S.), runs of white space one space.
        var words = text.uppercased().replacingOccurrences(of: ".", with: "").split(whereSeparator: { $0.isWhitespace })
        // A direction after the road ("I-70 WB", "M1 northbound") is not part of it.
        if words.count > 1, let last = words.last, directions.contains(String(last)) { words.removeLast() }
        let t = words.joined(separator: " ")
        guard !t.isEmpty, t.utf8.count <= 40 else { return nil }
        for (pattern, make) in patterns {
            let range = NSRange(t.startIndex..., in: t)
            guard let m = pattern.firstMatch(in: t, range: range), m.range == range else { continue }
            func group(_ k: Int) -> String? { Range(m.range(at: k), in: t).map { String(t[$0]) } }
            if let made = make(group) { return made }
        }
        return nil
    }

    private static let directions: Set<String> = ["N", "S", "E", "W", "NB", "SB", "EB", "WB", "NORTH", "SOUTH", "EAST", "WEST",
                                                  "NORTHBOUND", "SOUTHBOUND", "EASTBOUND", "WESTBOUND"]

    /// A number without leading zeros and its suffix letter, lower case ("25a").
    private static func number(_ digits: String?, _ suffix: String?, zero: Bool = false) -> String? {
        guard let digits, let n = Int(digits), n > 0 || zero else { return nil }
        return String(n) + (suffix?.lowercased() ?? "")
    }

    private static let separator = #"(?: ?- ?| )?"#
    private static let tail = #"(\d{1,4})([A-Z])?"#
    private static let stateCodes = "AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC"

    private static func regex(_ pattern: String) -> NSRegularExpression { try! NSRegularExpression(pattern: "^" + pattern + "$") }

    /// Tried in order; the first whole match that makes a reference wins.
    private static let patterns: [(NSRegularExpression, @Sendable ((Int) -> String?) -> String?)] = [
        (regex("(?:I|IH|INTERSTATE)(?: HIGHWAY| HWY)?" + separator + tail), { g in number(g(1), g(2)).map { "I-" + $0 } }),
        (regex("(?:US|USA)(?: HIGHWAY| HWY| ROUTE| RTE)?" + separator + tail), { g in number(g(1), g(2)).map { "US-" + $0 } }),
        (regex("(?:SR|STATE ROUTE|STATE RTE)" + separator + tail), { g in number(g(1), g(2)).map { "SR-" + $0 } }),
        (regex("(?:SH|STATE HIGHWAY|STATE HWY)" + separator + tail), { g in number(g(1), g(2)).map { "SH-" + $0 } }),
        (regex("(?:CR|COUNTY ROAD|COUNTY RD|COUNTY ROUTE|CO RD)" + separator + tail), { g in number(g(1), g(2)).map { "CR-" + $0 } }),
        (regex("(" + stateCodes + ")(?: HIGHWAY| HWY| ROUTE| RTE)?" + separator + tail), { g in
            guard let state = g(1) else { return nil }
            return number(g(2), g(3)).map { state + "-" + $0 }
        }),
        // Europe: a class of one or two letters, the number, a suffix letter, UK's "(M)".
        (regex("(BAB|RN|RD|SS|ST|[ABDEKLMNRS])" + separator + #"(\d{1,4})([A-Z])?( ?\(M\))?"#), { g in
            // Belgium's ring road round Brussels is the R0.
            guard let raw = g(1), let n = number(g(2), g(3), zero: true) else { return nil }
            let roadClass = ["BAB": "A", "RN": "N", "RD": "D", "ST": "S"][raw] ?? raw
            return roadClass + n + (g(4) == nil ? "" : "(M)")
        }),
    ]
}
