import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Conditions every query accepts: time, road, category and words. A store turns them into its
/// query language with bound parameters only, never string-spliced user input
/// (`IncidentFilter+SQL` for SQLite).
public struct IncidentFilter: Sendable, Equatable {
    /// In effect at this instant: begun by t (`IncidentFilter.began(_:by:)`), t < expires, not
    /// ended by t (a missing bound does not exclude), without an end heard of within
    /// `unconfirmedAfter` before t (`isUnconfirmed`), and within its recurring schedule's days
    /// and hours if it has one (`isOffSchedule`).
    public var activeAt: Date?
    /// How long a report without an end stays in effect after it was last heard of (its update,
    /// else when it was first read, or a snapshot of its feed that listed it); nil: for ever.
    /// `--unconfirmed-after`, `unconfirmed-after=`; `defaultUnconfirmedAfter` unless given.
    public var unconfirmedAfter: TimeInterval? = IncidentFilter.defaultUnconfirmedAfter
    /// Updated at or after.
    public var since: Date?
    /// Updated before.
    public var until: Date?
    /// Normalised road references (A4), each perhaps with the country the feed names
    /// ("fr:A7", `RoadCondition`); any of them matches, on an incident's road or its other roads.
    public var roads: [String] = []
    public var categories: [IncidentCategory] = []
    /// Every word must occur in the title, summary or road (folded: case, diacritics, umlauts).
    public var words: [String] = []
    public var source: String?
    /// Geocoded incidents placed at least this surely (positions a feed gave always pass).
    public var minConfidence: Double?
    /// Geocoded incidents of these precisions (positions a feed gave always pass).
    public var precisions: [GeocodePrecision] = []
    /// At least this severe (`Severity(stored:)` of the `severity` detail); incidents whose feed
    /// gives no severity do not pass.
    public var minSeverity: Severity?
    /// Answer with the reports the feeds gave (each naming its event) instead of the events they
    /// make (docs/conflation.md): `--reports`, `reports=true`.
    public var reports = false
    /// At least this much of each measure (`IncidentMeasure.value(of:)`, in its unit: a delay in
    /// minutes); incidents whose feed gives none do not pass. Each is a filter field's
    /// (`QueryField.measure`): `--min-delay 10m` is 10 for `delayMinutes`.
    public var minimums: [IncidentMeasure: Double] = [:]

    public init(activeAt: Date? = nil, since: Date? = nil, until: Date? = nil, road: String? = nil, roads: [String] = [],
                categories: [IncidentCategory] = [], search: String? = nil, source: String? = nil) {
        self.activeAt = activeAt
        self.since = since
        self.until = until
        self.roads = (road.map { [$0] } ?? []) + roads
        self.roads = self.roads.map { RoadCondition($0)?.text ?? $0 }
        self.categories = categories
        self.words = search.map(Self.searchWords) ?? []
        self.source = source
    }

    public var isEmpty: Bool { self == IncidentFilter() }

    /// The folded words a search matches, each in the text's fold. A road reference is one
    /// word in its normal form, folded ("I-25", "I 25", "i25" and "Interstate 25" are "i 25";
    /// "A1(M)" is "a1 m"): folding "I-25" word by word gave "i" and "25", and "i" is in every
    /// text. A word is a run of the search's own words, so "Koeln Olpe" is two.
    public static func searchWords(_ search: String) -> [String] {
        let tokens = search.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        var words: [String] = []
        var i = 0
        while i < tokens.count {
            if let found = RoadReference.leadingReference(in: tokens[i...]) {
                words.append(TextFolding.fold(found.road))
                i += found.count
            } else {
                words += TextFolding.fold(tokens[i]).split(separator: " ").map(String.init)
                i += 1
            }
        }
        return words.filter { !$0.isEmpty }
    }

    /// The most words a search may hold, and its longest text: every word is a scan of every
    /// row's text, and SQLite refuses a deep enough expression ("Expression tree is too large").
    public static let maxWords = 16
    public static let maxSearchBytes = 1_000
}

/// A road a filter asks for: a reference in its normal form, and the country the feed must name
/// if it names one ("fr:A7" is A7 in France; "A7" is A7 anywhere).
public struct RoadCondition: Sendable, Equatable {
    public var road: String
    /// ISO 3166 alpha-2, lower case.
    public var country: String?
    /// A road by its name ("Sprain Brook State Pkwy", "Highway 401"), not a reference: matched
    /// whatever the case of its letters (`nameKey`), on an incident's road and its other roads.
    public var isName = false

    /// "A7", "a 7", "FR:A7", "fr:RN7"; nil when the road is not a road reference.
    public init?(_ text: String) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if let colon = body.firstIndex(of: ":"), body.distance(from: body.startIndex, to: colon) == 2,
           body[..<colon].allSatisfy({ $0.isASCII && $0.isLetter }) {
            let code = body[..<colon].lowercased()
            guard Self.countries.contains(code) else { return nil }
            country = code
            body = body[body.index(after: colon)...]
        }
        guard let road = RoadReference.normalize(String(body)) else { return nil }
        self.road = road
    }

    /// A road by the name a feed gives it where that holds no reference the grammar knows
    /// ("Sprain Brook State Pkwy", "Merritt Parkway", "Highway 401", "Hauptstraße", "F22"):
    /// spaces collapsed, matched whatever the case (the names a feed's road field gives are kept
    /// so: `RoadReference.roads(inField:)`). Every road the tool shows must be one a filter
    /// takes, so any name of letters, digits and the punctuation of names is; the rest (";",
    /// quotes, more than 80 characters) is refused.
    public init?(name text: String) {
        let words = text.split(whereSeparator: \.isWhitespace)
        let name = words.joined(separator: " ")
        guard !words.isEmpty, name.count <= 80, name.contains(where: \.isLetter),
              name.allSatisfy({ $0.isLetter || $0.isNumber || " -./()'&".contains($0) }) else { return nil }
        self.init(road: name)
        isName = true
    }

    /// ISO 3166 alpha-2 codes, lower case (Foundation's list of regions).
    static let countries: Set<String> = Set(Locale.Region.isoRegions.map { $0.identifier.lowercased() }.filter { $0.count == 2 })

    public init(road: String, country: String? = nil) {
        self.road = road
        self.country = country
    }

    /// The conditions of a filter's `roads` (a text that is no reference is a road named so, in
    /// each of its spellings: `RoadNameSpellings`).
    /// A reference brings its equivalents (`RoadReference.equivalents`: "SR-1" is any state's
    /// route 1, "Highway 14" BC-14 too), each a condition of its own.
    public static func of(_ roads: [String]) -> [RoadCondition] {
        roads.flatMap { text -> [RoadCondition] in
            // A name brings its other spellings ("Park Avenue": "PARK AVE"), each a condition of its own.
            guard let reference = RoadCondition(text) else {
                guard let name = RoadCondition(name: text) else { return [RoadCondition(road: text)] }
                return RoadNameSpellings.of(name.road).compactMap { RoadCondition(name: $0) }
            }
            return RoadReference.equivalents(reference.road).map { RoadCondition(road: $0, country: reference.country) }
        }
    }

    /// A name as both stores compare it: ASCII letters in lower case, nothing else changed
    /// (SQLite's `lower` and the PostGIS store's `translate` do exactly this, so the in-memory
    /// test, SQLite and PostGIS agree on every text).
    public static func nameKey(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether an incident is on this road: a reference exactly (its road or one of its other
    /// roads), a name whatever the case; in the country asked, if the feed names one.
    public func matches(_ incident: Incident) -> Bool {
        guard isName else { return incident.isOn(road: road, country: country) }
        let key = Self.nameKey(road)
        guard incident.road.map(Self.nameKey) == key || incident.otherRoads.contains(where: { Self.nameKey($0) == key }) else { return false }
        guard let country, let own = incident.properties[Incident.countryProperty] else { return true }
        return own == country
    }

    /// As a filter keeps it: "fr:A7", or "A7".
    public var text: String { country.map { "\($0):\(road)" } ?? road }
}

/// When an incident is in effect: from its start to its end, as the standards define it.
extension IncidentFilter {
    /// The start is the feed's own (DATEX II `validFrom` / `overallStartTime`, WZDx `start_date`,
    /// an Open511 schedule, kept as the detail `valid_from`); a report that gives none began by
    /// its last update. A DATEX II record updated after it started is in effect from its start,
    /// and planned works updated today but starting next week are not in effect today.
    /// The start counts in whole seconds (`startSeconds`): the SQLite store keeps it so in a
    /// column, PostGIS compares the detail's first `startTextLength` characters as text, which
    /// is the same order, so that the stores and this agree.
    public static func began(_ incident: Incident, by t: Date) -> Bool {
        if let start = startSeconds(incident) { return start <= t.timeIntervalSince1970 }
        guard let updated = incident.updated?.timeIntervalSince1970 else { return true }
        return updated <= t.timeIntervalSince1970
    }

    /// A stored `valid_from` cut to whole seconds ("2025-08-14T05:00:00"), or nil if it is not
    /// in the form trafficgeo writes (`TimestampParser.format`).
    public static func startText(_ stored: String) -> String? {
        // The stores' test: GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*'.
        let bytes = Array(stored.utf8.prefix(startTextLength))
        func digits(_ r: Range<Int>) -> Bool { bytes[r].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        guard bytes.count >= 11, digits(0..<4), bytes[4] == 0x2D, digits(5..<7), bytes[7] == 0x2D, digits(8..<10), bytes[10] == 0x54 else {
            return nil
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The start `began` compares, in whole seconds since 1970 (what the SQLite store keeps in
    /// its `valid_from` column; whole seconds compare as the start texts do).
    public static func startSeconds(_ incident: Incident) -> Double? {
        guard let text = incident.properties["valid_from"], startText(text) != nil, let date = TimestampParser.parse(text) else { return nil }
        return date.timeIntervalSince1970.rounded(.down)
    }

    /// A week: long enough that a report of a feed read once a day, or over a weekend, stays in
    /// effect; short enough that the two-year-old warnings of a file read once are not "active
    /// now". docs/feeds.md says why.
    public static let defaultUnconfirmedAfter: TimeInterval = 7 * 86_400

    /// The limit an answer's `state` uses while it is written: the question's own
    /// `unconfirmedAfter` (the command line and `serve` set it around writing their answer), so
    /// that `--unconfirmed-after never` does not print "unconfirmed" beside what it asked for.
    @TaskLocal public static var answerUnconfirmedAfter: TimeInterval? = IncidentFilter.defaultUnconfirmedAfter

    /// When the report was last heard of: its feed's update time (else when trafficgeo first
    /// read it), or its own start if later (works announced weeks ahead are news when they
    /// begin), or later still the last snapshot of its feed that listed it
    /// (`StoredIncident.listedAt`). In seconds, as the stores compare it.
    public static func lastHeardSeconds(_ stored: StoredIncident) -> Double {
        var heard = (stored.incident.updated ?? stored.firstSeen).timeIntervalSince1970
        if let start = startSeconds(stored.incident) { heard = max(heard, start) }
        if let listed = stored.listedAt?.timeIntervalSince1970 { heard = max(heard, listed) }
        return heard
    }

    public static func lastHeard(_ stored: StoredIncident) -> Date { Date(timeIntervalSince1970: lastHeardSeconds(stored)) }

    /// Whether a report with no end (no expiry, not ended) has gone unheard of for longer than
    /// `after` at `t`: a file read once that gives no end does not stay "in effect" for ever.
    /// Such a report is not in effect at t; its state says `unconfirmed` and why.
    public static func isUnconfirmed(_ stored: StoredIncident, at t: Date, after: TimeInterval?) -> Bool {
        guard let after, stored.incident.expires == nil, stored.ended == nil else { return false }
        return lastHeardSeconds(stored) < t.timeIntervalSince1970 - after
    }

    /// Whether the report has a recurring schedule (Open511's weekdays, daily hours and
    /// exceptions: `RecurringSchedule`) that does not hold at `t`: between its windows it is not
    /// in effect, though within its dates (its state says "upcoming": it resumes later).
    public static func isOffSchedule(_ incident: Incident, at t: Date) -> Bool {
        guard let schedule = incident.schedule else { return false }
        return !schedule.isInEffect(at: t)
    }

    /// `StoredIncident.listedAt` in SQL, for the table aliased `i`, the same text in both stores
    /// (SQLite and PostgreSQL read it alike): for a row with no end, the
    /// last snapshot read of its source, or for an event's row the latest of its open reports'
    /// sources (through the event index). NULL for rows with an end, so a query pays nothing
    /// for them.
    package static let listedAtSQL = """
        CASE WHEN i.expires IS NULL AND i.ended IS NULL THEN
          CASE i.role WHEN 2 THEN (SELECT max(s.last_snapshot) FROM incidents r JOIN sources s ON s.id = r.source_id
                                   WHERE r.event_id = i.id AND r.ended IS NULL)
          ELSE (SELECT last_snapshot FROM sources WHERE id = i.source_id) END
        END
        """

    /// An instant as a stored start is compared with it.
    public static func startText(of date: Date) -> String { String(TimestampParser.format(date).prefix(startTextLength)) }

    /// "YYYY-MM-DDTHH:MM:SS".
    public static let startTextLength = 19
}
