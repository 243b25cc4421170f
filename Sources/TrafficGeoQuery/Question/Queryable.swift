import Foundation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// A property a CQL2 filter may name (`serve`'s `/collections/incidents/queryables`), and the
/// query model's field it asks through: `road = 'A3'` is `--road A3`, `severity >= 'high'` is
/// `--min-severity high`, `updated >= TIMESTAMP(…)` is `--since …`. A filter's comparisons mean
/// what those fields mean (a road matches an incident's other roads too; a geocoder's confidence
/// is asked of geocoded positions only); `CQL2Question` translates them.
///
/// A new queryable is a case here with its description and type, and its comparisons in
/// `CQL2Question.condition`; the queryables document and the OpenAPI text follow from `allCases`.
/// A measure's field (`QueryField.measure`) is one by its declaration alone (`measure`).
public enum Queryable: Sendable, CaseIterable, Hashable {
    case geometry, road, category, severity, updated, source, confidence, precision, title, id
    /// A measure a filter field declares (`QueryField.measure`: `delay >= 10` is `min-delay=10m`).
    case measure(QueryField)

    public static let allCases: [Queryable] = [.geometry, .road, .category, .severity, .updated, .source, .confidence, .precision, .title, .id]
        + QueryField.measureFields.map(Queryable.measure)

    /// Its name in a filter and the queryables document.
    public var rawValue: String {
        switch self {
        case .geometry: "geometry"
        case .road: "road"
        case .category: "category"
        case .severity: "severity"
        case .updated: "updated"
        case .source: "source"
        case .confidence: "confidence"
        case .precision: "precision"
        case .title: "title"
        case .id: "id"
        case let .measure(field): field.measure?.queryable ?? field.rawValue
        }
    }

    public init?(rawValue: String) {
        guard let found = Self.byName[rawValue] else { return nil }
        self = found
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    public enum ValueType: Sendable { case string, number, time, geometry }

    public var type: ValueType {
        switch self {
        case .geometry: return .geometry
        case .updated: return .time
        case .confidence, .measure: return .number
        default: return .string
        }
    }

    /// The largest a number may be, where it has a top: confidence is a share (0 … 1); a
    /// measure (a delay in minutes, lanes) has none. Numbers start at 0.
    public var maximum: Double? {
        if case .confidence = self { return 1 }
        return nil
    }

    /// The model's field a comparison of this property is asked through (nil: checked on each
    /// candidate incident, the store is not asked).
    public var field: QueryField? {
        switch self {
        case .geometry: return .bbox
        case .road: return .road
        case .category: return .category
        case .severity: return .minSeverity
        case .updated: return .since
        case .source: return .source
        case .confidence: return .minConfidence
        case .precision: return .precision
        case let .measure(field): return field
        case .title, .id: return nil
        }
    }

    /// The values a property takes, where they are a list.
    public var values: [String]? {
        switch self {
        case .category: return IncidentCategory.allCases.map(\.rawValue)
        case .severity: return Severity.allCases.map(\.name)
        case .precision: return GeocodePrecision.allCases.map(\.rawValue)
        default: return nil
        }
    }

    public var title: String {
        switch self {
        case .geometry: return "Position"
        case .road: return "Road"
        case .category: return "Kind of incident"
        case .severity: return "Severity"
        case .updated: return "Last updated"
        case .source: return "Feed"
        case .confidence: return "Geocoder's confidence"
        case .precision: return "Geocoder's precision"
        case .title: return "Headline"
        case .id: return "Feed's id"
        case let .measure(field): return field.measure?.title ?? field.rawValue
        }
    }

    /// What a comparison means and which it takes.
    public var description: String {
        switch self {
        case .geometry:
            return "The incident's position. S_INTERSECTS(geometry, BBOX(west,south,east,north) | POINT(lon lat) | POLYGON((…)) | MULTIPOLYGON(…)), longitude first (CRS84); a BBOX with west > east crosses the antimeridian."
        case .road:
            return "A road reference (A3, M25, I-25, fr:A7) or a road's name with its number; matches the incident's road and the other roads it names, as the road parameter does. =, <>, IN, LIKE (on the road as the feed wrote it), IS NULL."
        case .category:
            return "The kind of incident, as the category parameter. =, <>, IN, LIKE, IS NULL."
        case .severity:
            return "On trafficgeo's scale lowest < low < medium < high < highest (the feed's word mapped onto it, as the min-severity parameter); incidents whose feed gives none, or a word off the scale (unknown), are not <, <=, =, <>, >, >= anything (as NULL in SQL; NOT keeps them out too). =, <>, <, <=, >, >=, IS NULL."
        case .updated:
            return "When the feed last updated the incident: TIMESTAMP('2025-05-19T04:06:00Z'). =, <>, <, <=, >, >= (as the since and until parameters), IS NULL."
        case .source:
            return "The feed's name as given at ingest; an event matches if any of its reports came from it. =, <>, IN, LIKE."
        case .confidence:
            return "How surely the geocoder placed the incident, 0 to 1, as the min-confidence parameter: a position a feed gave counts as surer than any geocode (it passes >, >= and <>, not =, < or <=) and has no confidence of its own (IS NULL). =, <>, <, <=, >, >=, IS NULL."
        case .precision:
            return "What the geocoder found (\(GeocodePrecision.allCases.map(\.rawValue).joined(separator: ", "))), as the precision parameter: positions a feed gave match; an incident with no position is none. =, <>, IN."
        case .title:
            return "The incident's headline as the feed wrote it (case counts). =, <>, IN, LIKE."
        case .id:
            return "The feed's id of the incident (an event's: any of its reports'). =, <>, IN, LIKE."
        case let .measure(field):
            return field.measure?.queryableDescription(parameter: field.name(on: .parameter)) ?? ""
        }
    }

    /// The property's texts on an incident, for LIKE, =, IN and IS NULL checked on each incident
    /// (none: the incident has none). An event's feed and id are also each of its reports', as the
    /// store's `source` condition reads them.
    func texts(of stored: StoredIncident) -> [String] {
        switch self {
        case .source: return [stored.incident.source] + stored.reports.map(\.source)
        case .id: return [stored.incident.id] + stored.reports.map(\.id)
        default: return text(of: stored).map { [$0] } ?? []
        }
    }

    /// The property a field of the model reads (`until` is `updated`'s other bound).
    static func asked(through field: QueryField) -> Queryable? {
        allCases.first { $0.field == field || (field == .until && $0 == .updated) }
    }

    /// Whether the incident lacks the property, so that comparing it is unknown (CQL2's
    /// three-valued logic). A geocoder's confidence and precision are lacking only where there is
    /// no position: a feed's position counts as surer than any geocode and matches every precision.
    func isMissing(on stored: StoredIncident) -> Bool {
        switch self {
        case .confidence, .precision, .geometry: return stored.incident.position == nil
        default: return texts(of: stored).isEmpty
        }
    }

    /// The property's text on the incident itself (nil: it has none).
    func text(of stored: StoredIncident) -> String? {
        let i = stored.incident
        switch self {
        case .geometry: return i.position.map { "\($0.longitude) \($0.latitude)" }
        case .road: return i.road
        case .category: return i.category?.rawValue
        // A word not on the scale ("unknown") is no severity to compare: as NULL, so that
        // `severity < 'high'` and `NOT severity >= 'high'` agree (both leave it out).
        case .severity: return i.properties["severity"].flatMap { Severity(stored: $0) == nil ? nil : $0 }
        case .updated: return i.updated.map(TimestampParser.format)
        case .source: return i.source
        case .confidence: return i.positionSource?.confidence.map { "\($0)" }
        case .precision: return i.positionSource?.precision?.rawValue
        case .title: return i.title
        case .id: return i.id
        case let .measure(field): return field.measure?.measure.value(of: i).map(PlainNumber.text)
        }
    }
}
