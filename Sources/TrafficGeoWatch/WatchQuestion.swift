import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore

/// What a standing query asks, written out field by field: the form a watch's state is
/// fingerprinted by (`WatchMatcher.fingerprint`). A field at its default is left out of the
/// text, so a version that adds a filter field gives every saved watch the same fingerprint as
/// before, and the watch goes on from where it was instead of sending "enter" for everything in
/// its area again. Times count by whether they are set, not by their instant (`--since -1h` or
/// `--active-at now` name another instant at each start and are still the same watch).
///
/// A new filter field: add it here, left out at its default. Renaming or removing one, or
/// reading one differently, is a new `version`.
public struct WatchQuestion: Codable, Sendable, Equatable {
    public enum Area: Codable, Sendable, Equatable {
        case circle(latitude: Double, longitude: Double, radius: Double)
        case box(west: Double, south: Double, east: Double, north: Double)
        /// The route as [latitude, longitude] pairs.
        case corridor(route: [[Double]], buffer: Double)
    }

    public var version = 1
    public var name: String
    public var area: Area
    /// Which of active-at, since and until are set ("active-at", "since", "until").
    public var times: [String]?
    public var roads: [String]?
    public var categories: [String]?
    public var words: [String]?
    public var source: String?
    public var minConfidence: Double?
    public var precisions: [String]?
    public var minSeverity: String?
    public var reports: Bool?
    /// Seconds, or -1 for never; left out at `IncidentFilter.defaultUnconfirmedAfter`.
    public var unconfirmedAfter: Double?
    /// The least of each measure asked (`IncidentFilter.minimums`), by the measure's column name
    /// ("delay_minutes": 10); left out when none is, so every measure field is here by itself.
    public var minimums: [String: Double]?

    public init(_ query: StandingQuery) {
        name = query.name
        switch query.area {
        case let .circle(center, radius): area = .circle(latitude: center.latitude, longitude: center.longitude, radius: radius)
        case let .box(b): area = .box(west: b.west, south: b.south, east: b.east, north: b.north)
        case let .corridor(route, buffer): area = .corridor(route: route.map { [$0.latitude, $0.longitude] }, buffer: buffer)
        }
        let f = query.filter
        func given<T: Collection>(_ values: T) -> T? { values.isEmpty ? nil : values }
        times = given([("active-at", f.activeAt), ("since", f.since), ("until", f.until)].compactMap { $0.1 == nil ? nil : $0.0 })
        roads = given(f.roads)
        categories = given(f.categories.map(\.rawValue))
        words = given(f.words)
        source = f.source
        minConfidence = f.minConfidence
        precisions = given(f.precisions.map(\.rawValue))
        minSeverity = f.minSeverity?.name
        reports = f.reports ? true : nil
        if f.unconfirmedAfter != IncidentFilter.defaultUnconfirmedAfter { unconfirmedAfter = f.unconfirmedAfter ?? -1 }
        minimums = f.minimums.isEmpty ? nil : Dictionary(uniqueKeysWithValues: f.minimums.map { ($0.key.column, $0.value) })
    }

    /// One line of JSON, keys sorted, defaults left out.
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? name
    }
}

/// The fingerprint watches saved before `WatchQuestion` (version 1.x up to this one): the
/// reflection of the query's area and filter as their types printed then. Frozen here field by
/// field, so that those states are still recognised after the filter gains fields; a state that
/// has it is resumed and its fingerprint rewritten (`WatchMatcher`), and its default state file
/// is found under its old name (`trafficgeo watch`).
public enum LegacyWatchFingerprint {
    public static func text(_ queries: [StandingQuery]) -> String {
        queries.map { q in
            let f = q.filter
            let times = [f.activeAt, f.since, f.until].map { $0 == nil ? "-" : "t" }.joined()
            let filter = "IncidentFilter(activeAt: nil, unconfirmedAfter: \(String(describing: f.unconfirmedAfter)), since: nil, until: nil, "
                + "roads: \(f.roads), categories: \(f.categories), words: \(f.words), source: \(String(describing: f.source)), "
                + "minConfidence: \(String(describing: f.minConfidence)), precisions: \(f.precisions), "
                + "minSeverity: \(String(describing: f.minSeverity)), reports: \(f.reports))"
            return "\(q.name)|\(area(q.area))|\(filter)|\(times)"
        }.joined(separator: "\n")
    }

    private static func area(_ area: QueryArea) -> String {
        func point(_ c: Coordinate) -> String { "TrafficGeoModel.Coordinate(latitude: \(c.latitude), longitude: \(c.longitude))" }
        switch area {
        case let .circle(center, radius): return "circle(center: \(point(center)), radius: \(radius))"
        case let .box(b): return "box(TrafficGeoProjection.LonLatBox(west: \(b.west), south: \(b.south), east: \(b.east), north: \(b.north)))"
        case let .corridor(route, buffer): return "corridor(route: [\(route.map(point).joined(separator: ", "))], buffer: \(buffer))"
        }
    }
}
