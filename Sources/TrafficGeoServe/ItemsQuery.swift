import Foundation
import TrafficGeoModel
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

    /// The parameters of the OGC API (bbox, datetime, limit, offset, f).
    static let standardParameters: Set<String> = ["bbox", "datetime", "limit", "offset", "f"]
    /// trafficgeo's own, the command line's options.
    static let ownParameters: Set<String> = ["lat", "lon", "radius", "nearest", "road", "category", "q", "active-at",
                                             "min-confidence", "precision", "sortby"]
    /// What an items request (and the map page) takes: both of the above.
    static let itemsParameters = standardParameters.union(ownParameters)
    /// The events stream takes the conditions, not paging or ordering.
    static let eventParameters: Set<String> = ["bbox", "lat", "lon", "radius", "road", "category", "q", "min-confidence", "precision"]

    init() {}

    init(_ p: QueryParameters, allowed: Set<String> = itemsParameters, now: Date = Date()) throws(Problem) {
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
        if let text = try p.single("bbox") { bbox = try Self.box(text) }
        let lat = try p.single("lat"), lon = try p.single("lon")
        switch (lat, lon) {
        case (nil, nil): break
        case let (lat?, lon?):
            guard let la = PlainNumber.parse(lat), (-90...90).contains(la) else {
                throw Problem.badParameter("lat", "lat='\(lat)' must be a latitude in degrees, -90 to 90.")
            }
            guard let lo = PlainNumber.parse(lon), (-180...180).contains(lo) else {
                throw Problem.badParameter("lon", "lon='\(lon)' must be a longitude in degrees, -180 to 180.")
            }
            reference = Coordinate(latitude: la, longitude: lo)
        case (nil, _): throw Problem.badParameter("lat", "lon is given without lat: give both (lat=50.94&lon=6.96).")
        case (_, nil): throw Problem.badParameter("lon", "lat is given without lon: give both (lat=50.94&lon=6.96).")
        }
        if let text = try p.single("radius") {
            guard let metres = DistanceExpression.parse(text), metres.isFinite, metres > 0 else {
                throw Problem.badParameter("radius", "radius='\(text)' is not a positive distance: \(DistanceExpression.explain(text)).")
            }
            guard reference != nil else { throw Problem.badParameter("radius", "radius needs lat and lon: the centre of the circle.") }
            radius = metres
        }
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
        filter = try Self.filter(p, now: now)
        if let text = try p.single("sortby") {
            let name = text.hasPrefix("+") ? String(text.dropFirst()) : text
            guard let key = QuerySort(rawValue: name.lowercased()) else {
                throw Problem.badParameter("sortby", "sortby='\(text)' is not one of: \(QuerySort.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            if key == .distance, reference == nil {
                throw Problem.badParameter("sortby", "sortby=distance needs lat and lon: the point to measure from.")
            }
            sort = key
        }
        if ranksEveryIncidentBeforeThePage, offset + limit > Self.maxRankedDepth {
            throw Problem.badParameter("offset", "offset + limit is \(offset + limit): a page ordered by distance or by sortby must end within the first \(Self.maxRankedDepth) incidents. Narrow the question (bbox, radius, road, q) to page further.")
        }
    }

    /// A question that reads much of the store whatever its page (word search, ordering the
    /// whole collection): it runs on QueryRunner's heavy lane, so a few of them at once cannot
    /// keep the cheap ones (nearest, a box, a radius) waiting for a thread.
    var isHeavy: Bool { !filter.words.isEmpty || ranksEveryIncidentBeforeThePage }

    /// Whether answering ranks every incident before the page (the whole collection by distance
    /// from lat/lon, or sorted by `sortby`); nearest and radius are bounded by themselves.
    var ranksEveryIncidentBeforeThePage: Bool {
        guard nearest == nil, radius == nil else { return false }
        return sort != nil || (reference != nil && bbox == nil)
    }

    /// `bbox=west,south,east,north` in CRS84 (a 6-number box's heights are ignored); west > east
    /// crosses the antimeridian.
    static func box(_ text: String) throws(Problem) -> LonLatBox {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { PlainNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4 || numbers.count == 6, numbers.allSatisfy({ $0?.isFinite == true }) else {
            throw Problem.badParameter("bbox", "bbox='\(text)' must be four numbers, west,south,east,north in degrees (such as 6.8,50.8,7.1,51.0).")
        }
        let n = numbers.map { $0! }
        let (w, s, e, north) = n.count == 4 ? (n[0], n[1], n[2], n[3]) : (n[0], n[1], n[3], n[4])
        guard (-180...180).contains(w), (-180...180).contains(e) else {
            throw Problem.badParameter("bbox", "bbox longitudes must lie from -180 to 180 (west > east crosses the antimeridian).")
        }
        guard (-90...90).contains(s), (-90...90).contains(north), s <= north else {
            throw Problem.badParameter("bbox", "bbox latitudes must lie from -90 to 90, south before north.")
        }
        return LonLatBox(west: w, south: s, east: e, north: north)
    }

    /// The conditions: datetime (an instant: active then; an interval: updated within it),
    /// active-at, road, category, q, min-confidence, precision.
    static func filter(_ p: QueryParameters, now: Date) throws(Problem) -> IncidentFilter {
        var filter = IncidentFilter()
        // An empty value is no condition (an HTML form sends its empty fields).
        if let text = try p.single("datetime"), !text.isEmpty {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            func instant(_ s: String) throws(Problem) -> Date? {
                if s.isEmpty || s == ".." { return nil }
                guard let date = TimestampParser.parse(s) else {
                    throw Problem.badParameter("datetime", "datetime='\(text)' is not an RFC 3339 time or interval (2025-05-19T04:06:00Z, or start/end with .. for an open end).")
                }
                return date
            }
            switch parts.count {
            case 1:
                guard let t = try instant(parts[0]) else {
                    throw Problem.badParameter("datetime", "datetime='\(text)' is not an RFC 3339 time or interval (2025-05-19T04:06:00Z, or start/end with .. for an open end).")
                }
                filter.activeAt = t
            case 2:
                filter.since = try instant(parts[0])
                // The interval's end belongs to it; `until` excludes its own instant.
                filter.until = try instant(parts[1]).map { $0.addingTimeInterval(0.001) }
                if let a = filter.since, let b = filter.until, a >= b {
                    throw Problem.badParameter("datetime", "datetime='\(text)' ends before it starts.")
                }
            default:
                throw Problem.badParameter("datetime", "datetime='\(text)' is not an RFC 3339 time or interval (2025-05-19T04:06:00Z, or start/end with .. for an open end).")
            }
        }
        if let text = try p.single("active-at"), !text.isEmpty {
            guard filter.activeAt == nil else {
                throw Problem.badParameter("active-at", "active-at and a datetime instant both say when incidents are active: give one.")
            }
            guard let t = TimeExpression.parse(text, now: now) else {
                throw Problem.badParameter("active-at", "active-at='\(text)' is not a time: \(TimeExpression.accepted).")
            }
            filter.activeAt = t
        }
        filter.roads = try p.list("road").map { (item: String) throws(Problem) -> String in
            guard let road = RoadReference.normalize(item) else {
                throw Problem.badParameter("road", "road='\(item)' is not a road reference such as A4, B54 or L123.")
            }
            return road
        }
        filter.categories = try p.list("category").map { (item: String) throws(Problem) -> IncidentCategory in
            guard let c = IncidentCategory(loose: item) else {
                throw Problem.badParameter("category", "category='\(item)' is not one of: \(IncidentCategory.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return c
        }
        if let q = try p.single("q"), !q.isEmpty {
            let words = TextFolding.fold(q).split(separator: " ").map(String.init)
            guard words.count <= maxWords, q.utf8.count <= IncidentFilter.maxSearchBytes else {
                throw Problem.badParameter("q", "q has \(words.count) words (\(q.utf8.count) bytes): at most \(maxWords) words and \(IncidentFilter.maxSearchBytes) bytes.")
            }
            filter.words = words
        }
        if let text = try p.single("min-confidence") {
            guard let c = PlainNumber.parse(text), (0...1).contains(c) else {
                throw Problem.badParameter("min-confidence", "min-confidence='\(text)' must be a number from 0 to 1 (0.5 keeps incidents placed at least half surely).")
            }
            filter.minConfidence = c
        }
        filter.precisions = try p.list("precision").map { (item: String) throws(Problem) -> GeocodePrecision in
            guard let precision = GeocodePrecision(rawValue: item.lowercased()) else {
                throw Problem.badParameter("precision", "precision='\(item)' is not one of: \(GeocodePrecision.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return precision
        }
        return filter
    }
}
