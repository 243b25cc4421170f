import Foundation

/// Reads the timestamps feeds use: ISO 8601 / RFC 3339 (with or without fractional seconds and
/// offsets, date-only too) and RFC 822 / RFC 1123 as in RSS `pubDate`.
///
///     TimestampParser.parse("2009-04-18T21:58:35Z")          // 2009-04-18 21:58:35 UTC
///     TimestampParser.parse("Sat, 18 Apr 2009 21:58:35 GMT") // the same instant
///
/// Written by hand because Foundation's formatters are slow, locale-sensitive and each accepts
/// only one of these shapes; a feed mixes them.
public enum TimestampParser {
    public static func parse(_ text: String) -> Date? {
        var trimmed = text.trimmed
        guard !trimmed.isEmpty, trimmed.utf8.count < 64 else { return nil }
        // ISO 8601 over the string's own bytes (ingest reads one or two dates per entry).
        let iso = trimmed.withUTF8 { bytes -> Date?? in
            guard bytes.count >= 5, bytes[0...3].allSatisfy({ $0 >= 48 && $0 <= 57 }), bytes[4] == UInt8(ascii: "-") else { return .none }
            return .some(parseISO8601(bytes))
        }
        if let iso { return iso }
        return parseRFC822(trimmed)
    }

    /// A date field's text as `parse` reads it, or as a count of seconds (9–10 digits) or of
    /// milliseconds (12–13 digits) since 1970 (Unix time: what many CSV exports and JSON APIs
    /// write), between 1990 and 2100. Only for a field known to be a date: in other columns
    /// such a number is an id or a count.
    public static func parseDateField(_ text: String) -> Date? {
        if let date = parse(text) { return date }
        let digits = text.trimmed
        guard digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = Double(digits) else { return nil }
        let seconds: Double
        switch digits.utf8.count {
        case 9...10: seconds = value
        case 12...13: seconds = value / 1000
        default: return nil
        }
        // 1990-01-01 … 2100-01-01.
        guard (631_152_000...4_102_444_800).contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    // MARK: - ISO 8601

    private static func parseISO8601(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= b.count else { return nil }
            var value = 0
            for k in i..<(i + digits) {
                let c = b[k]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            i += digits
            return value
        }
        func expect(_ c: Unicode.Scalar) -> Bool {
            guard i < b.count, b[i] == UInt8(ascii: c) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offsetSeconds = 0
        if i < b.count {
            guard b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ") else { return nil }
            i += 1
            guard let h = number(2), expect(":"), let m = number(2) else { return nil }
            hour = h; minute = m
            if i < b.count, b[i] == UInt8(ascii: ":") {
                i += 1
                guard let s = number(2) else { return nil }
                second = s
                if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
                    i += 1
                    var scale = 0.1
                    let start = i
                    while i < b.count, b[i] >= 48, b[i] <= 57 {
                        fraction += Double(b[i] - 48) * scale
                        scale /= 10
                        i += 1
                    }
                    guard i > start else { return nil }
                }
            }
            if i < b.count {
                let c = b[i]
                if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
                    i += 1
                } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                    i += 1
                    guard let oh = number(2) else { return nil }
                    _ = expect(":")
                    let om = number(2) ?? 0
                    guard oh <= 23, om <= 59 else { return nil }
                    offsetSeconds = (oh * 3600 + om * 60) * (c == UInt8(ascii: "-") ? -1 : 1)
                } else {
                    return nil
                }
            }
            guard i == b.count else { return nil }
        }
        return makeDate(year: year, month: month, day: day, hour: hour, minute: minute,
                        second: second, fraction: fraction, offsetSeconds: offsetSeconds)
    }

    // MARK: - RFC 822

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0,
        "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
        "cet": 1, "cest": 2, "mez": 1, "mesz": 2, "bst": 1, "eet": 2, "eest": 3,
    ]

    private static func parseRFC822(_ text: String) -> Date? {
        // "Sat, 18 Apr 2009 21:58:35 +0000", "18 Apr 2009 21:58 GMT", weekday optional.
        var parts = text.replacingOccurrences(of: ",", with: " ").split(separator: " ").map { String($0) }
        if let first = parts.first, first.first?.isLetter == true { parts.removeFirst() }
        guard parts.count >= 4,
              let day = Int(parts[0]),
              let monthIndex = months.firstIndex(of: String(parts[1].lowercased().prefix(3))),
              var year = Int(parts[2]) else { return nil }
        if year < 100 { year += year < 50 ? 2000 : 1900 }
        let clock = parts[3].split(separator: ":").map { Int($0) }
        guard clock.count >= 2, clock.allSatisfy({ $0 != nil }) else { return nil }
        var offset = 0
        if parts.count >= 5 {
            let zone = parts[4]
            if let sign = zone.first, sign == "+" || sign == "-", zone.count == 5, let v = Int(zone.dropFirst()) {
                offset = ((v / 100) * 3600 + (v % 100) * 60) * (sign == "-" ? -1 : 1)
            } else if let hours = zones[zone.lowercased()] {
                offset = hours * 3600
            } else {
                return nil
            }
        }
        return makeDate(year: year, month: monthIndex + 1, day: day, hour: clock[0]!, minute: clock[1]!,
                        second: clock.count > 2 ? clock[2]! : 0, fraction: 0, offsetSeconds: offset)
    }

    // MARK: - Calendar arithmetic

    private static func makeDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int,
                                 fraction: Double, offsetSeconds: Int) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), day <= daysIn(month: month, year: year),
              (0...24).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        if hour == 24, minute != 0 || second != 0 || fraction != 0 { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// Formats as RFC 3339 in UTC, with milliseconds only when there are any.
    public static func format(_ date: Date) -> String {
        let t = date.timeIntervalSince1970
        var whole = t.rounded(.down)
        var millis = Int(((t - whole) * 1000).rounded())
        if millis == 1000 { whole += 1; millis = 0 }
        let total = Int(whole)
        let days = total >= 0 ? total / 86400 : (total - 86399) / 86400
        let secs = total - days * 86400
        let (y, m, d) = civilFromDays(days)
        // Digits by hand into the string's own bytes: String(format:) was a fifth of the time of
        // writing JSON output, and joining small strings most of the rest.
        guard (0...9999).contains(y) else {
            func digits(_ value: Int, _ width: Int) -> String {
                let text = String(value)
                return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
            }
            return digits(y, 4) + "-" + digits(m, 2) + "-" + digits(d, 2) + "T" + digits(secs / 3600, 2) + ":"
                + digits((secs % 3600) / 60, 2) + ":" + digits(secs % 60, 2) + (millis != 0 ? "." + digits(millis, 3) : "") + "Z"
        }
        return String(unsafeUninitializedCapacity: millis != 0 ? 24 : 20) { out in
            var i = 0
            func put(_ value: Int, _ width: Int) {
                var v = value
                var k = width - 1
                while k >= 0 {
                    out[i + k] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                    k -= 1
                }
                i += width
            }
            func put(_ c: Unicode.Scalar) {
                out[i] = UInt8(ascii: c)
                i += 1
            }
            put(y, 4); put("-"); put(m, 2); put("-"); put(d, 2); put("T")
            put(secs / 3600, 2); put(":"); put((secs % 3600) / 60, 2); put(":"); put(secs % 60, 2)
            if millis != 0 { put("."); put(millis, 3) }
            put("Z")
            return i
        }
    }

    /// The (year, month, day) of a day number since 1970-01-01 (the inverse of `daysFromCivil`).
    public static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
