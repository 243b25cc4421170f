import Foundation
import TrafficGeoSupport

/// When a report recurs inside its validity: on some weekdays, at some hours, from a first date
/// to a last, with exceptions on given dates (Open511's `recurring_schedules` and `exceptions`:
/// roadworks Monday to Friday 08:00–17:00 are not in effect on a Saturday or at night).
///
/// Kept as the detail `schedule` in one canonical JSON form (`text`), which the stores read
/// too: the SQLite store with this type (a SQL function), PostGIS with a PL/pgSQL function of
/// the same rules (`PostGISSchema`, migration 5). What a day holds, at local wall time in
/// `zone` (else at the fixed `offsetMinutes`):
///   - a date listed in `exceptions` is in effect only within its windows (none: not at all);
///   - any other date is in effect within a rule's window when the date is within the rule's
///     dates (`from`…`until`, inclusive) and its ISO weekday (1 Monday … 7 Sunday) is one of
///     the rule's;
///   - a window is `start ≤ time < end`; "24:00" is the day's end; a window whose end is not
///     after its start runs overnight into the next morning (22:00–05:00), as the day it
///     began on allows.
public struct RecurringSchedule: Sendable, Hashable {
    /// Minutes after local midnight, from `start` (inclusive) to `end` (exclusive; 1440 is the
    /// day's end). `end <= start`: overnight, to `end` the next day.
    public struct Window: Sendable, Hashable {
        public var start: Int
        public var end: Int

        public init?(start: Int, end: Int) {
            guard (0..<1440).contains(start), (0...1440).contains(end) else { return nil }
            self.start = start
            self.end = end
        }

        /// "08:00-17:00" (Open511's exception times; "24:00" allowed as an end).
        public init?(text: some StringProtocol) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = RecurringSchedule.minutes(parts[0]), let end = RecurringSchedule.minutes(parts[1]) else { return nil }
            self.init(start: start, end: end)
        }

        /// Only "HH:MM-HH:MM" with two digits each, as `text` writes it.
        init?(canonical: String) {
            let b = Array(canonical.utf8)
            guard b.count == 11, b[2] == 0x3A, b[5] == 0x2D, b[8] == 0x3A,
                  [0, 1, 3, 4, 6, 7, 9, 10].allSatisfy({ (0x30...0x39).contains(b[$0]) }) else { return nil }
            self.init(text: canonical)
        }

        public var overnight: Bool { end <= start }
        public var text: String { RecurringSchedule.clock(start) + "-" + RecurringSchedule.clock(end) }
        /// The whole day.
        public static let allDay = Window(start: 0, end: 1440)!
    }

    public struct Rule: Sendable, Hashable {
        /// "YYYY-MM-DD", the first date; `until`, the last (nil: no last date).
        public var from: String
        public var until: String?
        /// ISO weekdays, 1 Monday … 7 Sunday, ascending.
        public var days: [Int]
        public var window: Window

        public init(from: String, until: String? = nil, days: [Int] = Array(1...7), window: Window = .allDay) {
            self.from = from
            self.until = until
            self.days = Array(Set(days.filter { (1...7).contains($0) })).sorted()
            self.window = window
        }
    }

    /// An IANA time zone ("America/Montreal") that daylight saving follows, where the feed names
    /// one Foundation knows; else the fixed offset.
    public var zone: String?
    public var offsetMinutes: Int
    public var rules: [Rule]
    /// Dates ("YYYY-MM-DD") whose windows replace the rules' (empty: not in effect that day).
    public var exceptions: [String: [Window]]

    public init(zone: String? = nil, offsetMinutes: Int = 0, rules: [Rule], exceptions: [String: [Window]] = [:]) {
        self.zone = zone.flatMap { TimeZone(identifier: $0) == nil ? nil : $0 }
        self.offsetMinutes = offsetMinutes
        // The same rule twice says nothing more (a feed that repeats one rule for each week).
        var seen = Set<Rule>()
        self.rules = rules.filter { seen.insert($0).inserted }
        self.exceptions = exceptions
    }

    /// The detail it is kept under.
    public static let property = "schedule"
    /// How many rules and exceptions one schedule keeps: a year of excepted days, or of
    /// one-day rules, fits; a hostile list is cut there. The PostGIS function reads as many
    /// rules (`PostGISSchema.inScheduleFunction`, a test checks the two agree).
    public static let maxEntries = 1_000

    // MARK: - In effect

    /// Whether the schedule holds at `t` (what `--active-at` adds to the report's validity).
    public func isInEffect(at t: Date) -> Bool {
        let local = localSeconds(t)
        let day = Int((local / 86_400).rounded(.down))
        let seconds = local - Double(day) * 86_400
        if holds(day: day, seconds: seconds) { return true }
        // The overnight windows of the day before, as that day allows them.
        let before = day - 1
        guard exceptions[Self.dateText(before)] == nil else { return false }
        return rules.contains { $0.window.overnight && applies($0, on: before) && seconds < Double($0.window.end * 60) }
    }

    private func holds(day: Int, seconds: Double) -> Bool {
        func within(_ w: Window) -> Bool {
            seconds >= Double(w.start * 60) && (w.overnight || seconds < Double(w.end * 60))
        }
        if let windows = exceptions[Self.dateText(day)] { return windows.contains(where: within) }
        return rules.contains { applies($0, on: day) && within($0.window) }
    }

    private func applies(_ rule: Rule, on day: Int) -> Bool {
        let date = Self.dateText(day)
        return rule.from <= date && (rule.until.map { date <= $0 } ?? true) && rule.days.contains(Self.isoWeekday(day))
    }

    /// Local wall time at `t`, in seconds since 1970-01-01T00:00 local.
    func localSeconds(_ t: Date) -> Double {
        t.timeIntervalSince1970 + Double(offsetSeconds(at: t))
    }

    private func offsetSeconds(at t: Date) -> Int {
        zone.flatMap(TimeZone.init(identifier:))?.secondsFromGMT(for: t) ?? offsetMinutes * 60
    }

    /// The instant a local wall time (seconds since 1970-01-01T00:00 local) is.
    func instant(localSeconds local: Double) -> Date {
        let wall = Date(timeIntervalSince1970: local)
        return zone.flatMap(TimeZone.init(identifier:))?.instant(wallClock: wall) ?? wall.addingTimeInterval(-Double(offsetMinutes * 60))
    }

    // MARK: - Its span

    /// When it is first in effect: the earliest rule's first date at its window's start, or an
    /// earlier exception's first window. A start, not a promise: the first date's weekday may
    /// not be one of the rule's.
    public var firstStart: Date? {
        var starts = rules.compactMap { r in Self.dayNumber(r.from).map { Double($0) * 86_400 + Double(r.window.start * 60) } }
        starts += exceptions.compactMap { date, windows in
            Self.dayNumber(date).flatMap { d in windows.map(\.start).min().map { Double(d) * 86_400 + Double($0 * 60) } }
        }
        return starts.min().map { instant(localSeconds: $0) }
    }

    /// When it is last in effect, if every rule has a last date: the latest window's end (the next
    /// morning for an overnight one), or a later exception's.
    public var lastEnd: Date? {
        var ends: [Double] = []
        for r in rules {
            guard let until = r.until, let d = Self.dayNumber(until) else { return nil }
            ends.append(Double(r.window.overnight ? d + 1 : d) * 86_400 + Double(r.window.end * 60))
        }
        for (date, windows) in exceptions {
            guard let d = Self.dayNumber(date) else { continue }
            ends += windows.map { Double($0.overnight ? d + 1 : d) * 86_400 + Double($0.end * 60) }
        }
        return ends.max().map { instant(localSeconds: $0) }
    }

    // MARK: - Text

    /// The canonical form the stores keep: keys sorted, times as "HH:MM".
    public var text: String {
        var object: [String: Any] = [
            "offset": offsetMinutes,
            "rules": rules.map { r -> [String: Any] in
                var o: [String: Any] = ["from": r.from, "days": r.days, "times": r.window.text]
                if let until = r.until { o["until"] = until }
                return o
            },
        ]
        if let zone { object["zone"] = zone }
        if !exceptions.isEmpty { object["exceptions"] = exceptions.mapValues { $0.map(\.text) } }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The canonical form read back, exactly as `text` writes it (the PostGIS function accepts
    /// the same: two-digit clock times, real dates, whole numbers); nil for anything else, such
    /// as an older store's raw text or a CSV column of that name, which then constrains nothing.
    public init?(text: String) {
        guard text.hasPrefix("{"), text.utf8.count <= 64 << 10,
              let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let rules = object["rules"] as? [[String: Any]], let offset = object["offset"] as? Int else { return nil }
        var parsed: [Rule] = []
        for r in rules.prefix(Self.maxEntries) {
            guard let from = r["from"] as? String, Self.dayNumber(from) != nil,
                  let window = (r["times"] as? String).flatMap(Window.init(canonical:)), let days = r["days"] as? [Any] else { return nil }
            var until: String?
            if let value = r["until"] {
                guard let date = value as? String, Self.dayNumber(date) != nil else { return nil }
                until = date
            }
            parsed.append(Rule(from: from, until: until, days: days.compactMap { $0 as? Int }, window: window))
        }
        var exceptions: [String: [Window]] = [:]
        for (date, times) in (object["exceptions"] as? [String: Any] ?? [:]) {
            guard Self.dayNumber(date) != nil, let times = times as? [Any] else { return nil }
            exceptions[date] = times.compactMap { ($0 as? String).flatMap(Window.init(canonical:)) }
        }
        self.init(zone: object["zone"] as? String, offsetMinutes: offset, rules: parsed, exceptions: exceptions)
    }

    /// A whole JSON number (or a numeral, as some feeds write weekdays) as an integer; 1.5 is none.
    public static func integer(_ value: Any) -> Int? {
        if let i = value as? Int { return i }
        if let n = value as? NSNumber, let i = Int(exactly: n.doubleValue) { return i }
        return (value as? String).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// ISO weekdays from what feeds write: 1 … 7, "3", "1,2,3", "Mon", "monday" (English).
    /// What is none of these is left out.
    public static func weekdays(_ values: [Any]) -> [Int] {
        values.flatMap { value -> [Int] in
            if let n = integer(value) { return (1...7).contains(n) ? [n] : [] }
            guard let text = value as? String else { return [] }
            return text.split(whereSeparator: { $0 == "," || $0 == " " }).compactMap { part in
                if let n = Int(part), (1...7).contains(n) { return n }
                // "mon", "mond", "monday": three letters at least, of the day's name.
                let word = part.lowercased()
                guard word.count >= 3, let i = names.firstIndex(of: String(word.prefix(3))), fullNames[i].hasPrefix(word) else { return nil }
                return i + 1
            }
        }
    }

    private static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let fullNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// In a person's words: "Mon–Fri 08:00–17:00 from 2013-05-01 to 2013-06-30; not 2013-06-24".
    public var words: String {
        var parts = rules.map { r -> String in
            let days = Self.dayWords(r.days)
            let hours = r.window == .allDay ? "all day" : Self.clock(r.window.start) + "–" + Self.clock(r.window.end)
            return [days, hours, "from \(r.from)", r.until.map { "to \($0)" }].compactMap { $0 }.joined(separator: " ")
        }
        for (date, windows) in exceptions.sorted(by: { $0.key < $1.key }) {
            parts.append(windows.isEmpty ? "not \(date)" : "\(date) only " + windows.map { Self.clock($0.start) + "–" + Self.clock($0.end) }.joined(separator: ", "))
        }
        return parts.joined(separator: "; ") + (zone.map { " (\($0) time)" } ?? "")
    }

    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// "daily", "Mon–Fri", "Sat, Sun".
    static func dayWords(_ days: [Int]) -> String? {
        if days == Array(1...7) { return "daily" }
        if days.count >= 3, days.last! - days.first! == days.count - 1 { return dayNames[days.first! - 1] + "–" + dayNames[days.last! - 1] }
        return days.map { dayNames[$0 - 1] }.joined(separator: ", ")
    }

    // MARK: - Dates and clock times

    /// "HH:MM" (or "HH:MM:SS", seconds dropped) as minutes after midnight; "24:00" is 1440.
    public static func minutes(_ text: some StringProtocol) -> Int? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
              let h = Int(parts[0]), let m = Int(parts[1]), (0...59).contains(m), (0...24).contains(h), h < 24 || m == 0 else { return nil }
        return h * 60 + m
    }

    static func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    /// Days since 1970-01-01 of "YYYY-MM-DD" (proleptic Gregorian), nil if it is not a date.
    public static func dayNumber(_ text: some StringProtocol) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), (1...31).contains(d) else { return nil }
        let day = TimestampParser.daysFromCivil(year: y, month: m, day: d)
        return dateText(day) == String(text) ? day : nil     // 2013-02-30 is no date
    }

    /// "YYYY-MM-DD" of a day number.
    public static func dateText(_ day: Int) -> String {
        let (y, m, d) = TimestampParser.civilFromDays(day)
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    /// 1 Monday … 7 Sunday (1970-01-01 was a Thursday).
    static func isoWeekday(_ day: Int) -> Int { ((day + 3) % 7 + 7) % 7 + 1 }
}

extension Incident {
    /// Its recurring schedule (the `schedule` detail in `RecurringSchedule`'s form), if any.
    public var schedule: RecurringSchedule? {
        properties[RecurringSchedule.property].flatMap { RecurringSchedule(text: $0) }
    }
}

extension TimeZone {
    /// The instant that a wall-clock time here is, given as that time read as UTC: 08:00 in
    /// Montréal in July is 12:00 UTC: the offset is the one in force at that instant.
    public func instant(wallClock wall: Date) -> Date {
        let guess = wall.addingTimeInterval(-Double(secondsFromGMT(for: wall)))
        return wall.addingTimeInterval(-Double(secondsFromGMT(for: guess)))
    }
}
