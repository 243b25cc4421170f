import Foundation
import TrafficGeoQuery
import TrafficGeoStore

/// The area of a standing query: the query model's (`QueryArea`), the same on the command line,
/// in a watches file and in `serve`.
public typealias WatchArea = QueryArea

/// A standing query: an area and filters, under a name that events carry.
public struct StandingQuery: Sendable, Equatable {
    public var name: String
    public var area: QueryArea
    public var filter: IncidentFilter
    /// The times the question gave relative to now (`--active-at now`, `--since -1h`), as their
    /// distance from now: a watch runs for days, and "now" is when it looks, not when it started
    /// (`filter(at:)`). A time given as an instant stays that instant.
    public var relativeTimes = RelativeTimes()

    public struct RelativeTimes: Sendable, Equatable {
        public var activeAt: TimeInterval?
        public var since: TimeInterval?
        public var until: TimeInterval?

        public init(activeAt: TimeInterval? = nil, since: TimeInterval? = nil, until: TimeInterval? = nil) {
            (self.activeAt, self.since, self.until) = (activeAt, since, until)
        }

        public var isEmpty: Bool { activeAt == nil && since == nil && until == nil }
    }

    public init(name: String, area: QueryArea, filter: IncidentFilter, relativeTimes: RelativeTimes = RelativeTimes()) {
        self.name = name
        self.area = area
        self.filter = filter
        self.relativeTimes = relativeTimes
    }

    /// The question's text read as a standing query: each time field that names an instant
    /// relative to now ("now", "-2h", "today") is found by reading the text at two different
    /// nows, and kept as its distance from now.
    public init(name: String, area: QueryArea, text: QueryText, now: Date = Date()) throws(QueryTextError) {
        let filter = try text.filter(now: now)
        let later = try text.filter(now: now.addingTimeInterval(86_400 * 400))
        func offset(_ a: Date?, _ b: Date?) -> TimeInterval? {
            guard let a, let b, a != b else { return nil }
            return a.timeIntervalSince(now)
        }
        self.init(name: name, area: area, filter: filter,
                  relativeTimes: RelativeTimes(activeAt: offset(filter.activeAt, later.activeAt), since: offset(filter.since, later.since),
                                               until: offset(filter.until, later.until)))
    }

    /// The filter as it asks at `now`: relative times moved to it.
    public func filter(at now: Date) -> IncidentFilter {
        guard !relativeTimes.isEmpty else { return filter }
        var f = filter
        if let offset = relativeTimes.activeAt { f.activeAt = now.addingTimeInterval(offset) }
        if let offset = relativeTimes.since { f.since = now.addingTimeInterval(offset) }
        if let offset = relativeTimes.until { f.until = now.addingTimeInterval(offset) }
        return f
    }
}
