import Foundation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// The map-pin view of a query result (docs/architecture.md, annotations): coordinate, title, subtitle, pin
/// colour, distance and bearing, plus the incident's descriptive fields.
public struct Annotation: Sendable, Equatable, Encodable {
    public struct Point: Sendable, Equatable, Encodable {
        public var latitude: Double
        public var longitude: Double
    }

    public var id: String
    public var coordinate: Point?
    public var title: String
    public var subtitle: String?
    public var pinColor: PinColor
    public var distanceMeters: Double?
    public var bearingDegrees: Double?
    /// Along a route (`along`, serve's `route=`): metres driven from its start to where the
    /// incident is passed; `distanceMeters` is then how far off the route it is.
    public var alongRouteMeters: Double?
    public var road: String?
    public var category: String?
    public var updated: String?
    public var expires: String?
    public var weblink: String?
    public var source: String
    public var positionSource: String?
    public var precision: String?
    /// 0…1 for geocoded positions: how sure the geocoder is (docs/geocoding.md, "Confidence").
    public var confidence: Double?
    /// When it ended: its source stopped listing it (a snapshot), or the feed said it is over.
    public var ended: String?
    /// Whether it is still on when the answer is written: queries without `--active-at` answer
    /// with incidents that are over too, and every format says which those are.
    public var state: IncidentState
    /// For an unconfirmed one: when it was last heard of (`IncidentFilter.lastHeard`), which is
    /// why it is no longer taken as in effect.
    public var lastHeard: String?
    /// What the official standards say beyond the common fields (severity, validity, record
    /// types, direction, delay, lanes: `Incident.detailProperties`), where the feed gave it.
    public var details: [String: String]
    /// The store id of the event it is (or, answered with `--reports`, belongs to): what `serve`
    /// links to and `watch` follows.
    public var event: Int64
    /// The reports the event was built from, one per feed that reported it (docs/conflation.md);
    /// none for a report answered with `--reports`.
    public var reports: [ReportReference]

    /// "active" (in effect), "upcoming" (begins later: `IncidentFilter.began`, or resumes later:
    /// outside its recurring schedule's hours, `IncidentFilter.isOffSchedule`), "expired" (its
    /// expiry time has passed), "ended" (its source no longer lists it, or says it is over) or
    /// "unconfirmed" (it gives no end and has not been heard of for the question's
    /// `IncidentFilter.answerUnconfirmedAfter`, 7 days unless asked: a file read once, not a feed
    /// followed). Each says what it is now, whatever time `--active-at` asked about.
    public enum IncidentState: String, Sendable, Equatable, Encodable {
        case active, upcoming, expired, ended, unconfirmed

        public init(_ stored: StoredIncident, at now: Date) {
            if let ended = stored.ended, ended <= now {
                self = .ended
            } else if let expires = stored.incident.expires, expires <= now {
                self = .expired
            } else if IncidentFilter.isUnconfirmed(stored, at: now, after: IncidentFilter.answerUnconfirmedAfter) {
                self = .unconfirmed
            } else if !IncidentFilter.began(stored.incident, by: now) || IncidentFilter.isOffSchedule(stored.incident, at: now) {
                self = .upcoming
            } else {
                self = .active
            }
        }
    }

    public init(_ result: QueryResult, now: Date = Date()) {
        let i = result.incident
        id = i.id
        coordinate = i.position.map { Point(latitude: Self.round($0.latitude, 6), longitude: Self.round($0.longitude, 6)) }
        title = i.title
        subtitle = i.summary.map(SubtitleText.eventFirst)
        pinColor = i.pinColor
        distanceMeters = result.distance.map { Self.round($0, 1) }
        // At the query point itself there is no direction (the geodesic solution says 180°, "S").
        bearingDegrees = (result.distance ?? .infinity) < Self.noBearingWithin ? nil : result.bearing.map { Self.round($0, 1) }
        alongRouteMeters = result.alongRoute.map { Self.round($0, 1) }
        road = i.road
        category = i.category?.rawValue
        updated = i.updated.map(TimestampParser.format)
        expires = i.expires.map(TimestampParser.format)
        weblink = i.weblink
        source = i.source
        positionSource = i.positionSource?.kind.rawValue
        precision = i.positionSource?.precision?.rawValue
        confidence = i.positionSource?.confidence
        ended = result.stored.ended.map(TimestampParser.format)
        state = IncidentState(result.stored, at: now)
        lastHeard = state == .unconfirmed ? TimestampParser.format(IncidentFilter.lastHeard(result.stored)) : nil
        details = i.properties.filter { Self.detailKeys.contains($0.key) }
        if let level = details["severity"].flatMap(Severity.init(stored:)) { details[Self.severityLevelProperty] = level.name }
        event = result.stored.event
        reports = result.stored.reports
    }

    /// The reports as a JSON array of objects: source, id, updated, positionSource.
    public var reportsJSON: String {
        "[" + reports.map { r in
            var o = JSONObjectText()
            o.add("source", r.source)
            o.add("id", r.id)
            o.add("updated", r.updated.map(TimestampParser.format))
            o.add("positionSource", r.positionSource)
            return o.closed()
        }.joined(separator: ",") + "]"
    }

    private static let detailKeys = Set(Incident.detailProperties)

    /// The details in their order, with the key each format writes them under: JSON's
    /// camelCase beside CSV's and the GeoPackage's snake_case ("valid_from" / "validFrom").
    /// The severity on trafficgeo's one scale (`Severity`: lowest … highest), beside the feed's
    /// own word (`severity`), in every format: what `--min-severity` and `--sort severity` use.
    public static let severityLevelProperty = "severity_level"

    public static let detailColumns: [(property: String, json: String)] = Incident.detailProperties.flatMap { name in
        name == "severity" ? [name, severityLevelProperty] : [name]
    }.map { name in
        let parts = name.split(separator: "_")
        return (name, parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined())
    }

    /// Results nearer than this (metres) have no bearing.
    static let noBearingWithin = 0.5

    static func round(_ value: Double, _ digits: Int) -> Double { JSONObjectText.round(value, digits) }

    /// "1.2 km" / "850 m".
    public static func formatDistance(_ metres: Double) -> String {
        metres >= 1000 ? String(format: "%.1f km", metres / 1000) : String(format: "%.0f m", metres)
    }

    /// Compass point of a bearing: N, NE, E, ...
    public static func compass(_ bearing: Double) -> String {
        let points = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
        return points[Int(((bearing.truncatingRemainder(dividingBy: 360) + 360 + 22.5) / 45).rounded(.down)) % 8]
    }
}
