import TrafficGeoStore

/// The area of a standing query: the query model's (`QueryArea`), the same on the command line,
/// in a watches file and in `serve`.
public typealias WatchArea = QueryArea

/// A standing query: an area and filters, under a name that events carry.
public struct StandingQuery: Sendable, Equatable {
    public var name: String
    public var area: QueryArea
    public var filter: IncidentFilter

    public init(name: String, area: QueryArea, filter: IncidentFilter) {
        self.name = name
        self.area = area
        self.filter = filter
    }
}
