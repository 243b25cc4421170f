import Foundation

/// Times as people type them, the same on the command line and in `serve`'s query parameters:
/// `now`, `today`, `yesterday` (UTC midnight), ISO 8601, or relative to now (`-2h`, `-30m`,
/// `-3d`, `-1w`, `+1h`).
public enum TimeExpression {
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if t == "now" { return now }
        // Calendar days in UTC, as every time trafficgeo prints.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        if t == "today" { return utc.startOfDay(for: now) }
        if t == "yesterday" { return utc.startOfDay(for: now).addingTimeInterval(-86400) }
        if let first = t.first, first == "-" || first == "+", let unit = t.last, let amount = Double(t.dropFirst().dropLast()),
           amount.isFinite {
            let seconds: Double
            switch unit {
            case "s": seconds = amount
            case "m": seconds = amount * 60
            case "h": seconds = amount * 3600
            case "d": seconds = amount * 86400
            case "w": seconds = amount * 7 * 86400
            default: return nil
            }
            return now.addingTimeInterval(first == "-" ? -seconds : seconds)
        }
        return TimestampParser.parse(text)
    }

    /// What to tell someone whose time was not understood.
    public static let accepted = "use 'now', 'today', 'yesterday', an ISO 8601 time such as 2025-05-19T04:06:00Z, or -2h / -3d / -1w"
}

/// Distances as people type them: `25km`, `500m`, `3mi`, `10 km`. The unit is required: a bare
/// `25` meant 25 m and answered "nothing within" to everyone who meant kilometres. The same
/// parser reads the command line's `--radius`, `serve`'s `radius=` and a watches file's
/// `"radius"`, so the same text means the same everywhere.
public enum DistanceExpression {
    public static func parse(_ text: String) -> Double? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("km", 1000), ("mi", 1609.344), ("m", 1)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            guard let value = PlainNumber.parse(t.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)) else { return nil }
            return value * factor
        }
        return nil
    }

    /// What to tell someone whose distance was not understood: a bare number is told its unit
    /// is missing.
    public static func explain(_ text: String) -> String {
        let t = text.trimmingCharacters(in: .whitespaces)
        if PlainNumber.parse(t) != nil { return "a distance needs its unit: \(t)m or \(t)km" }
        return accepted
    }

    /// What to tell someone whose distance was not understood.
    public static let accepted = "use a number with m, km or mi, such as 25km"
}

/// Lengths of time as people type them: `90s`, `2m`, `12h`, `7d`, `2w`, `500ms`. The unit is
/// required, as for distances: a bare `5` was seconds to one option and minutes to a reader.
/// The command line's `--every`, `--timeout`, `--keep-changes`, `--autobahn-timeout`, the
/// geocoder's `--timeout` and the conflation settings.
public enum DurationExpression {
    /// Seconds, or nil when the text is not a length of time (no unit, negative, not finite).
    public static func parse(_ text: String) -> Double? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 7 * 86400)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            if suffix == "s", t.hasSuffix("ms") { continue }
            guard let value = PlainNumber.parse(t.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
            return value * factor
        }
        return nil
    }

    /// What to tell someone whose length of time was not understood: a bare number is told its
    /// unit is missing.
    public static func explain(_ text: String) -> String {
        let t = text.trimmingCharacters(in: .whitespaces)
        if PlainNumber.parse(t) != nil { return "a length of time needs its unit: \(t)s or \(t)m" }
        return accepted
    }

    /// A length of time in the largest whole unit that fits: "7 days", "36 hours", "90 seconds".
    public static func words(_ seconds: Double) -> String {
        for (unit, size) in [("week", 7 * 86_400.0), ("day", 86_400), ("hour", 3600), ("minute", 60)]
        where seconds >= size && (seconds / size).rounded() == seconds / size {
            let n = Int(seconds / size)
            return "\(n) \(unit)\(n == 1 ? "" : "s")"
        }
        return "\(Int(seconds.rounded())) seconds"
    }

    /// The longest length of time taken: a century, so that milliseconds still fit an Int64.
    public static let longest = 100 * 366 * 86_400.0

    /// What to tell someone whose length of time was not understood.
    public static let accepted = "use a number with ms, s, m, h, d or w, such as 90s, 2m or 7d"
}

/// A number as people and clients write one: an optional sign, digits with at most one decimal
/// point. Not what `Double(String)` also takes — hex (`0x1p3`), `nan`, `inf`, exponents, or
/// text cut at a NUL byte (`50%00` reached strtod as "50") — so a value from a URL or a file
/// means one thing, finite, or is refused.
public enum PlainNumber {
    public static func parse(_ text: some StringProtocol) -> Double? {
        let body = text.hasPrefix("-") || text.hasPrefix("+") ? text.dropFirst() : text[...]
        guard !body.isEmpty, body.utf8.count <= 40, body.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }),
              body.utf8.filter({ $0 == 0x2E }).count <= 1, body != "." else { return nil }
        guard let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// A number as `parse` reads it back: plain digits, never an exponent (1e-05), a whole
    /// number without its ".0".
    public static func text(_ n: Double) -> String {
        if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
        let text = "\(n)"
        guard text.contains("e") else { return text }
        var digits = String(format: "%.12f", n)
        while digits.hasSuffix("0") { digits.removeLast() }
        return digits.hasSuffix(".") ? digits + "0" : digits
    }
}

/// Control characters that mark binary data rather than text: C0 controls other than the tab
/// (and, where a quoted field may span lines, other than line breaks), and DEL.
public enum BinaryText {
    public static func hasControlBytes(_ text: some StringProtocol, allowingLineBreaks: Bool = false) -> Bool {
        text.unicodeScalars.contains { s in
            s.value == 0x7F || (s.value < 0x20 && s != "\t" && !(allowingLineBreaks && (s == "\n" || s == "\r")))
        }
    }
}
