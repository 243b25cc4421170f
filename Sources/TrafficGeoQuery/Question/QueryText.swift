import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoStore
import TrafficGeoSupport

/// The text of a question as someone gave it, field by field, before anything is parsed: the
/// command line's options, `serve`'s query parameters and a watches file's keys all become one
/// of these, and one set of parsers (below) reads them. So `lon 190`, `since banana`, a radius
/// without its unit and a box with its south edge north of its north edge are refused the same
/// way everywhere, and what is accepted means the same thing everywhere.
///
///     var text = QueryText()
///     text.add(.lat, "50.94"); text.add(.lon, "6.96"); text.add(.radius, "25km")
///     text.add(.category, "accident,roadworks"); text.add(.since, "-2h")
///     let filter = try text.filter()          // IncidentFilter
///     let area = try text.area()              // .circle(center:radius:)
public struct QueryText: Sendable, Equatable {
    /// Each field's values in the order given; a list field may hold several (and comma lists).
    public private(set) var values: [QueryField: [String]] = [:]

    public init() {}

    /// Adds a value; nil adds nothing (an option not given).
    public mutating func add(_ field: QueryField, _ value: String?) {
        guard let value else { return }
        values[field, default: []].append(value)
    }

    /// Adds every value (a repeated option).
    public mutating func add(_ field: QueryField, _ list: [String]) {
        for value in list { add(field, value) }
    }

    public func has(_ field: QueryField) -> Bool { values[field]?.isEmpty == false }

    /// The one value of a field; given twice it is ambiguous.
    public func single(_ field: QueryField) throws(QueryTextError) -> String? {
        guard let list = values[field], !list.isEmpty else { return nil }
        guard list.count == 1 else { throw QueryTextError(field, nil, "is given \(list.count) times: give it once") }
        return list[0]
    }

    /// Every value of a list field, comma lists split, blanks dropped.
    public func list(_ field: QueryField) -> [String] {
        (values[field] ?? []).flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    // MARK: - The filter

    /// The conditions on what an incident is and when (every field of `QueryField.filterFields`).
    /// An empty value is no condition (an HTML form sends its empty fields).
    public func filter(now: Date = Date()) throws(QueryTextError) -> IncidentFilter {
        var filter = IncidentFilter()
        filter.activeAt = try time(.activeAt, now: now)
        filter.since = try time(.since, now: now)
        filter.until = try time(.until, now: now)
        filter.roads = try list(.road).map { (item: String) throws(QueryTextError) -> [String] in
            if let reference = RoadCondition(item) { return [reference.text] }
            let asName = RoadCondition(name: item)
            // A feed's own road text ("I-87 Northway", "Merritt Parkway/CT 15", "NY 17 [Orange]"):
            // the roads it names, as the feed's incidents were filed under them.
            // Only a text of the characters of names (less a county in brackets): "401;DROP" is refused.
            if RoadCondition(name: RoadReference.withoutBracketedQualifiers(item)) != nil {
                let named = RoadReference.roads(inField: item).compactMap { RoadCondition($0) ?? RoadCondition(name: $0) }
                if named.count > 1 || (named.count == 1 && asName == nil) { return named.map(\.text) }
            }
            guard let condition = asName else {
                throw QueryTextError(.road, item, "is not a road reference such as A4, B54, M1, A1(M), I-25, US-40, CO-7, N7, AP-7, SH-16 or E40 (fr:A7 for A7 in France), nor a road's name such as Highway 401 or Merritt Parkway")
            }
            return [condition.text]
        }.flatMap { $0 }
        filter.categories = try list(.category).map { (item: String) throws(QueryTextError) -> IncidentCategory in
            guard let category = IncidentCategory(loose: item) else {
                throw QueryTextError(.category, item, "is not one of: \(IncidentCategory.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return category
        }
        filter.precisions = try list(.precision).map { (item: String) throws(QueryTextError) -> GeocodePrecision in
            guard let precision = GeocodePrecision(rawValue: item.lowercased()) else {
                throw QueryTextError(.precision, item, "is not one of: \(GeocodePrecision.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return precision
        }
        if let search = try single(.search), !search.isEmpty {
            let words = IncidentFilter.searchWords(search)
            guard words.count <= IncidentFilter.maxWords, search.utf8.count <= IncidentFilter.maxSearchBytes else {
                throw QueryTextError(.search, nil, "has \(words.count) words (\(search.utf8.count) bytes): at most \(IncidentFilter.maxWords) words and \(IncidentFilter.maxSearchBytes) bytes")
            }
            filter.words = words
        }
        if let source = try single(.source), !source.isEmpty { filter.source = source }
        if let text = try single(.reports), !text.isEmpty {
            switch text.lowercased() {
            case "true", "yes", "1", "on": filter.reports = true
            case "false", "no", "0", "off": filter.reports = false
            default: throw QueryTextError(.reports, text, "is not true or false (true: every report, each naming its event; false: the events)")
            }
        }
        if let text = try single(.minConfidence), !text.isEmpty {
            guard let c = PlainNumber.parse(text), (0...1).contains(c) else {
                throw QueryTextError(.minConfidence, text, "is not a number from 0 to 1 (0.5 keeps incidents placed at least half surely)")
            }
            filter.minConfidence = c
        }
        if let text = try single(.minSeverity), !text.isEmpty {
            guard let severity = Severity(stored: text) ?? Severity(word: text) else {
                throw QueryTextError(.minSeverity, text, "is not a severity: one of \(Severity.allCases.map(\.name).joined(separator: ", ")) (minor, moderate, major, severe, critical too)")
            }
            filter.minSeverity = severity
        }
        for field in QueryField.measureFields {
            guard let condition = field.measure, let text = try single(field), !text.isEmpty else { continue }
            filter.minimums[condition.measure] = try condition.read(text, field: field)
        }
        if let text = try single(.unconfirmedAfter), !text.isEmpty {
            switch text.lowercased() {
            case "never", "off": filter.unconfirmedAfter = nil
            default:
                guard let seconds = DurationExpression.parse(text), seconds > 0, seconds <= DurationExpression.longest else {
                    let bare = text.trimmingCharacters(in: .whitespaces)
                    let why = DurationExpression.parse(text) == 0 || PlainNumber.parse(bare) == 0 ? "is no length of time: give one such as 7d or 12h, or never"
                        : PlainNumber.parse(bare) != nil ? "needs its unit: \(bare)d or \(bare)h (or never)"
                        : "is not a length of time or 'never': \(DurationExpression.accepted) (default 7d)"
                    throw QueryTextError(.unconfirmedAfter, text, why)
                }
                filter.unconfirmedAfter = seconds
            }
        }
        return filter
    }

    /// A time field: 'now', 'today', ISO 8601, or relative (-2h).
    public func time(_ field: QueryField, now: Date = Date()) throws(QueryTextError) -> Date? {
        guard let text = try single(field), !text.isEmpty else { return nil }
        guard let date = TimeExpression.parse(text, now: now) else {
            throw QueryTextError(field, text, "is not a time: \(TimeExpression.accepted)")
        }
        return date
    }

    // MARK: - Where

    /// `lat` and `lon` as a position; nil when neither is given. Each given value is read
    /// before the pair is checked, so a value that swallowed the next option (`--lat --lon 7`)
    /// is named for what it is.
    public func center() throws(QueryTextError) -> Coordinate? {
        var latitude: Double?, longitude: Double?
        if let lat = try single(.lat) {
            guard let la = PlainNumber.parse(lat.trimmingCharacters(in: .whitespaces)), (-90...90).contains(la) else {
                throw QueryTextError(.lat, lat, "is not a latitude: use degrees from -90 to 90")
            }
            latitude = la
        }
        if let lon = try single(.lon) {
            guard let lo = PlainNumber.parse(lon.trimmingCharacters(in: .whitespaces)), (-180...180).contains(lo) else {
                throw QueryTextError(.lon, lon, "is not a longitude: use degrees from -180 to 180")
            }
            longitude = lo
        }
        switch (latitude, longitude) {
        case (nil, nil): return nil
        case (nil, _): throw QueryTextError(.lat, nil, "is missing: a longitude is given; give both latitude and longitude")
        case (_, nil): throw QueryTextError(.lon, nil, "is missing: a latitude is given; give both latitude and longitude")
        case let (la?, lo?): return Coordinate(latitude: la, longitude: lo)
        }
    }

    /// A distance field (`25km`, `500m`, `3mi`; the unit is required), more than 0.
    public func distance(_ field: QueryField) throws(QueryTextError) -> Double? {
        guard let text = try single(field) else { return nil }
        guard let metres = DistanceExpression.parse(text), metres.isFinite else {
            throw QueryTextError(field, text, "is not a distance: \(DistanceExpression.explain(text))")
        }
        guard metres > 0 else { throw QueryTextError(field, text, "is not a distance: it must be more than 0") }
        return metres
    }

    /// `bbox`: west,south,east,north in degrees (a 6-number box's heights are ignored, as the
    /// OGC API allows); west > east crosses the antimeridian.
    public func box() throws(QueryTextError) -> LonLatBox? {
        guard let text = try single(.bbox) else { return nil }
        return try Self.box(text)
    }

    /// A box from its text (see `box()`).
    public static func box(_ text: String) throws(QueryTextError) -> LonLatBox {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { PlainNumber.parse($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4 || numbers.count == 6, numbers.allSatisfy({ $0 != nil }) else {
            throw QueryTextError(.bbox, text, "is not a box: give west,south,east,north in degrees (such as 6.8,50.8,7.1,51.0)")
        }
        let n = numbers.map { $0! }
        let (w, s, e, north) = n.count == 4 ? (n[0], n[1], n[2], n[3]) : (n[0], n[1], n[3], n[4])
        guard (-180...180).contains(w), (-180...180).contains(e) else {
            throw QueryTextError(.bbox, text, "is not a box: its longitudes must lie from -180 to 180 (west > east crosses the antimeridian)")
        }
        guard (-90...90).contains(s), (-90...90).contains(north) else {
            throw QueryTextError(.bbox, text, "is not a box: its latitudes must lie from -90 to 90")
        }
        guard s <= north else {
            throw QueryTextError(.bbox, text, "is not a box: its south edge lies north of its north edge (give west,south,east,north)")
        }
        return LonLatBox(west: w, south: s, east: e, north: north)
    }

    /// `sort`: one of `QuerySort` (a leading `+` is ascending, the only order). `distance`
    /// needs a point to measure from (`hasCenter`: the question has one).
    public func sort(hasCenter: Bool = true) throws(QueryTextError) -> QuerySort? {
        // Empty is refused, not taken for no order: `sortby=` names no key (the OpenAPI
        // document's pattern), unlike an empty filter field of an HTML form.
        guard let text = try single(.sort) else { return nil }
        let name = text.hasPrefix("+") ? String(text.dropFirst()) : text
        guard let key = QuerySort(rawValue: name.lowercased()) else {
            throw QueryTextError(.sort, text, "is not one of: \(QuerySort.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard key != .distance || hasCenter else {
            throw QueryTextError(.sort, text, "needs a point to measure from: give latitude and longitude")
        }
        return key
    }

    /// The one area of a standing question: a circle (`lat`, `lon`, `radius`), a box (`bbox`) or a
    /// corridor (`route`, `buffer`); nil when none is given. `route` is read by `routeLine`
    /// (a file name or inline GeoJSON, as the surface holds it).
    public func area(defaultRadius: Double = 25_000, defaultBuffer: Double = 2_000,
                     routeLine: (String) throws -> [Coordinate] = RouteLine.read(path:)) throws -> QueryArea? {
        let center = try center(), box = try box()
        let given = [center != nil, box != nil, has(.route)].filter { $0 }.count
        guard given <= 1 else {
            throw QueryTextError(box != nil ? .bbox : .route, nil, "cannot be combined with another area: give a centre (latitude and longitude), a box or a route")
        }
        if given == 0, !has(.radius), !has(.buffer) { return nil }
        if has(.radius), center == nil { throw QueryTextError(.radius, nil, "needs a centre: give latitude and longitude too") }
        if has(.buffer), !has(.route) { throw QueryTextError(.buffer, nil, "needs a route: the line to keep within the buffer of") }
        if let center { return .circle(center: center, radius: try distance(.radius) ?? defaultRadius) }
        if let box { return .box(box) }
        let route = try single(.route) ?? ""
        return .corridor(route: try routeLine(route), buffer: try distance(.buffer) ?? defaultBuffer)
    }
}
