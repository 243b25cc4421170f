import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// A filter in CQL2's text encoding (OGC 21-065, the `filter` parameter of OGC API – Features
/// Part 3), the part feature clients send: comparisons (`=`, `<>`, `<`, `<=`, `>`, `>=`),
/// `AND`, `OR`, `NOT`, parentheses, `LIKE`, `IN`, `BETWEEN`, `IS NULL`, and `S_INTERSECTS` of
/// the geometry with a `BBOX`, `POINT`, `POLYGON` or `MULTIPOLYGON`. Keywords in any case;
/// strings in single quotes (`''` for one), times as `TIMESTAMP('…')` or `DATE('…')`.
///
/// Which properties a filter may name, and what each means, is the query model's business
/// (`Queryable`, `CQL2Question`): this is only the grammar.
public indirect enum CQL2Expression: Sendable, Equatable {
    case and([CQL2Expression])
    case or([CQL2Expression])
    case not(CQL2Expression)
    case comparison(property: String, CQL2Comparison, CQL2Literal)
    case like(property: String, pattern: String)
    case isIn(property: String, [CQL2Literal])
    case isNull(property: String)
    /// `S_INTERSECTS(geometry, …)`.
    case intersects(property: String, CQL2Geometry)
    case constant(Bool)

    /// Reads `text`; a mistake is a `CQL2SyntaxError` that says where and what was expected.
    public init(text: String) throws(CQL2SyntaxError) {
        guard text.utf8.count <= Self.maxBytes else {
            throw CQL2SyntaxError("is \(text.utf8.count) bytes long: at most \(Self.maxBytes)", at: nil)
        }
        var parser = try CQL2Parser(text)
        self = try parser.expression(depth: 0)
        guard parser.atEnd else { throw parser.error("expected AND, OR or the end of the filter") }
    }

    /// A filter is read in one request: long enough for a polygon of a few hundred corners.
    public static let maxBytes = 16_384
    /// Parentheses and NOTs nested deeper than this are refused (each is a step of recursion).
    public static let maxDepth = 32
}

public enum CQL2Comparison: String, Sendable, Equatable {
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

    /// The same comparison with its sides swapped (`5 < x` is `x > 5`).
    var flipped: CQL2Comparison {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        }
    }
}

public enum CQL2Literal: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case boolean(Bool)
    /// `TIMESTAMP('…')` or `DATE('…')`: the text inside, as written.
    case time(String)

    public var description: String {
        switch self {
        case let .string(s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case let .number(n): return numberText(n)
        case let .boolean(b): return b ? "TRUE" : "FALSE"
        case let .time(t): return "TIMESTAMP('\(t)')"
        }
    }
}

/// The geometries `S_INTERSECTS` takes, in CRS84 (longitude first).
public enum CQL2Geometry: Sendable, Equatable {
    case box(LonLatBox)
    case point(Coordinate)
    /// Polygons, each its rings (the first the outside, the others holes).
    case polygons([[[Coordinate]]])
}

/// Where and why a filter could not be read.
public struct CQL2SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problem: String
    /// The character (from 0) where reading stopped.
    public var offset: Int?

    init(_ problem: String, at offset: Int?) {
        self.problem = problem
        self.offset = offset
    }

    public var description: String { offset.map { "\(problem) (at character \($0 + 1))" } ?? problem }
}

/// A recursive-descent reader over the filter's tokens.
private struct CQL2Parser {
    enum Token: Equatable {
        case word(String)
        /// A property named in double quotes: never a keyword.
        case quotedName(String)
        case string(String)
        case number(Double)
        case symbol(String)
    }

    private var tokens: [(token: Token, offset: Int)] = []
    private var position = 0
    private let length: Int

    init(_ text: String) throws(CQL2SyntaxError) {
        let chars = Array(text.unicodeScalars)
        length = chars.count
        var i = 0
        func isNameStart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" }
        func isName(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || c.properties.numericType != nil || c == ":" || c == "." || c == "-" }
        while i < chars.count {
            let c = chars[i]
            if c.properties.isWhitespace { i += 1; continue }
            let start = i
            if c == "'" || c == "\"" {
                var value = String.UnicodeScalarView()
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == c {
                        if i + 1 < chars.count, chars[i + 1] == c { value.append(c); i += 2; continue }
                        closed = true
                        i += 1
                        break
                    }
                    value.append(chars[i])
                    i += 1
                }
                guard closed else { throw CQL2SyntaxError("a \(c == "'" ? "string" : "quoted name") is not closed", at: start) }
                tokens.append((c == "'" ? .string(String(value)) : .quotedName(String(value)), start))
            } else if c.properties.numericType != nil || ((c == "-" || c == "+" || c == ".") && i + 1 < chars.count && chars[i + 1].properties.numericType != nil) {
                i += 1
                while i < chars.count, chars[i].properties.numericType != nil || chars[i] == "." || chars[i] == "e" || chars[i] == "E"
                    || ((chars[i] == "-" || chars[i] == "+") && (chars[i - 1] == "e" || chars[i - 1] == "E")) { i += 1 }
                let text = String(String.UnicodeScalarView(chars[start..<i]))
                guard let n = Double(text), n.isFinite else { throw CQL2SyntaxError("'\(text)' is not a number", at: start) }
                tokens.append((.number(n), start))
            } else if isNameStart(c) {
                while i < chars.count, isName(chars[i]) { i += 1 }
                tokens.append((.word(String(String.UnicodeScalarView(chars[start..<i]))), start))
            } else if "<>".unicodeScalars.contains(c), i + 1 < chars.count, chars[i + 1] == "=" || (c == "<" && chars[i + 1] == ">") {
                tokens.append((.symbol(String(c) + String(chars[i + 1])), start))
                i += 2
            } else if "()=<>,".unicodeScalars.contains(c) {
                tokens.append((.symbol(String(c)), start))
                i += 1
            } else {
                throw CQL2SyntaxError("'\(c)' has no meaning here", at: start)
            }
        }
    }

    var atEnd: Bool { position >= tokens.count }

    func error(_ problem: String) -> CQL2SyntaxError {
        CQL2SyntaxError(problem, at: position < tokens.count ? tokens[position].offset : length)
    }

    private var next: Token? { position < tokens.count ? tokens[position].token : nil }

    /// Whether the next token is the keyword `word` (any case); takes it if so.
    private mutating func take(_ word: String) -> Bool {
        guard case let .word(w)? = next, w.uppercased() == word else { return false }
        position += 1
        return true
    }

    private mutating func take(symbol: String) -> Bool {
        guard next == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func expect(symbol: String, _ what: String) throws(CQL2SyntaxError) {
        guard take(symbol: symbol) else { throw error("expected \(what)") }
    }

    private static let keywords: Set<String> = ["AND", "OR", "NOT", "LIKE", "IN", "IS", "NULL", "BETWEEN", "TRUE", "FALSE"]

    mutating func expression(depth: Int) throws(CQL2SyntaxError) -> CQL2Expression {
        guard depth <= CQL2Expression.maxDepth else { throw error("nests deeper than \(CQL2Expression.maxDepth) levels") }
        var terms = [try term(depth: depth)]
        while take("OR") { terms.append(try term(depth: depth)) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func term(depth: Int) throws(CQL2SyntaxError) -> CQL2Expression {
        var factors = [try factor(depth: depth)]
        while take("AND") { factors.append(try factor(depth: depth)) }
        return factors.count == 1 ? factors[0] : .and(factors)
    }

    private mutating func factor(depth: Int) throws(CQL2SyntaxError) -> CQL2Expression {
        if take("NOT") {
            guard depth + 1 <= CQL2Expression.maxDepth else { throw error("nests deeper than \(CQL2Expression.maxDepth) levels") }
            return .not(try factor(depth: depth + 1))
        }
        if take(symbol: "(") {
            let inner = try expression(depth: depth + 1)
            try expect(symbol: ")", "')' to close the '('")
            return inner
        }
        if take("TRUE") { return .constant(true) }
        if take("FALSE") { return .constant(false) }
        if case let .word(w)? = next, ["S_INTERSECTS", "INTERSECTS"].contains(w.uppercased()) {
            position += 1
            try expect(symbol: "(", "'(' after \(w)")
            let property = try propertyName()
            try expect(symbol: ",", "',' and a geometry after \(property)")
            let geometry = try self.geometry()
            try expect(symbol: ")", "')' to close \(w)")
            return .intersects(property: property, geometry)
        }
        if case let .word(w)? = next, w.uppercased().hasPrefix("S_") || w.uppercased().hasPrefix("T_") || w.uppercased().hasPrefix("A_") {
            throw error("\(w) is not one of the functions served: S_INTERSECTS is the spatial one")
        }
        return try predicate()
    }

    private mutating func propertyName() throws(CQL2SyntaxError) -> String {
        switch next {
        case let .word(w)? where !Self.keywords.contains(w.uppercased()):
            position += 1
            return w
        case let .quotedName(name)?:
            position += 1
            return name
        default:
            throw error("expected a property's name")
        }
    }

    private var nextIsLiteral: Bool {
        switch next {
        case .string?, .number?: return true
        case let .word(w)?: return ["TRUE", "FALSE", "TIMESTAMP", "DATE"].contains(w.uppercased())
        default: return false
        }
    }

    private mutating func predicate() throws(CQL2SyntaxError) -> CQL2Expression {
        // `'A3' = road`: a literal first is the comparison turned round.
        if nextIsLiteral {
            let value = try literal()
            guard case let .symbol(s)? = next, let op = CQL2Comparison(rawValue: s) else { throw error("expected a comparison (=, <>, <, <=, >, >=)") }
            position += 1
            let property = try propertyName()
            return .comparison(property: property, op.flipped, value)
        }
        let property = try propertyName()
        if case let .symbol(s)? = next, let op = CQL2Comparison(rawValue: s) {
            position += 1
            return .comparison(property: property, op, try literal())
        }
        let negated = take("NOT")
        var found: CQL2Expression
        if take("LIKE") {
            guard case let .string(pattern)? = next else { throw error("expected a pattern in quotes after LIKE") }
            position += 1
            found = .like(property: property, pattern: pattern)
        } else if take("IN") {
            try expect(symbol: "(", "'(' and a list after IN")
            var values = [try literal()]
            while take(symbol: ",") { values.append(try literal()) }
            try expect(symbol: ")", "')' to close the list")
            found = .isIn(property: property, values)
        } else if take("BETWEEN") {
            let low = try literal()
            guard take("AND") else { throw error("expected AND in BETWEEN … AND …") }
            let high = try literal()
            found = .and([.comparison(property: property, .greaterOrEqual, low), .comparison(property: property, .lessOrEqual, high)])
        } else if !negated, take("IS") {
            let not = take("NOT")
            guard take("NULL") else { throw error("expected NULL after IS") }
            return not ? .not(.isNull(property: property)) : .isNull(property: property)
        } else {
            throw error(negated ? "expected LIKE, IN or BETWEEN after NOT" : "expected a comparison (=, <>, <, <=, >, >=), LIKE, IN, BETWEEN or IS NULL after \(property)")
        }
        return negated ? .not(found) : found
    }

    private mutating func literal() throws(CQL2SyntaxError) -> CQL2Literal {
        switch next {
        case let .string(s)?:
            position += 1
            return .string(s)
        case let .number(n)?:
            position += 1
            return .number(n)
        case let .word(w)?:
            let keyword = w.uppercased()
            if keyword == "TRUE" || keyword == "FALSE" {
                position += 1
                return .boolean(keyword == "TRUE")
            }
            if keyword == "TIMESTAMP" || keyword == "DATE" {
                position += 1
                try expect(symbol: "(", "'(' after \(keyword)")
                guard case let .string(t)? = next else { throw error("expected the time in quotes") }
                position += 1
                try expect(symbol: ")", "')' to close \(keyword)")
                return .time(t)
            }
        default: break
        }
        throw error("expected a value: a 'string', a number, TRUE, FALSE or TIMESTAMP('…')")
    }

    private mutating func number() throws(CQL2SyntaxError) -> Double {
        guard case let .number(n)? = next else { throw error("expected a number") }
        position += 1
        return n
    }

    /// `x y` in WKT, checked as a longitude and a latitude.
    private mutating func position2D() throws(CQL2SyntaxError) -> Coordinate {
        let x = try number(), y = try number()
        // A third number (a height) is allowed and ignored.
        if case .number? = next { position += 1 }
        guard (-180...180).contains(x), (-90...90).contains(y) else {
            throw error("\(numberText(x)) \(numberText(y)) is not a longitude and a latitude (CRS84: longitude first)")
        }
        return Coordinate(latitude: y, longitude: x)
    }

    private mutating func ring() throws(CQL2SyntaxError) -> [Coordinate] {
        try expect(symbol: "(", "'(' to open a ring")
        var ring = [try position2D()]
        while take(symbol: ",") { ring.append(try position2D()) }
        try expect(symbol: ")", "')' to close the ring")
        guard ring.count >= 4, ring.first == ring.last else { throw error("a ring needs at least four positions, the last the same as the first") }
        return ring
    }

    private mutating func polygon() throws(CQL2SyntaxError) -> [[Coordinate]] {
        try expect(symbol: "(", "'(' to open the polygon")
        var rings = [try ring()]
        while take(symbol: ",") { rings.append(try ring()) }
        try expect(symbol: ")", "')' to close the polygon")
        return rings
    }

    private mutating func geometry() throws(CQL2SyntaxError) -> CQL2Geometry {
        if take("BBOX") || take("ENVELOPE") {
            try expect(symbol: "(", "'(' after BBOX")
            var numbers = [try number()]
            while take(symbol: ",") { numbers.append(try number()) }
            try expect(symbol: ")", "')' to close BBOX")
            // Six numbers: west, south, lowest, east, north, highest.
            if numbers.count == 6 { numbers = [numbers[0], numbers[1], numbers[3], numbers[4]] }
            guard numbers.count == 4 else { throw error("BBOX takes west, south, east, north") }
            let (w, s, e, n) = (numbers[0], numbers[1], numbers[2], numbers[3])
            guard (-180...180).contains(w), (-180...180).contains(e), (-90...90).contains(s), (-90...90).contains(n), s <= n else {
                throw error("BBOX(\(numbers.map { numberText($0) }.joined(separator: ","))) is not west, south, east, north in degrees (west > east crosses the antimeridian)")
            }
            return .box(LonLatBox(west: w, south: s, east: e, north: n))
        }
        if take("POINT") {
            try expect(symbol: "(", "'(' after POINT")
            let p = try position2D()
            try expect(symbol: ")", "')' to close POINT")
            return .point(p)
        }
        if take("POLYGON") { return .polygons([try polygon()]) }
        if take("MULTIPOLYGON") {
            try expect(symbol: "(", "'(' after MULTIPOLYGON")
            var polygons = [try polygon()]
            while take(symbol: ",") { polygons.append(try polygon()) }
            try expect(symbol: ")", "')' to close MULTIPOLYGON")
            return .polygons(polygons)
        }
        throw error("expected a geometry: BBOX(west,south,east,north), POINT(lon lat), POLYGON((…)) or MULTIPOLYGON(…)")
    }
}

/// A number as a filter would write it (5, not 5.0).
private func numberText(_ x: Double) -> String {
    x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
}
