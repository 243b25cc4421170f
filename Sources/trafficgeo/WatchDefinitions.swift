import ArgumentParser
import Foundation
import TrafficGeoSupport
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoStore
import TrafficGeoWatch

/// Standing queries from `--watches FILE`: a JSON array (or `{"watches": [...]}`) of objects
///
///     {"name": "home", "lat": 50.94, "lon": 6.96, "radius": "25km", "category": ["accident"]}
///     {"name": "commute", "route": "route.geojson", "buffer": "2km", "road": ["A4"]}
///     {"name": "ruhr", "bbox": [6.5, 51.2, 7.8, 51.7]}
///
/// with the query filters as keys (road, category, search, min_confidence, precision,
/// active_at, since, until, source).
enum WatchDefinitions {
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    static func read(path: String) throws -> [StandingQuery] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "cannot read \(path)") }
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            throw Problem(description: "\(path) is not JSON: \(error.localizedDescription)")
        }
        guard let list = (json as? [Any]) ?? ((json as? [String: Any])?["watches"] as? [Any]) else {
            throw Problem(description: "\(path): expected a JSON array of watches (or {\"watches\": [...]})")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var names = Set<String>()
        return try list.enumerated().map { k, item in
            guard let object = item as? [String: Any] else { throw Problem(description: "\(path): watch \(k + 1) is not an object") }
            let query = try standingQuery(object, defaultName: "watch\(k + 1)", folder: folder)
            guard names.insert(query.name).inserted else { throw Problem(description: "\(path): two watches are named '\(query.name)'") }
            return query
        }
    }

    static func standingQuery(_ o: [String: Any], defaultName: String, folder: String) throws -> StandingQuery {
        let name = (o["name"] as? String) ?? defaultName
        func fail(_ text: String) -> Problem { Problem(description: "watch '\(name)': \(text)") }
        func number(_ key: String) -> Double? { (o[key] as? NSNumber)?.doubleValue ?? (o[key] as? String).flatMap(Double.init) }
        func distance(_ key: String, default value: Double) throws -> Double {
            guard let raw = o[key] else { return value }
            let text = (raw as? String) ?? (raw as? NSNumber)?.stringValue ?? ""
            guard let metres = DistanceArgument.parse(text), metres > 0, metres.isFinite else { throw fail("\(key) '\(text)' is not a distance: \(DistanceExpression.explain(text))") }
            return metres
        }
        func list(_ key: String) -> [String] {
            if let s = o[key] as? String { return s.split(separator: ",").map(String.init) }
            return (o[key] as? [Any])?.compactMap { $0 as? String } ?? []
        }
        let area: WatchArea
        if let lat = number("lat"), let lon = number("lon") {
            guard (-90...90).contains(lat), (-180...180).contains(lon) else { throw fail("lat/lon \(lat), \(lon) is not a position") }
            area = .circle(center: Coordinate(latitude: lat, longitude: lon), radius: try distance("radius", default: 25_000))
        } else if let values = o["bbox"] as? [Any] {
            guard let box = WatchCommand.box(values.map { ($0 as? NSNumber)?.doubleValue }) else {
                throw fail("bbox must be [west, south, east, north] in degrees (south ≤ north)")
            }
            area = .box(box)
        } else if let route = o["route"] {
            let line: [Coordinate]
            if let file = route as? String {
                line = try RouteFile.read(path: file.hasPrefix("/") ? file : (folder as NSString).appendingPathComponent(file))
            } else {
                line = try RouteFile.line(from: route, what: "watch '\(name)' route")
            }
            area = .corridor(route: line, buffer: try distance("buffer", default: 2_000))
        } else {
            throw fail("give lat and lon (with radius), bbox, or route (with buffer)")
        }
        var filter = IncidentFilter(activeAt: (o["active_at"] as? String).flatMap { TimeArgument.parse($0) },
                                    since: (o["since"] as? String).flatMap { TimeArgument.parse($0) },
                                    until: (o["until"] as? String).flatMap { TimeArgument.parse($0) },
                                    search: o["search"] as? String, source: o["source"] as? String)
        do {
            // The same checks and words as the command-line options (--road, --category, --precision).
            filter.roads = try ContentFilterOptions.roads(list("road"))
            filter.categories = try ContentFilterOptions.categories(list("category"))
            filter.precisions = try ContentFilterOptions.precisions(list("precision").joined(separator: ","))
        } catch let error as ValidationError {
            throw fail(error.message)
        }
        if let c = number("min_confidence") {
            guard (0...1).contains(c) else { throw fail("min_confidence \(c) is outside 0 … 1") }
            filter.minConfidence = c
        }
        return StandingQuery(name: name, area: area, filter: filter)
    }
}

/// A route to watch along: a GeoJSON LineString (a geometry, a Feature, or the first line of a
/// FeatureCollection; a MultiLineString's lines joined).
enum RouteFile {
    static func read(path: String) throws -> [Coordinate] {
        guard let data = FileManager.default.contents(atPath: path) else { throw WatchDefinitions.Problem(description: "cannot read the route \(path)") }
        guard let json = try? JSONSerialization.jsonObject(with: data) else { throw WatchDefinitions.Problem(description: "the route \(path) is not JSON") }
        return try line(from: json, what: path)
    }

    static func line(from json: Any, what: String) throws -> [Coordinate] {
        func fail(_ text: String) -> WatchDefinitions.Problem { WatchDefinitions.Problem(description: "\(what): \(text)") }
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

    private static func positions(_ raw: Any?, fail: (String) -> WatchDefinitions.Problem) throws -> [Coordinate] {
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
