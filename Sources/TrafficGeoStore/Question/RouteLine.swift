import Foundation
import TrafficGeoModel

/// A route to look along (a corridor): a GeoJSON LineString — a geometry, a Feature, or the
/// first line of a FeatureCollection; a MultiLineString's lines joined. The same reading for
/// `watch --route`, a watches file's `route` (a file or the GeoJSON inline).
public enum RouteLine {
    /// A route that could not be read, and why.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func read(path: String) throws -> [Coordinate] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "cannot read the route \(path)") }
        guard let json = try? JSONSerialization.jsonObject(with: data) else { throw Problem(description: "the route \(path) is not JSON") }
        return try line(from: json, what: path)
    }

    /// The line of a parsed GeoJSON value; `what` names it in messages.
    public static func line(from json: Any, what: String) throws -> [Coordinate] {
        func fail(_ text: String) -> Problem { Problem(description: "\(what): \(text)") }
        guard let object = json as? [String: Any] else { throw fail("expected a GeoJSON LineString") }
        switch object["type"] as? String {
        case "FeatureCollection":
            for feature in object["features"] as? [Any] ?? [] {
                if let line = try? self.line(from: feature, what: what) { return line }
            }
            throw fail("the collection holds no LineString")
        case "Feature":
            guard let geometry = object["geometry"] else { throw fail("the feature has no geometry") }
            return try line(from: geometry, what: what)
        case "LineString":
            return try positions(object["coordinates"], fail: fail)
        case "MultiLineString":
            let lines = object["coordinates"] as? [Any] ?? []
            return try lines.flatMap { try positions($0, fail: fail) }
        default:
            throw fail("expected a LineString (or a Feature or FeatureCollection holding one)")
        }
    }

    private static func positions(_ raw: Any?, fail: (String) -> Problem) throws -> [Coordinate] {
        guard let array = raw as? [Any] else { throw fail("the line has no coordinates") }
        let line = try array.map { item -> Coordinate in
            guard let pair = item as? [Any], pair.count >= 2, let lon = (pair[0] as? NSNumber)?.doubleValue,
                  let lat = (pair[1] as? NSNumber)?.doubleValue, abs(lat) <= 90, abs(lon) <= 180 else {
                throw fail("a position is not [longitude, latitude]")
            }
            return Coordinate(latitude: lat, longitude: lon)
        }
        guard line.count >= 2 else { throw fail("a line needs at least two positions") }
        return line
    }
}
