import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Reads Open511 events (JSON and XML): one incident per event; ARCHIVED ends it. JSON is
/// streamed one event at a time (the `events` array); XML one `<event>` at a time. Geography is
/// GeoJSON in JSON and GML in XML (`gml:coordinates` "lon,lat"; `gml:pos`/`gml:posList` in the
/// axis order of their CRS, longitude first when none is named).
struct Open511Reader: FeedReader {
    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        if FeedFormat.contentFamily(try input.head(4096)) == "XML" { return try readXML(input, source: source, handle: handle) }
        let streamer = JSONArrayStreamer(keys: ["events"])
        var index = 0, events = 0
        let topLevel: [String: String]
        do {
            topLevel = try streamer.scan(try input.makeStream()) { _, data in
                index += 1
                guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                    return try handle(.skipped(SkippedEntry(index: index, reason: "an event that is not a JSON object")))
                }
                let event = Self.incident(Open511Event(json: object), source: source, index: index, line: nil)
                if case .incident = event { events += 1 }
                try handle(event)
            }
        } catch let error as JSONArrayStreamer.ScanError {
            throw FeedError.malformed(input.location, format: .open511, reason: error.description, entriesRead: index)
        }
        // Not Open511 (`--format open511` on other JSON): no events array, or events none of which
        // is one. Refused, so that a snapshot of it ends nothing; an empty `events` is a quiet page.
        if topLevel["events"] == nil || (index > 0 && events == 0) {
            throw FeedError.malformed(input.location, format: .open511,
                                      reason: topLevel["events"] == nil ? "no events array (an Open511 answer is {\"events\": [...], ...})"
                                          : "none of its \(index) events has an id", entriesRead: 0)
        }
    }

    private func readXML(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let names = RecordNames(known: [])
        var index = 0
        let outcome = try XMLRecordReading.read(input, format: .open511, names: names, recordNames: ["event"]) { tree, _, line in
            index += 1
            try handle(Self.incident(Open511Event(tree: tree), source: source, index: index, line: line))
        }
        if outcome.records == 0, outcome.rootName != "open511" {
            throw FeedError.malformed(input.location, format: .open511, reason: "the document's root is <\((outcome.rootName ?? "").prefix(60))>, not <open511>", entriesRead: 0)
        }
    }

    static func incident(_ event: Open511Event, source: String, index: Int, line: Int?, now: Date = Date()) -> FeedEvent {
        guard let id = event.id else { return .skipped(SkippedEntry(index: index, line: line, reason: "an event without an id")) }
        var fields = EntryFields()
        fields.id = id
        let roads = event.roads
        var title = event.headline
        if title == nil {
            let kind = event.eventType.map { $0.lowercased().replacingOccurrences(of: "_", with: " ") } ?? "event"
            title = kind.prefix(1).uppercased() + kind.dropFirst() + (roads.first?.name.map { " on \($0)" } ?? "")
        }
        fields.title = title
        var summary = event.description
        let stretch = roads.compactMap { road -> String? in
            let parts = [road.name, road.from.map { "from \($0)" }, road.to.map { "to \($0)" }, road.direction].compactMap { $0 }
            return parts.isEmpty ? nil : parts.joined(separator: " ")
        }
        if summary == nil, !stretch.isEmpty { summary = stretch.joined(separator: "; ") }
        fields.summary = summary
        fields.weblink = event.url
        fields.updated = event.updated ?? event.created
        let category = Self.category(type: event.eventType, subtypes: event.subtypes)
        fields.impliedCategory = category
        var details: [String: String] = [:]
        if let severity = event.severity { details["severity"] = severity.lowercased() }
        if let type = event.eventType { details["record_types"] = ([type] + event.subtypes).joined(separator: ", ") }
        let names = roads.compactMap(\.name)
        if !names.isEmpty { details["road_name"] = names.joined(separator: ", ") }
        if let direction = roads.first?.direction { details["direction"] = direction }
        if let status = event.status { details["status"] = status }
        if !stretch.isEmpty { details["roads"] = stretch.joined(separator: "; ") }
        // Validity: the schedule's intervals ("start/end", an open end allowed), or its recurring
        // schedules (`RecurringSchedule`: weekdays, daily hours, exceptions), from the first
        // start to the last end. Schedule times are the jurisdiction's local time and usually
        // carry no offset ("2012-04-16T09:05"): read in the event's `timezone` where it names
        // one, else at the offset the event's own timestamps carry (UTC when those carry none).
        let offset = Open511Event.zone(of: event.updated ?? event.created)
        let timeZone = event.timezone.flatMap(TimeZone.init(identifier:))
        var spans = event.intervals.map { interval -> (Date?, Date?) in
            let parts = interval.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).trimmed }
            return (parts.first.flatMap { Open511Event.time($0, zone: offset, timeZone: timeZone) },
                    parts.count > 1 ? Open511Event.time(parts[1], zone: offset, timeZone: timeZone) : nil)
        }
        if let schedule = event.schedule(offset: offset) ?? event.intervalSchedule(offset: offset) {
            details[RecurringSchedule.property] = schedule.text
            spans.append((schedule.firstStart, schedule.lastEnd))
        }
        if let start = spans.compactMap(\.0).min() { details["valid_from"] = TimestampParser.format(start) }
        if !spans.isEmpty, spans.allSatisfy({ $0.1 != nil }), let end = spans.compactMap(\.1).max() {
            fields.expires = TimestampParser.format(end)
        }
        fields.properties = details
        switch event.geography {
        case let .success(placed)?:
            // Any geometry (GeoJSONGeometry): a line's first point and the line, an area's point
            // on its surface and its outline.
            fields.segment = placed.segment
            fields.latitude = String(placed.position.latitude)
            fields.longitude = String(placed.position.longitude)
        case let .failure(reason)?:
            fields.positionProblem = reason.reason
        case nil:
            break
        }
        do {
            var incident = try fields.makeIncident(source: source, index: index)
            incident.category = category
            if !names.isEmpty { incident.setRoads(RoadReference.roads(inFields: names)) }
            if event.status?.uppercased() == "ARCHIVED" { incident.endedAt = min(incident.updated ?? now, now) }
            return .incident(incident)
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: id, line: line, reason: error.reason))
        }
    }

    /// Open511's event types and subtypes to categories.
    static func category(type: String?, subtypes: [String]) -> IncidentCategory {
        let subs = Set(subtypes.map { $0.uppercased() })
        if subs.contains("ACCIDENT") { return .accident }
        if subs.contains("WRONG_WAY_DRIVER") { return .wrongWayDriver }
        if !subs.isDisjoint(with: ["SPILL", "OBSTRUCTION", "DEBRIS", "ANIMAL_ON_ROAD"]) { return .obstacle }
        if !subs.isDisjoint(with: ["ROAD_CLOSED", "LANE_CLOSED", "CLOSED"]) { return .closure }
        if subs.contains("DETOUR") { return .detour }
        if !subs.isDisjoint(with: ["HAZARD", "FIRE", "SINKHOLE", "POTHOLE"]) { return .danger }
        switch type?.uppercased() {
        case "CONSTRUCTION": return .roadworks
        case "SPECIAL_EVENT": return .event
        case "WEATHER_CONDITION": return .weather
        case "ROAD_CONDITION": return .danger
        case "INCIDENT": return .danger
        default: return .other
        }
    }
}

/// The fields of an Open511 event, from either encoding.
struct Open511Event {
    struct Road { var name, from, to, direction: String? }
    var id, status, headline, description, eventType, severity, created, updated, url: String?
    var subtypes: [String] = []
    var roads: [Road] = []
    var intervals: [String] = []
    /// Each recurring schedule as written: its dates ("2013-05-01"), daily times ("08:00") and
    /// ISO weekdays (1 Monday … 7 Sunday; none given: every day).
    var recurringSchedules: [(startDate: String?, endDate: String?, dailyStart: String?, dailyEnd: String?, days: [Int]?)] = []
    /// The schedule's exceptions as written: "2013-06-24" (not that day) or
    /// "2013-06-24 10:00-14:00 16:00-18:00" (only then that day).
    var exceptions: [String] = []
    /// The IANA time zone its schedule's times are in, where it names one.
    var timezone: String?
    var geography: Result<GeoJSONGeometry.Placement, PlacementProblem>? = nil

    /// The UTC offset a timestamp ends with ("Z", "-07:00", "+0200"), if any.
    static func zone(of timestamp: String?) -> String? {
        guard let t = timestamp?.trimmed, let tIndex = t.firstIndex(where: { $0 == "T" || $0 == "t" }) else { return nil }
        let time = t[t.index(after: tIndex)...]
        if time.hasSuffix("Z") || time.hasSuffix("z") { return "Z" }
        guard let sign = time.lastIndex(where: { $0 == "+" || $0 == "-" }) else { return nil }
        let offset = String(time[sign...])
        return offset.count == 6 || offset.count == 5 || offset.count == 3 ? offset : nil
    }

    /// A schedule time; one without an offset is read in `timeZone` if given, else at `zone`.
    static func time(_ text: String, zone: String?, timeZone: TimeZone? = nil) -> Date? {
        guard !text.isEmpty else { return nil }
        if Self.zone(of: text) != nil || !text.contains("T") { return TimestampParser.parse(text) }
        guard let timeZone else { return TimestampParser.parse(text + (zone ?? "Z")) }
        return TimestampParser.parse(text + "Z").map(timeZone.instant(wallClock:))
    }

    /// An offset as `zone(of:)` gives it ("Z", "-04:00", "+0200", "+02") in minutes.
    static func offsetMinutes(_ zone: String?) -> Int {
        guard let zone, zone != "Z", let sign = zone.first, sign == "+" || sign == "-" else { return 0 }
        let digits = zone.dropFirst().filter(\.isNumber)
        guard digits.count == 2 || digits.count == 4, let h = Int(digits.prefix(2)), let m = Int(digits.dropFirst(2).isEmpty ? "0" : String(digits.dropFirst(2))) else { return 0 }
        return (sign == "-" ? -1 : 1) * (h * 60 + m)
    }

    /// Its recurring schedules and exceptions, read as the Open511 reference implementation
    /// reads them (open511/utils/schedule.py): a schedule without daily times is all day, one
    /// without days every day, an exception date's times replace the day's. What cannot be read
    /// makes a schedule say more, not less, so that works are shown rather than hidden: a rule
    /// with a daily time that is no time is all day, one with no weekday that is one every day;
    /// a rule without a start date, or ending before it starts, is left out, and so is an
    /// exception whose date is no date or whose times are all unreadable. Nil without any rule.
    func schedule(offset: String?) -> RecurringSchedule? {
        let rules = recurringSchedules.prefix(RecurringSchedule.maxEntries).compactMap { r -> RecurringSchedule.Rule? in
            guard let from = r.startDate?.trimmed, let first = RecurringSchedule.dayNumber(from) else { return nil }
            var until: String?
            if let end = r.endDate?.trimmed.nilIfEmpty {
                guard let last = RecurringSchedule.dayNumber(end), last >= first else { return nil }
                until = end
            }
            // The reference's default end, 23:59 (inclusive there), is the day's end.
            let start = r.dailyStart.map { RecurringSchedule.minutes($0) } ?? 0
            let end = r.dailyEnd.map { RecurringSchedule.minutes($0).map { $0 == 23 * 60 + 59 ? 1440 : $0 } } ?? 1440
            let window = start.flatMap { s in end.flatMap { RecurringSchedule.Window(start: s, end: $0) } } ?? .allDay
            let days = r.days.flatMap { $0.isEmpty ? nil : $0 } ?? Array(1...7)
            return RecurringSchedule.Rule(from: from, until: until, days: days, window: window)
        }
        guard !rules.isEmpty else { return nil }
        var exceptions: [String: [RecurringSchedule.Window]] = [:]
        for text in self.exceptions.prefix(RecurringSchedule.maxEntries) {
            let parts = text.split(whereSeparator: \.isWhitespace)
            guard let date = parts.first.map(String.init), RecurringSchedule.dayNumber(date) != nil else { continue }
            // An exception's window is within its day.
            let windows = parts.dropFirst().compactMap { RecurringSchedule.Window(text: $0) }.filter { !$0.overnight }
            if parts.count > 1 && windows.isEmpty { continue }
            exceptions[date, default: []] += windows
        }
        return RecurringSchedule(zone: timezone, offsetMinutes: Self.offsetMinutes(offset), rules: rules, exceptions: exceptions)
    }

    /// Several `intervals` as a schedule, so that the days between them are not in effect: each
    /// interval's first day from its start, the days between all day, its last day to its end
    /// (an open end: every day after). Nil for one interval (its start and end say it all) or
    /// when an interval is not a local time without an offset, as Open511 writes them.
    func intervalSchedule(offset: String?) -> RecurringSchedule? {
        guard intervals.count >= 2 else { return nil }
        func local(_ text: Substring) -> (day: Int, minutes: Int)? {
            let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "T", maxSplits: 1)
            guard parts.count == 2, let day = RecurringSchedule.dayNumber(parts[0]), let minutes = RecurringSchedule.minutes(parts[1]) else { return nil }
            return (day, minutes)
        }
        var rules: [RecurringSchedule.Rule] = []
        for interval in intervals.prefix(RecurringSchedule.maxEntries / 3) {
            let parts = interval.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let start = parts.first.flatMap(local) else { return nil }
            let text = RecurringSchedule.dateText
            if parts.count < 2 || parts[1].trimmingCharacters(in: .whitespaces).isEmpty {
                rules.append(.init(from: text(start.day), until: text(start.day), window: .init(start: start.minutes, end: 1440) ?? .allDay))
                rules.append(.init(from: text(start.day + 1)))
                continue
            }
            guard let end = local(parts[1]), (end.day, end.minutes) > (start.day, start.minutes) else { return nil }
            if end.day == start.day {
                rules.append(.init(from: text(start.day), until: text(start.day), window: .init(start: start.minutes, end: end.minutes)!))
                continue
            }
            rules.append(.init(from: text(start.day), until: text(start.day), window: .init(start: start.minutes, end: 1440) ?? .allDay))
            if end.day - start.day >= 2 { rules.append(.init(from: text(start.day + 1), until: text(end.day - 1))) }
            if end.minutes > 0 { rules.append(.init(from: text(end.day), until: text(end.day), window: .init(start: 0, end: end.minutes)!)) }
        }
        return RecurringSchedule(zone: timezone, offsetMinutes: Self.offsetMinutes(offset), rules: rules)
    }

    init(json e: [String: Any]) {
        func text(_ o: [String: Any], _ k: String) -> String? { LooseJSON.string(o[k])?.trimmed.nilIfEmpty }
        id = text(e, "id"); status = text(e, "status"); headline = text(e, "headline"); description = text(e, "description")
        eventType = text(e, "event_type"); severity = text(e, "severity"); created = text(e, "created"); updated = text(e, "updated")
        url = text(e, "url"); timezone = text(e, "timezone")
        subtypes = (e["event_subtypes"] as? [Any])?.compactMap { LooseJSON.string($0) } ?? []
        roads = (e["roads"] as? [[String: Any]] ?? []).map { Road(name: text($0, "name"), from: text($0, "from"), to: text($0, "to"), direction: text($0, "direction")) }
        if let schedule = e["schedule"] as? [String: Any] {
            intervals = (schedule["intervals"] as? [Any])?.compactMap { LooseJSON.string($0) } ?? []
            recurringSchedules = (schedule["recurring_schedules"] as? [Any] ?? []).prefix(RecurringSchedule.maxEntries).compactMap { $0 as? [String: Any] }.map {
                (text($0, "start_date"), text($0, "end_date"), text($0, "daily_start_time"), text($0, "daily_end_time"),
                 ($0["days"] as? [Any]).map(RecurringSchedule.weekdays) ?? ($0["days"] as? String).map { RecurringSchedule.weekdays([$0]) })
            }
            exceptions = (schedule["exceptions"] as? [Any])?.compactMap { LooseJSON.string($0) } ?? []
        }
        if let geometry = e["geography"] as? [String: Any] { geography = GeoJSONGeometry.placement(geometry) }
    }

    init(tree: RecordTree) {
        let root: Int32 = 0
        let names = tree.names
        func child(_ name: String, in node: Int32 = 0) -> String? {
            guard let n = names.existing(name) else { return nil }
            return tree.children(of: node).first { tree.name($0) == n }.flatMap { tree.text($0) }
        }
        id = child("id"); status = child("status"); headline = child("headline"); description = child("description")
        eventType = child("event_type"); severity = child("severity"); created = child("created"); updated = child("updated")
        url = child("url"); timezone = child("timezone")
        if let n = names.existing("event_subtype") { subtypes = tree.all(n, in: root).compactMap { tree.text($0) } }
        if let n = names.existing("road") {
            roads = tree.all(n, in: root).map { r in Road(name: child("name", in: r), from: child("from", in: r), to: child("to", in: r), direction: child("direction", in: r)) }
        }
        if let n = names.existing("interval") { intervals = tree.all(n, in: root).compactMap { tree.text($0) } }
        if let n = names.existing("recurring_schedule") {
            let day = names.existing("day")
            recurringSchedules = tree.all(n, in: root).prefix(RecurringSchedule.maxEntries).map { r in
                let days = day.map { RecurringSchedule.weekdays(tree.all($0, in: r).compactMap { tree.text($0) }) }
                return (child("start_date", in: r), child("end_date", in: r), child("daily_start_time", in: r), child("daily_end_time", in: r), days)
            }
        }
        if let n = names.existing("exception") { exceptions = tree.all(n, in: root).compactMap { tree.text($0) } }
        guard let geographyName = names.existing("geography"), let geography = tree.first(geographyName, in: root) else { return }
        positions: for i in tree.descendants(of: geography) {
            let name = tree.nameText(i)
            guard let text = tree.text(i) else { continue }
            let srs = tree.inheritedAttribute(i, "srsName")
            switch name {
            case "coordinates": self.geography = GMLPositions.readCoordinates(text).map(GeoJSONGeometry.Placement.init(positions:))
            case "pos", "posList":
                self.geography = GMLPositions.read(text, srsName: srs, dimension: tree.inheritedAttribute(i, "srsDimension").flatMap { Int($0) },
                                                   latitudeFirstWithoutName: false).map(GeoJSONGeometry.Placement.init(positions:))
            default: continue
            }
            break positions
        }
    }
}

/// An Open511 API's pages: `pagination.next_url` (JSON) or `<pagination><next_url>` (XML).
public enum Open511Pages {
    /// The next page's URL, resolved against `base`; nil on the last page.
    public static func nextURL(in input: FeedInput, base: String) -> String? {
        guard let data = try? Data(contentsOf: input.fileURL), data.count < 256 << 20 else { return nil }
        var next: String?
        if FeedFormat.contentFamily(data.prefix(64)) == "JSON" {
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            next = LooseJSON.string((object?["pagination"] as? [String: Any])?["next_url"])
        } else {
            let text = String(decoding: data, as: UTF8.self)
            if let start = text.range(of: "<next_url>"), let end = text.range(of: "</next_url>", range: start.upperBound..<text.endIndex) {
                next = String(text[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
            }
        }
        guard let next = next?.trimmed.nilIfEmpty, let url = URL(string: next, relativeTo: URL(string: base)) else { return nil }
        let absolute = url.absoluteString
        return absolute.lowercased().hasPrefix("http") ? absolute : nil
    }
}
