import Foundation
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoStore

/// Standing queries from a watches file (`trafficgeo watch --watches FILE`): a JSON array (or
/// `{"watches": [...]}`) of objects
///
///     {"name": "home", "lat": 50.94, "lon": 6.96, "radius": "25km", "category": ["accident"]}
///     {"name": "commute", "route": "route.geojson", "buffer": "2km", "road": ["A4"]}
///     {"name": "ruhr", "bbox": [6.5, 51.2, 7.8, 51.7]}
///
/// whose keys are the query model's fields (`QueryField`, spelt `active_at`, `min_confidence`):
/// every value is read by the same parsers as the command line's options and `serve`'s
/// parameters, so it means the same and is refused with the same words. A key that is not a
/// field is refused too: a misspelt filter silently ignored would watch for something else.
public enum WatchDefinitions {
    /// A watches file that cannot be used, and why (with the watch's name).
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public static func read(path: String, now: Date = Date()) throws -> [StandingQuery] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "cannot read \(path)") }
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            // Foundation's own words say where ("… around line 3, column 7"); its description does not.
            let at = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw Problem(description: "\(path) is not JSON (a watches file is a JSON array of watches, docs/live.md): \(at ?? error.localizedDescription)")
        }
        guard let list = (json as? [Any]) ?? ((json as? [String: Any])?["watches"] as? [Any]) else {
            throw Problem(description: "\(path): expected a JSON array of watches (or {\"watches\": [...]})")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var names = Set<String>()
        return try list.enumerated().map { k, item in
            guard let object = item as? [String: Any] else { throw Problem(description: "\(path): watch \(k + 1) is not an object") }
            let query = try standingQuery(object, defaultName: "watch\(k + 1)", folder: folder, now: now)
            guard names.insert(query.name).inserted else { throw Problem(description: "\(path): two watches are named '\(query.name)'") }
            return query
        }
    }

    /// Fields a watch does not take (`QueryField.surfaces`): its events come as they happen, not
    /// in an order, and a watch follows events (the change feed's), not single reports.
    static let notWatched = Set(QueryField.allCases).subtracting(QueryField.taken(on: .watchesFile))

    /// One watch: its name, its area (exactly one of lat/lon, bbox, route) and its filter.
    public static func standingQuery(_ object: [String: Any], defaultName: String, folder: String, now: Date = Date()) throws -> StandingQuery {
        let name = (object["name"] as? String) ?? defaultName
        func fail(_ text: String) -> Problem { Problem(description: "watch '\(name)': \(text)") }
        var text = QueryText()
        var inlineRoute: Any?
        for (key, value) in object.sorted(by: { $0.key < $1.key }) where key != "name" {
            guard let field = QueryField(name: key, on: .watchesFile), !Self.notWatched.contains(field) else {
                let known = (["name"] + QueryField.allCases.filter { !Self.notWatched.contains($0) }.map { $0.name(on: .watchesFile) }).joined(separator: ", ")
                throw fail("'\(key)' is not a key of a watch; it takes: \(known)")
            }
            switch value {
            case is NSNull:
                // `min_delay: null`, or YAML's `min_delay:` with nothing after it: no condition,
                // as serve reads an empty parameter.
                continue
            case let string as String: text.add(field, string)
            case let number as NSNumber: text.add(field, number.stringValue)
            case let array as [Any] where field == .bbox:
                // [west, south, east, north]: the numbers as the box's text.
                text.add(field, array.map { ($0 as? NSNumber)?.stringValue ?? "\($0)" }.joined(separator: ","))
            case let array as [Any] where field.isList:
                for item in array {
                    guard let string = item as? String else { throw fail("\(key) must be a list of strings") }
                    text.add(field, string)
                }
            case let geometry as [String: Any] where field == .route:
                inlineRoute = geometry
                text.add(field, "(inline)")
            default:
                let kind = value is [Any] ? "a list" : value is [String: Any] ? "an object" : "\(value)"
                let wanted = field == .bbox ? "[west, south, east, north] or \"w,s,e,n\"" : field == .route ? "a file name or a GeoJSON LineString"
                    : field.isList ? "a text or a list of texts" : "a text or a number, as \(field.name(on: .commandLine)) takes it"
                throw fail("\(key) is \(kind); it takes \(wanted)")
            }
        }
        do {
            let area = try text.area { route in
                if let inlineRoute { return try RouteLine.line(from: inlineRoute, what: "watch '\(name)' route") }
                return try RouteLine.read(path: route.hasPrefix("/") ? route : (folder as NSString).appendingPathComponent(route))
            }
            guard let area else { throw fail("give lat and lon (with radius), bbox, or route (with buffer)") }
            return try StandingQuery(name: name, area: area, text: text, now: now)
        } catch let error as QueryTextError {
            throw fail(error.message(on: .watchesFile))
        }
    }
}
