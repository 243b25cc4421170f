import Foundation
import TrafficGeoSupport

/// The dates of a CSV column as spreadsheets and exports write them, besides RFC 3339 and the
/// other forms `TimestampParser` reads: "23/10/2023", "04/02/2024 08:43:42 PM", "11.02.2024
/// 18:49", with the time in a column of its own ("fecha" and "hora").
///
/// Day or month first is decided once for the column, from its values: a first number above
/// 12 is a day, a second above 12 is a day; when every value could be either, a 12-hour clock
/// (AM/PM) writes the month first (the United States), else the day comes first (most of the
/// world, and dots: 11.02.2024). The time is read as UTC: a file that names no zone gives no other.
struct CSVDates: Sendable, Equatable {
    var dayFirst: Bool

    /// The column's order, from its sample values.
    init(sample: [String]) {
        var dayFirst: Bool?
        var twelveHour = false, dots = false
        for value in sample {
            guard let parts = Self.numericDate(value) else { continue }
            if parts.a > 12 { dayFirst = true; break }
            if parts.b > 12 { dayFirst = false; break }
            twelveHour = twelveHour || parts.twelveHour
            dots = dots || parts.separator == "."
        }
        self.dayFirst = dayFirst ?? (dots || !twelveHour)
    }

    init(dayFirst: Bool) { self.dayFirst = dayFirst }

    /// The value as the incident's readers take it: as given when it starts like RFC 3339
    /// ("2024-02-11…", read as before), else RFC 3339 (UTC); Unix seconds or milliseconds are
    /// dates too (`TimestampParser.parseDateField`); nil when it is no date.
    func normalized(_ text: String) -> String? {
        let head = Array(text.utf8.prefix(5))
        if head.count == 5, head[0...3].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), head[4] == UInt8(ascii: "-") { return text }
        // Unix time too ("1700000000", "1700000000000"): many exports write dates so.
        if let date = TimestampParser.parseDateField(text) { return TimestampParser.format(date) }
        if let iso = Self.yearFirstWithSlashes(text), let date = TimestampParser.parse(iso) { return TimestampParser.format(date) }
        guard let parts = Self.numericDate(text) else { return nil }
        let (day, month) = dayFirst ? (parts.a, parts.b) : (parts.b, parts.a)
        var year = parts.year
        if year < 100 { year += year < 70 ? 2000 : 1900 }
        var hour = parts.hour, minute = parts.minute, second = parts.second
        if parts.twelveHour {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (parts.pm ? 12 : 0)
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return TimestampParser.format(date)
    }

    /// Whether a value is a time of day alone ("18:49", "08:43:42 PM"): a column of its own.
    static func isClockTime(_ text: String) -> Bool {
        let t = text.trimmed
        return t.range(of: #"^\d{1,2}:\d{2}(:\d{2})?( ?[AaPp][Mm])?$"#, options: .regularExpression) != nil
    }

    /// Whether a value is a date without a time ("23/10/2023", "2023-10-23").
    static func isDateOnly(_ text: String) -> Bool {
        let t = text.trimmed
        if let parts = numericDate(t) { return !parts.hasTime }
        return t.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil
    }

    private static let numericPattern = try! NSRegularExpression(
        pattern: #"^\s*(\d{1,2})([/.\-])(\d{1,2})[/.\-](\d{4}|\d{2})(?:[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?\s*([AaPp][Mm])?)?\s*$"#)

    /// "dd/mm/yyyy[ hh:mm[:ss][ AM]]" in its numbers: a and b the first two (day or month).
    /// "2025/06/02 18:00:00+00" (GDAL's text for a date-time, and many exports') as RFC 3339.
    static func yearFirstWithSlashes(_ text: String) -> String? {
        let t = text.trimmed
        guard t.utf8.count >= 10, let m = yearFirstPattern.firstMatch(in: t, range: NSRange(t.startIndex..., in: t)) else { return nil }
        func group(_ k: Int) -> String? { Range(m.range(at: k), in: t).map { String(t[$0]) } }
        guard let y = group(1), let mo = group(2), let d = group(3) else { return nil }
        var iso = "\(y)-\(mo)-\(d)T\(group(4) ?? "00"):\(group(5) ?? "00"):\(group(6) ?? "00")"
        switch group(7) {
        case nil, "Z"?: iso += "Z"
        case let zone?:
            let digits = zone.dropFirst().filter(\.isNumber)
            iso += String(zone.prefix(1)) + String(digits.prefix(2)) + ":" + (digits.count >= 4 ? String(digits.suffix(2)) : "00")
        }
        return iso
    }

    private static let yearFirstPattern = try! NSRegularExpression(
        pattern: #"^(\d{4})/(\d{2})/(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)? ?(Z|[+-]\d{2}(?::?\d{2})?)?$"#)

    static func numericDate(_ text: String) -> (a: Int, b: Int, year: Int, hour: Int, minute: Int, second: Int, twelveHour: Bool, pm: Bool, hasTime: Bool, separator: Character)? {
        guard text.utf8.first.map({ $0 >= 0x30 && $0 <= 0x39 || $0 == 0x20 }) == true,
              let m = numericPattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        func group(_ k: Int) -> String? { Range(m.range(at: k), in: text).map { String(text[$0]) } }
        guard let a = group(1).flatMap({ Int($0) }), let b = group(3).flatMap({ Int($0) }), let year = group(4).flatMap({ Int($0) }),
              let separator = group(2)?.first else { return nil }
        let marker = group(8)?.lowercased()
        return (a, b, year, group(5).flatMap { Int($0) } ?? 0, group(6).flatMap { Int($0) } ?? 0, group(7).flatMap { Int($0) } ?? 0,
                marker != nil, marker == "pm", group(5) != nil, separator)
    }
}
