import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore
import TrafficGeoSupport

/// A CQL2 filter translated into the query model. Each comparison becomes the model's own
/// condition, read from text by the same parser as the command line's options (`QueryText`):
/// `road = 'A3'` is `--road A3`, so it means the same and is refused in the same words.
///
/// The comparisons that stand alone at the top (joined by AND, each of a field not asked
/// already) go to the store with the rest of the question (`asked`); a BBOX there is the
/// question's box. What is left — OR, NOT, LIKE, a polygon, a second condition on one field —
/// is `remainder`, checked on each incident the store answers (`IncidentPredicate`).
public struct CQL2Question: Sendable {
    /// The model's fields the store is asked, as their text.
    public var asked: QueryText
    /// A BBOX (or a polygon's bounds) the store searches.
    public var box: LonLatBox?
    /// What each candidate must also pass; nil when the store was asked everything.
    public var remainder: IncidentPredicate?

    /// The most comparisons a filter may hold: each is a check of every candidate.
    public static let maxConditions = 64
    /// The longest LIKE pattern (matching costs its length times the text's).
    public static let maxPatternLength = 200

    /// `asked`: the question's fields given beside the filter (they are ANDed with it);
    /// `base`: the filter they make, whose `reports` and `unconfirmedAfter` the remainder's
    /// conditions keep; `hasBox`: whether the question has a box of its own.
    public init(_ expression: CQL2Expression, asked: QueryText, base: IncidentFilter, hasBox: Bool, now: Date = Date()) throws(CQL2MeaningError) {
        var translator = Translator(base: base, now: now)
        let predicate = try translator.predicate(expression)
        guard translator.conditions <= Self.maxConditions else {
            throw CQL2MeaningError("has \(translator.conditions) comparisons: at most \(Self.maxConditions)")
        }
        self.asked = asked
        var rest: [IncidentPredicate] = []
        let parts: [IncidentPredicate]
        if case let .all(list) = predicate { parts = list } else { parts = [predicate] }
        var boxTaken = hasBox
        for part in parts {
            switch part {
            case let .condition(condition) where condition.text.values.keys.allSatisfy({ !self.asked.has($0) }):
                for (field, values) in condition.text.values { self.asked.add(field, values) }
            case let .inside(.box(box)) where !boxTaken:
                self.box = Self.withDateLine(box)
                boxTaken = true
            case let .inside(.point(p)) where !boxTaken:
                self.box = Self.withDateLine(LonLatBox(west: p.longitude, south: p.latitude, east: p.longitude, north: p.latitude))
                boxTaken = true
            case let .inside(.polygons(polygons)) where !boxTaken:
                self.box = Self.withDateLine(Self.bounds(polygons))
                boxTaken = true
                rest.append(part)
            case .constant(true):
                continue
            default:
                rest.append(part)
            }
        }
        remainder = rest.isEmpty ? nil : rest.count == 1 ? rest[0] : .all(rest)
    }

    /// The box with an edge on the antimeridian holding both its longitudes, 180° and -180°
    /// (a box whose west edge is -180° crosses from 180°, one whose east edge is 180° to -180°):
    /// a feed may write either for one place.
    static func withDateLine(_ box: LonLatBox) -> LonLatBox {
        var box = box
        if box.west == -180, box.east < 180 { box.west = 180 } else if box.east == 180, box.west > -180 { box.east = -180 }
        return box
    }

    /// The box around polygons (in plain longitudes: a polygon does not cross the antimeridian).
    static func bounds(_ polygons: [[[Coordinate]]]) -> LonLatBox {
        let points = polygons.flatMap { $0.first ?? [] }
        return LonLatBox(west: points.map(\.longitude).min() ?? 0, south: points.map(\.latitude).min() ?? 0,
                         east: points.map(\.longitude).max() ?? 0, north: points.map(\.latitude).max() ?? 0)
    }
}

/// A filter that names what no incident has, or compares in a way its property does not take.
public struct CQL2MeaningError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problem: String
    init(_ problem: String) { self.problem = problem }
    public var description: String { problem }
}

/// What an incident must pass beyond what the store was asked: conditions of the query model
/// joined by AND, OR and NOT, and the checks no field of it makes (LIKE, IS NULL, a polygon).
public indirect enum IncidentPredicate: Sendable, Equatable {
    case all([IncidentPredicate])
    case any([IncidentPredicate])
    case not(IncidentPredicate)
    /// One condition of the query model: its fields' text, and the filter the text makes.
    case condition(ModelCondition)
    case like(Queryable, CQL2LikePattern)
    case isNull(Queryable)
    case equalsText(Queryable, Set<String>)
    /// The position is inside (or on the edge of) the geometry.
    case inside(CQL2Geometry)
    case constant(Bool)

    public struct ModelCondition: Sendable, Equatable {
        public var text: QueryText
        public var filter: IncidentFilter
    }

    /// Whether the incident passes: the predicate is true of it, not false and not unknown.
    public func matches(_ stored: StoredIncident) -> Bool { truth(of: stored) == true }

    /// AND (`decidedBy` false) or OR (true): the deciding value as soon as a part has it; else
    /// unknown when a part is, else the other value.
    private static func joined(_ parts: [IncidentPredicate], decidedBy deciding: Bool, on stored: StoredIncident) -> Bool? {
        var unknown = false
        for part in parts {
            let truth = part.truth(of: stored)
            if truth == deciding { return deciding }
            if truth == nil { unknown = true }
        }
        return unknown ? nil : !deciding
    }

    /// CQL2's three-valued logic, as SQL's: a comparison of a property the incident lacks is
    /// unknown (nil), and so is its negation, so `delay <> 5` and `NOT category = 'roadworks'`
    /// pass no incident without a delay or a category. AND is false when a part is false, OR
    /// true when a part is true; otherwise either is unknown when a part is.
    func truth(of stored: StoredIncident) -> Bool? {
        switch self {
        case let .all(parts): return Self.joined(parts, decidedBy: false, on: stored)
        case let .any(parts): return Self.joined(parts, decidedBy: true, on: stored)
        case let .not(part): return part.truth(of: stored).map(!)
        case let .condition(condition):
            if condition.filter.matches(stored) { return true }
            // Not matched: false when the incident gives every property the condition reads.
            let lacking = condition.text.values.keys.contains { field in
                Queryable.asked(through: field)?.isMissing(on: stored) ?? false
            }
            return lacking ? nil : false
        case let .like(property, pattern):
            let texts = property.texts(of: stored)
            return texts.isEmpty ? nil : texts.contains(where: pattern.matches)
        case let .isNull(property): return property.texts(of: stored).isEmpty
        case let .equalsText(property, values):
            let texts = property.texts(of: stored)
            return texts.isEmpty ? nil : texts.contains(where: values.contains)
        case let .inside(geometry):
            guard let p = stored.incident.position else { return nil }
            switch geometry {
            case let .box(box): return box.contains(p)
            case let .point(q): return p.latitude == q.latitude && Self.sameLongitude(p.longitude, q.longitude)
            case let .polygons(polygons):
                // 180° and -180° are one meridian: a position on it is tried as either.
                let both = abs(p.longitude) == 180 ? [p, Coordinate(latitude: p.latitude, longitude: -p.longitude)] : [p]
                return polygons.contains { rings in both.contains { Self.isInside($0, rings) } }
            }
        case let .constant(value): return value
        }
    }

    static func sameLongitude(_ a: Double, _ b: Double) -> Bool { a == b || (abs(a) == 180 && abs(b) == 180) }

    /// Inside or on the boundary (S_INTERSECTS includes it): on an edge of any ring, else by
    /// even–odd ray casting over the rings (a hole's inside is outside), in plain degrees.
    static func isInside(_ p: Coordinate, _ rings: [[Coordinate]]) -> Bool {
        for ring in rings {
            for (a, b) in zip(ring, ring.dropFirst()) where isOnSegment(p, a, b) { return true }
        }
        var inside = false
        for ring in rings {
            for (a, b) in zip(ring, ring.dropFirst()) where (a.latitude > p.latitude) != (b.latitude > p.latitude) {
                let x = a.longitude + (p.latitude - a.latitude) / (b.latitude - a.latitude) * (b.longitude - a.longitude)
                if p.longitude < x { inside.toggle() }
            }
        }
        return inside
    }
}

extension IncidentPredicate {
    /// Whether `p` lies on the segment a–b (to within rounding).
    static func isOnSegment(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        let (px, py, ax, ay, bx, by) = (p.longitude, p.latitude, a.longitude, a.latitude, b.longitude, b.latitude)
        guard px >= min(ax, bx) - 1e-12, px <= max(ax, bx) + 1e-12, py >= min(ay, by) - 1e-12, py <= max(ay, by) + 1e-12 else { return false }
        let cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
        return abs(cross) <= 1e-12 * max(1, abs(bx - ax) + abs(by - ay))
    }
}

/// A LIKE pattern: `%` any run of characters, `_` one, `\` makes the next literal. Case counts.
public struct CQL2LikePattern: Sendable, Equatable {
    enum Piece: Equatable { case character(Character), one, any }
    let pieces: [Piece]

    init(_ pattern: String) {
        var pieces: [Piece] = []
        var escaped = false
        for c in pattern {
            if escaped { pieces.append(.character(c)); escaped = false; continue }
            switch c {
            case "\\": escaped = true
            case "%": if pieces.last != .any { pieces.append(.any) }
            case "_": pieces.append(.one)
            default: pieces.append(.character(c))
            }
        }
        self.pieces = pieces
    }

    /// Dynamic programming over the pattern (no backtracking: a hostile pattern costs its length
    /// times the text's, no more).
    func matches(_ text: String) -> Bool {
        let chars = Array(text)
        var reach = [Bool](repeating: false, count: chars.count + 1)
        reach[0] = true
        for piece in pieces {
            var next = [Bool](repeating: false, count: chars.count + 1)
            switch piece {
            case .any:
                var seen = false
                for i in 0...chars.count {
                    seen = seen || reach[i]
                    next[i] = seen
                }
            case .one:
                for i in 0..<chars.count where reach[i] { next[i + 1] = true }
            case let .character(c):
                for i in 0..<chars.count where reach[i] && chars[i] == c { next[i + 1] = true }
            }
            reach = next
        }
        return reach[chars.count]
    }
}

/// Turns the expression into predicates, checking each property and value.
private struct Translator {
    let base: IncidentFilter
    let now: Date
    var conditions = 0

    mutating func predicate(_ e: CQL2Expression) throws(CQL2MeaningError) -> IncidentPredicate {
        switch e {
        case let .and(parts):
            var list: [IncidentPredicate] = []
            for part in parts {
                let p = try predicate(part)
                if case let .all(inner) = p { list += inner } else { list.append(p) }
            }
            return .all(list)
        case let .or(parts):
            var list: [IncidentPredicate] = []
            for part in parts { list.append(try predicate(part)) }
            // `road = 'A1' OR road = 'A3'` is the model's list, road=A1,A3: the store is asked it.
            let fields = list.map { p -> QueryField? in
                guard case let .condition(c) = p, c.text.values.count == 1, let field = c.text.values.keys.first, field.isList else { return nil }
                return field
            }
            if let field = fields.first ?? nil, fields.allSatisfy({ $0 == field }) {
                return try condition([field: list.flatMap { p -> [String] in
                    guard case let .condition(c) = p else { return [] }
                    return c.text.list(field)
                }])
            }
            return .any(list)
        case let .not(inner):
            return .not(try predicate(inner))
        case let .constant(value):
            return .constant(value)
        case let .comparison(name, op, value):
            conditions += 1
            return try comparison(try queryable(name), op, value)
        case let .isIn(name, values):
            conditions += values.count
            let property = try queryable(name)
            switch property {
            case .road, .category, .precision:
                return try condition([property.field!: try values.map { v throws(CQL2MeaningError) in try text(v, for: property) }])
            default:
                var list: [IncidentPredicate] = []
                for v in values { list.append(try comparison(property, .equal, v)) }
                return .any(list)
            }
        case let .like(name, pattern):
            conditions += 1
            let property = try queryable(name)
            guard [.road, .category, .source, .title, .id].contains(property) else {
                throw CQL2MeaningError("\(name) does not take LIKE: \(property.description)")
            }
            guard pattern.count <= CQL2Question.maxPatternLength else {
                throw CQL2MeaningError("a LIKE pattern has \(pattern.count) characters: at most \(CQL2Question.maxPatternLength)")
            }
            return .like(property, CQL2LikePattern(pattern))
        case let .isNull(name):
            conditions += 1
            return .isNull(try queryable(name))
        case let .intersects(name, geometry):
            conditions += 1
            guard try queryable(name) == .geometry else { throw CQL2MeaningError("S_INTERSECTS takes geometry, not \(name)") }
            return .inside(geometry)
        }
    }

    func queryable(_ name: String) throws(CQL2MeaningError) -> Queryable {
        guard let q = Queryable(rawValue: name) else {
            throw CQL2MeaningError("'\(name)' is not a queryable property: one of \(Queryable.allCases.map(\.rawValue).joined(separator: ", ")) (/collections/incidents/queryables)")
        }
        return q
    }

    /// The value as the text a field of the model reads.
    func text(_ value: CQL2Literal, for property: Queryable) throws(CQL2MeaningError) -> String {
        switch (property.type, value) {
        case let (.string, .string(s)): return s
        case let (.number, .number(n)): return Self.plain(n)
        case let (.time, .time(t)), let (.time, .string(t)):
            guard let date = TimestampParser.parse(t) else {
                throw CQL2MeaningError("'\(t)' is not an RFC 3339 time such as 2025-05-19T04:06:00Z")
            }
            return TimestampParser.format(date)
        default:
            throw CQL2MeaningError("\(property.rawValue) is compared with \(property.type == .number ? "a number" : property.type == .time ? "TIMESTAMP('…')" : "a 'string'"), not \(value)")
        }
    }

    /// A condition of the model made from its fields' text; the text is read here, so a bad
    /// value is refused in the model's words.
    func condition(_ fields: [QueryField: [String]]) throws(CQL2MeaningError) -> IncidentPredicate {
        var text = QueryText()
        for (field, values) in fields { text.add(field, values) }
        do throws(QueryTextError) {
            var filter = try text.filter(now: now)
            filter.reports = base.reports
            filter.unconfirmedAfter = base.unconfirmedAfter
            return .condition(.init(text: text, filter: filter))
        } catch {
            throw CQL2MeaningError(error.message(on: .parameter).replacingOccurrences(of: error.field.name(on: .parameter), with: Self.name(of: error.field), options: .anchored))
        }
    }

    /// A number as the model's fields read it: plain digits, never an exponent (1e-05).
    static func plain(_ n: Double) -> String { PlainNumber.text(n) }

    /// The queryable a field's error is about, in the filter's words.
    static func name(of field: QueryField) -> String {
        Queryable.asked(through: field)?.rawValue ?? field.name(on: .parameter)
    }

    mutating func comparison(_ property: Queryable, _ op: CQL2Comparison, _ value: CQL2Literal) throws(CQL2MeaningError) -> IncidentPredicate {
        func notTaken() -> CQL2MeaningError { CQL2MeaningError("\(property.rawValue) does not take \(op.rawValue): \(property.description)") }
        if op == .notEqual { return .not(try comparison(property, .equal, value)) }
        switch property {
        case .geometry:
            throw CQL2MeaningError("geometry is compared with S_INTERSECTS(geometry, BBOX(…)), not \(op.rawValue)")
        case .road, .category, .precision, .source:
            guard op == .equal else { throw notTaken() }
            return try condition([property.field!: [try text(value, for: property)]])
        case .title, .id:
            guard op == .equal else { throw notTaken() }
            return .equalsText(property, [try text(value, for: property)])
        case .severity:
            let word = try text(value, for: property)
            guard let level = Severity(stored: word) ?? Severity(word: word) else {
                throw CQL2MeaningError("severity '\(word)' is not one of \(Severity.allCases.map(\.name).joined(separator: ", "))")
            }
            let above = Severity(rawValue: level.rawValue + 1)
            func atLeast(_ s: Severity?) throws(CQL2MeaningError) -> IncidentPredicate {
                guard let s else { return .constant(false) }
                return try condition([.minSeverity: [s.name]])
            }
            return try ordered(op, atLeast: atLeast(level), above: atLeast(above))
        case .confidence:
            guard case let .number(n) = value else { _ = try text(value, for: property); throw notTaken() }
            guard (0...1).contains(n) else { throw CQL2MeaningError("confidence is compared with a number from 0 to 1, not \(value)") }
            // "Above" is at least a billionth more: no geocoder's confidence is finer.
            let atLeast = try condition([.minConfidence: [Self.plain(n)]])
            let above = n >= 1 ? IncidentPredicate.constant(false) : try condition([.minConfidence: [Self.plain(min(1, n + 1e-9))]])
            // A feed's position counts as surer than any geocode: above every number, equal to none.
            return try ordered(op, atLeast: atLeast, above: above, given: .not(.isNull(.confidence)))
        case let .measure(field):
            guard case let .number(n) = value, let measure = field.measure else { _ = try text(value, for: property); throw notTaken() }
            // Below nothing: at least 0 is every incident that gives the measure. "Above" is at
            // least a millionth more: no feed's measure is finer.
            guard n >= 0 else { return try ordered(op, atLeast: condition([field: [measure.text(for: 0)]]), above: condition([field: [measure.text(for: 0)]])) }
            return try ordered(op, atLeast: condition([field: [measure.text(for: n)]]), above: condition([field: [measure.text(for: n + 1e-6)]]))
        case .updated:
            guard let t = TimestampParser.parse(try text(value, for: property)) else { throw notTaken() }
            // The model's since includes its instant, until excludes its own: a millisecond
            // later (the stores' precision) makes ">" and "<=".
            let at = TimestampParser.format(t), after = TimestampParser.format(t.addingTimeInterval(0.001))
            switch op {
            case .greaterOrEqual: return try condition([.since: [at]])
            case .greater: return try condition([.since: [after]])
            case .less: return try condition([.until: [at]])
            case .lessOrEqual: return try condition([.until: [after]])
            case .equal: return try condition([.since: [at], .until: [after]])
            case .notEqual: throw notTaken()
            }
        }
    }

    /// A comparison on an ordered scale from "at least the value" and "above the value" (an
    /// incident with no value passes neither, nor their negations' `>=`/`>` parts). `given`:
    /// that the incident has a value to be at or below it, where passing `atLeast` does not
    /// say so (a feed's position passes every `confidence >=` without a confidence of its own).
    func ordered(_ op: CQL2Comparison, atLeast: IncidentPredicate, above: IncidentPredicate,
                 given: IncidentPredicate? = nil) throws(CQL2MeaningError) -> IncidentPredicate {
        let given = given ?? hasValue(atLeast)
        switch op {
        case .greaterOrEqual: return atLeast
        case .greater: return above
        case .less: return .all([.not(atLeast), given])
        case .lessOrEqual: return .all([.not(above), given])
        case .equal: return .all([atLeast, .not(above), given])
        case .notEqual: return .not(.all([atLeast, .not(above), given]))
        }
    }

    /// Whether an incident has the value at all: "at least the lowest" (severity, a measure).
    private func hasValue(_ atLeast: IncidentPredicate) -> IncidentPredicate {
        guard case let .condition(c) = atLeast else { return .constant(true) }
        if let field = QueryField.measureFields.first(where: { c.text.has($0) }), let measure = field.measure {
            return (try? condition([field: [measure.text(for: 0)]])) ?? .constant(true)
        }
        guard c.text.has(.minSeverity) else { return .constant(true) }
        return (try? condition([.minSeverity: [Severity.lowest.name]])) ?? .constant(true)
    }
}
