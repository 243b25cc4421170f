import Foundation
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoRoadTitles
import TrafficGeoStore
import TrafficGeoSupport

/// The question an items (or events) request asks, read from its query parameters with the same
/// meaning as the command line's options; every mistake is a 400 that says what to send instead.
struct ItemsQuery: Sendable, Equatable {
    static let maxLimit = 10_000
    static let defaultLimit = 10
    /// The deepest `offset`: paging in store order costs the store a skip, not a sort.
    static let maxOffset = 10_000_000
    /// How deep a page ordered by distance or `sortby` may end (offset + limit): such a page
    /// ranks every incident before it (`offset=99990` asked the store for the 100,000 nearest:
    /// 12–18 s and 359 MB, while other clients waited).
    static let maxRankedDepth = 10_000
    /// The most words `q` may hold: each is a scan of every row's text (900 words ran for minutes).
    static let maxWords = IncidentFilter.maxWords

    var limit = defaultLimit
    var offset = 0
    var bbox: LonLatBox?
    /// `lat`/`lon`: where distances are measured from.
    var reference: Coordinate?
    /// Within this many metres of `reference`.
    var radius: Double?
    /// The k nearest to `reference`.
    var nearest: Int?
    var filter = IncidentFilter()
    var sort: QuerySort?
    /// `route` and `buffer`: the incidents along a route, in the order a driver meets them.
    var corridor: Corridor?
    /// `geometry`: Points (the default), or LineStrings where the incident has a segment (`mixed`).
    var geometry: GeometryChoice = .point
    /// What a CQL2 `filter` asks beyond the model's fields (OR, NOT, LIKE, a polygon): checked
    /// on each incident the store answers (`CQL2Question`).
    var remainder: IncidentPredicate?

    struct Corridor: Sendable, Equatable {
        var course: RouteCourse
        var buffer: Double
    }

    /// The parameters of the OGC API (bbox, datetime, limit, offset, f; Part 3's filter).
    static let standardParameters: Set<String> = ["bbox", "datetime", "limit", "offset", "f", "filter", "filter-lang", "filter-crs"]
    /// trafficgeo's own: the query model's fields (`QueryField`, spelt as parameters: `q` for
    /// the words, `sortby` for the order), the same as the command line's options, `nearest` and
    /// `geometry` (the command line's `--geometry`).
    static let ownParameters: Set<String> = Set(modelFields.map { $0.name(on: .parameter) }).union(["nearest", "geometry"])
    /// The model's fields a request may give (`QueryField.surfaces`).
    static let modelFields: [QueryField] = QueryField.taken(on: .items)
    /// The most positions a `route=` may have (a URL of 8 KB holds a few hundred; a saved route more).
    static let maxRoutePositions = 10_000
    /// What an items request (and the map page) takes: both of the above.
    static let itemsParameters = standardParameters.union(ownParameters)
    /// The events stream takes the conditions, not paging or ordering (nor times, which the
    /// change feed's events are about).
    static let eventParameters: Set<String> = Set(QueryField.taken(on: .eventStream).map { $0.name(on: .parameter) })

    init() {}

    /// `savedRoutes`: the routes `serve --route NAME=FILE` named, which `route=NAME` asks along.
    init(_ p: QueryParameters, allowed: Set<String> = itemsParameters, now: Date = Date(),
         savedRoutes: [String: [Coordinate]] = [:]) throws(Problem) {
        try p.allowOnly(allowed)
        if let text = try p.single("limit") {
            guard let n = Int(text), (1...Self.maxLimit).contains(n) else {
                throw Problem.badParameter("limit", "limit='\(text)' must be a whole number from 1 to \(Self.maxLimit) (page through more with offset or the next link).")
            }
            limit = n
        }
        if let text = try p.single("offset") {
            guard let n = Int(text), (0...Self.maxOffset).contains(n) else {
                throw Problem.badParameter("offset", "offset='\(text)' must be a whole number from 0 to \(Self.maxOffset).")
            }
            offset = n
        }
        if let text = try p.single("geometry") {
            guard let choice = GeometryChoice(rawValue: text), choice != .segment else {
                throw Problem.badParameter("geometry", "geometry='\(text)' must be point (every incident as a Point) or mixed (a LineString along the road where the incident has a segment, else a Point). segment, which leaves out the incidents without one, is the command line's: a page of the collection keeps every incident it counts.")
            }
            geometry = choice
        }
        let text = Self.modelText(p)
        if text.has(.route) || text.has(.buffer) {
            // A request names no file: the route is a saved one's name or the line itself.
            let area: QueryArea?
            do {
                area = try text.area { route in
                    if let saved = savedRoutes[route] { return saved }
                    do { return try RouteLine.read(text: route, what: "") } catch {
                        let names = savedRoutes.keys.sorted()
                        throw QueryTextError(.route, String(route.prefix(60)), "\(error)" + (names.isEmpty ? "" : "; or the name of a saved route: " + names.joined(separator: ", ")))
                    }
                }
            } catch let error as QueryTextError {
                throw Problem.badParameter(error.field.name(on: .parameter), error.message(on: .parameter) + ".")
            } catch {
                throw Problem.badParameter("route", "\(error).")
            }
            if case let .corridor(route, buffer)? = area {
                guard route.count <= Self.maxRoutePositions else {
                    throw Problem.badParameter("route", "the route has \(route.count) positions; at most \(Self.maxRoutePositions) (a longer one can be saved on the server and asked by its name).")
                }
                corridor = Corridor(course: RouteCourse(route), buffer: buffer)
            }
        }
        do throws(QueryTextError) {
            bbox = try text.box()
            reference = try text.center()
            radius = try text.distance(.radius)
            filter = try text.filter(now: now)
            sort = try text.sort(hasCenter: reference != nil)
        } catch {
            throw Problem.badParameter(error.field.name(on: .parameter), error.message(on: .parameter) + ".")
        }
        try readFilter(p, asked: text, now: now)
        if radius != nil, reference == nil { throw Problem.badParameter("radius", "radius needs lat and lon: the centre of the circle.") }
        if let text = try p.single("nearest") {
            guard let k = Int(text), (1...Self.maxLimit).contains(k) else {
                throw Problem.badParameter("nearest", "nearest='\(text)' must be a whole number from 1 to \(Self.maxLimit).")
            }
            guard reference != nil else { throw Problem.badParameter("nearest", "nearest needs lat and lon: the point to measure from.") }
            guard bbox == nil else {
                throw Problem.badParameter("nearest", "nearest cannot be combined with bbox (the k nearest may lie outside it): use radius with bbox, or nearest alone.")
            }
            nearest = k
        }
        try Self.readDatetime(p, into: &filter)
        if ranksEveryIncidentBeforeThePage, offset + limit > Self.maxRankedDepth {
            throw Problem.badParameter("offset", "offset + limit is \(offset + limit): a page ordered by distance or by sortby must end within the first \(Self.maxRankedDepth) incidents. Narrow the question (bbox, radius, road, q) to page further.")
        }
    }

    /// The query model's fields among the parameters, as its text.
    static func modelText(_ p: QueryParameters) -> QueryText {
        var text = QueryText()
        for item in p.items {
            if let field = QueryField(name: item.name, on: .parameter) { text.add(field, item.value) }
        }
        return text
    }

    /// A question that reads much of the store whatever its page (word search, ordering the
    /// whole collection): it runs on QueryRunner's heavy lane, so a few of them at once cannot
    /// keep the cheap ones (nearest, a box, a radius) waiting for a thread.
    var isHeavy: Bool { !filter.words.isEmpty || ranksEveryIncidentBeforeThePage || corridor != nil || remainder != nil }

    /// Whether answering ranks every incident before the page (the whole collection by distance
    /// from lat/lon, or sorted by `sortby`); nearest and radius are bounded by themselves.
    var ranksEveryIncidentBeforeThePage: Bool {
        guard nearest == nil, radius == nil, corridor == nil else { return false }
        return sort != nil || (reference != nil && bbox == nil)
    }

    /// Part 3's `filter` in CQL2 text: its comparisons join the question's own fields where the
    /// store can be asked them, the rest is `remainder`.
    mutating func readFilter(_ p: QueryParameters, asked: QueryText, now: Date) throws(Problem) {
        if let lang = try p.single("filter-lang"), lang != "cql2-text" {
            throw Problem.badParameter("filter-lang", "filter-lang='\(lang)' is not served: filters are read as cql2-text.")
        }
        if let crs = try p.single("filter-crs"), crs != FeatureDocuments.crs84 {
            throw Problem.badParameter("filter-crs", "filter-crs='\(crs)' is not served: a filter's geometries are in \(FeatureDocuments.crs84) (longitude first).")
        }
        guard let text = try p.single("filter"), !text.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        // A BBOX is the question's box unless it has one, or asks along a route or for the k
        // nearest (which no box bounds): then it is checked on each incident.
        let boxedElsewhere = bbox != nil || corridor != nil || p.items.contains { $0.name == "nearest" }
        let question: CQL2Question
        do {
            question = try CQL2Question(CQL2Expression(text: text), asked: asked, base: filter, hasBox: boxedElsewhere, now: now)
        } catch let error as CQL2SyntaxError {
            throw Problem.badParameter("filter", "filter is not CQL2 text: \(error).")
        } catch {
            throw Problem.badParameter("filter", "filter: \(error).")
        }
        do throws(QueryTextError) {
            filter = try question.asked.filter(now: now)
        } catch {
            throw Problem.badParameter("filter", "filter: " + error.message(on: .parameter) + ".")
        }
        if let box = question.box { bbox = box }
        remainder = question.remainder
    }

    /// The OGC API's `datetime`: an instant (active then) or an interval (updated within it).
    /// An instant and `active-at` both say when incidents are active: only one may be given.
    static func readDatetime(_ p: QueryParameters, into filter: inout IncidentFilter) throws(Problem) {
        // An empty value is no condition (an HTML form sends its empty fields).
        guard let text = try p.single("datetime"), !text.isEmpty else { return }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        func notATime() -> Problem {
            Problem.badParameter("datetime", "datetime='\(text)' is not an RFC 3339 time or interval (2025-05-19T04:06:00Z, or start/end with .. for an open end).")
        }
        func instant(_ s: String) throws(Problem) -> Date? {
            if s.isEmpty || s == ".." { return nil }
            guard let date = TimestampParser.parse(s) else { throw notATime() }
            return date
        }
        switch parts.count {
        case 1:
            guard let t = try instant(parts[0]) else { throw notATime() }
            guard filter.activeAt == nil else {
                throw Problem.badParameter("active-at", "active-at and a datetime instant both say when incidents are active: give one.")
            }
            filter.activeAt = t
        case 2:
            guard filter.since == nil, filter.until == nil else {
                throw Problem.badParameter("datetime", "a datetime interval and since/until both bound the update time: give one.")
            }
            filter.since = try instant(parts[0])
            // The interval's end belongs to it; `until` excludes its own instant.
            filter.until = try instant(parts[1]).map { $0.addingTimeInterval(0.001) }
            if let a = filter.since, let b = filter.until, a >= b {
                throw Problem.badParameter("datetime", "datetime='\(text)' ends before it starts.")
            }
        default:
            throw notATime()
        }
    }
}
