import Foundation
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoStore

/// A route to look along (a corridor): a GeoJSON LineString — a geometry, a Feature, or the
/// first line of a FeatureCollection; a MultiLineString's lines joined —, a GPX file's track
/// (or route), or WKT `LINESTRING (lon lat, …)` given as text. The same reading for `along
/// --route`, `watch --route`, a watches file's `route` (a file or the GeoJSON inline) and
/// serve's `route=` (text only: a request never names a file).
public enum RouteLine {
    /// A route that could not be read, and why.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        /// The file is not there or cannot be read (rather than read and not a route).
        public var isUnreadable = false
    }

    public static func read(path: String) throws -> [Coordinate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Problem(description: "the route \(path) does not exist", isUnreadable: true)
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "cannot read the route \(path)\(isDirectory.boolValue ? " (a directory)" : "")", isUnreadable: true)
        }
        if data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "<") {
            do { return try GPXRoute.positions(in: data) } catch { throw Problem(description: "the route \(path): \(error)") }
        }
        guard let json = try? JSONSerialization.jsonObject(with: data) else {
            throw Problem(description: "the route \(path) is neither GeoJSON nor GPX")
        }
        return try line(from: json, what: path)
    }

    /// A route given as text: GeoJSON (`{"type": "LineString", …}`) or WKT (`LINESTRING (lon lat,
    /// …)`, `MULTILINESTRING ((…), (…))` joined). `what` names it in messages.
    public static func read(text: String, what: String) throws -> [Coordinate] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            guard let json = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) else {
                throw Problem(description: (what.isEmpty ? "" : "\(what): ") + "not JSON (give a GeoJSON LineString or WKT LINESTRING (lon lat, …))")
            }
            return try line(from: json, what: what)
        }
        return try wkt(trimmed, what: what)
    }

    /// WKT's `LINESTRING (lon lat, lon lat, …)` (Z and M values ignored) or `MULTILINESTRING`.
    static func wkt(_ text: String, what: String) throws -> [Coordinate] {
        func fail(_ problem: String) -> Problem { Problem(description: what.isEmpty ? problem : "\(what): \(problem)") }
        let upper = text.uppercased()
        let isMulti = upper.hasPrefix("MULTILINESTRING")
        guard isMulti || upper.hasPrefix("LINESTRING"), let open = text.firstIndex(of: "("), text.hasSuffix(")") else {
            throw fail("expected a GeoJSON LineString or WKT LINESTRING (lon lat, lon lat, …)")
        }
        let body = text[text.index(after: open)..<text.index(before: text.endIndex)]
        let positions = body.split(whereSeparator: { $0 == "," || $0 == "(" || $0 == ")" }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let line = try positions.map { pair -> Coordinate in
            let numbers = pair.split(separator: " ", omittingEmptySubsequences: true).map { Double($0) }
            guard numbers.count >= 2, let lon = numbers[0], let lat = numbers[1], lon.isFinite, lat.isFinite,
                  abs(lat) <= 90, abs(lon) <= 180 else {
                throw fail("'\(pair.prefix(40))' is not a position 'longitude latitude'")
            }
            return Coordinate(latitude: lat, longitude: lon)
        }
        guard line.count >= 2 else { throw fail("a line needs at least two positions") }
        return line
    }

    /// The line of a parsed GeoJSON value; `what` names it in messages.
    public static func line(from json: Any, what: String) throws -> [Coordinate] {
        func fail(_ text: String) -> Problem { Problem(description: what.isEmpty ? text : "\(what): \(text)") }
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
