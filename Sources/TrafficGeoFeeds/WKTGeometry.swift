import Foundation
import TrafficGeoSupport

/// Well-known text (OGC Simple Features: `POINT (7 50)`, `LINESTRING (…)`, `MULTIPOLYGON (((…)))`,
/// with Z, M or ZM, and PostGIS's `SRID=4326;` prefix) read into a GeoJSON geometry object, so
/// that `GeoJSONGeometry` places it by the same rule as every other geometry.
///
///     WKTGeometry.geoJSON("POINT (6.96 50.94)")  // ["type": "Point", "coordinates": [6.96, 50.94]]
enum WKTGeometry {
    /// Whether a text starts like WKT (a geometry type word, then "(", "Z", "M" or "EMPTY").
    static func looksLikeWKT(_ text: String) -> Bool {
        var t = Substring(text.drop(while: \.isWhitespace))
        if t.uppercased().hasPrefix("SRID="), let semicolon = t.firstIndex(of: ";") { t = t[t.index(after: semicolon)...] }
        let word = t.prefix(while: \.isLetter).uppercased()
        guard types[word] != nil else { return false }
        let rest = t.dropFirst(word.count).drop(while: \.isWhitespace)
        return rest.first == "(" || rest.uppercased().hasPrefix("Z") || rest.uppercased().hasPrefix("M") || rest.uppercased().hasPrefix("EMPTY")
    }

    /// The WKT type words and their GeoJSON names.
    static let types: [String: String] = [
        "POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon", "MULTIPOINT": "MultiPoint",
        "MULTILINESTRING": "MultiLineString", "MULTIPOLYGON": "MultiPolygon",
    ]

    /// The geometry as a GeoJSON object, or why the text is none.
    static func geoJSON(_ text: String) -> Result<[String: Any], PlacementProblem> {
        var t = Substring(text.drop(while: \.isWhitespace))
        if t.uppercased().hasPrefix("SRID="), let semicolon = t.firstIndex(of: ";") { t = t[t.index(after: semicolon)...] }
        let word = t.prefix(while: \.isLetter).uppercased()
        guard let type = types[word] else {
            return .failure(PlacementProblem("'\(t.prefix(30))' is no WKT geometry trafficgeo reads (POINT, LINESTRING, POLYGON and their MULTI forms)"))
        }
        var rest = t.dropFirst(word.count).drop(while: \.isWhitespace)
        // The dimension words: Z, M, ZM.
        let dimension = rest.prefix(while: \.isLetter).uppercased()
        if dimension == "EMPTY" { return .failure(PlacementProblem("an EMPTY \(word)")) }
        if ["Z", "M", "ZM"].contains(dimension) { rest = rest.dropFirst(dimension.count).drop(while: \.isWhitespace) }
        var scanner = Scanner(text: rest)
        guard let nested = scanner.list(depth: 0), scanner.atEnd else {
            return .failure(PlacementProblem("'\(t.prefix(40))' is not well-formed WKT"))
        }
        var coordinates: Any = nested
        switch type {
        case "Point":
            guard let tuple = nested.first else { return .failure(PlacementProblem("a POINT without a position")) }
            coordinates = tuple
        case "MultiPoint":
            // MULTIPOINT ((1 2), (3 4)) and MULTIPOINT (1 2, 3 4) are both written.
            coordinates = nested.map { item -> Any in
                if let inner = item as? [Any], inner.count == 1, let tuple = inner.first as? [Any], tuple.first is NSNumber { return tuple }
                return item
            }
        default:
            break
        }
        return .success(["type": type, "coordinates": coordinates])
    }

    /// Reads nested parenthesised lists whose leaves are tuples of numbers ("7 50", "7 50 120").
    private struct Scanner {
        var text: Substring

        init(text: Substring) { self.text = text }

        var atEnd: Bool { text.allSatisfy(\.isWhitespace) }

        mutating func skipSpace() { text = text.drop(while: \.isWhitespace) }

        /// "(" items separated by "," ")": each item a nested list or a tuple of numbers.
        mutating func list(depth: Int) -> [Any]? {
            skipSpace()
            guard depth < 5, text.first == "(" else { return nil }
            text = text.dropFirst()
            var items: [Any] = []
            while true {
                skipSpace()
                if text.first == "(" {
                    guard let inner = list(depth: depth + 1) else { return nil }
                    items.append(inner)
                } else {
                    guard let tuple = numbers() else { return nil }
                    items.append(tuple)
                }
                skipSpace()
                guard let c = text.first else { return nil }
                text = text.dropFirst()
                if c == ")" { return items }
                guard c == "," else { return nil }
            }
        }

        /// Two to four numbers separated by white space (as JSON's numbers: NSNumber).
        mutating func numbers() -> [Any]? {
            var out: [Any] = []
            while true {
                skipSpace()
                let token = text.prefix { !$0.isWhitespace && $0 != "," && $0 != ")" && $0 != "(" }
                guard !token.isEmpty else { break }
                guard let value = DecimalText.double(String(token)) else { return nil }
                out.append(NSNumber(value: value))
                text = text.dropFirst(token.count)
                if out.count > 4 { return nil }
            }
            return out.count >= 2 ? out : nil
        }
    }
}
