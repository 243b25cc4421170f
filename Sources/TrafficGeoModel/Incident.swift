import Foundation

/// One road-traffic incident as a feed reports it, plus where its position came from.
///
/// `source` and `id` together identify an incident: re-reading the same feed updates it in place.
public struct Incident: Sendable, Equatable {
    public static let unknownTitle = "Unknown Incident"
    /// The property that says why the feed's own position was not used (out of range, unreadable,
    /// half given): the incident is kept without it and geocoded from its words.
    public static let positionProblemProperty = "position_problem"
    /// The part of its source an incident was read from, when the source comes in parts that are
    /// fetched separately (the Autobahn API: "A1/warning"); a snapshot of some parts ends only
    /// what those parts no longer list (`SnapshotScope`).
    public static let snapshotPartProperty = "feed_part"
    /// The roads an incident is on besides `road` (a WZDx feature on I-80 and I-35, an Open511
    /// event's second road), normal forms joined by "|": a road filter finds it on any of them.
    public static let otherRoadsProperty = "other_roads"
    /// The country the feed says it publishes for (ISO 3166 alpha-2, lower case: DATEX II's
    /// supplier or publication creator, "de" for the Autobahn API), so that a road filter can tell
    /// A7 in France ("fr:A7") from A7 in Germany ("de:A7").
    public static let countryProperty = "country"
    /// The details the official standards (DATEX II, WZDx, Open511) give, kept as properties under
    /// these names and shown by every output (docs/feeds.md): in this order.
    public static let detailProperties = [
        "severity", "probability", "valid_from", "record_types", "road_name",
        // The roads besides `road` (`otherRoadsProperty`): shown, so that what `--road` finds an incident by is seen.
        otherRoadsProperty,
        "direction", "delay_minutes", "lanes_restricted",
        // A comment's `key : value` lines (National Highways: `StructuredComment`).
        "location", "reason", "event_status", "return_to_normal",
        // Open511's recurring schedule (`RecurringSchedule`), in its canonical JSON form.
        "schedule",
    ]

    /// The feed it came from (a URL, a file path, `stdin`, or a name given with `--source`).
    public var source: String
    /// The feed's own identifier of the entry.
    public var id: String
    public var title: String
    public var summary: String?
    public var weblink: String?
    public var iconURL: String?
    public var updated: Date?
    public var expires: Date?
    /// Normalised road reference such as "A4" or "B54" (see `RoadReference`).
    public var road: String?
    public var category: IncidentCategory?
    public var position: Coordinate?
    /// The affected stretch from start to end, when the feed or the geocoder knows it.
    public var segment: [Coordinate]?
    public var positionSource: PositionSource?
    /// Everything else the feed said about the entry, kept as text.
    public var properties: [String: String]
    /// The feed itself says the incident is over (a DATEX II record cancelled or ended, an
    /// Open511 event ARCHIVED, a validity that ended): the store ends it at this time (or at the
    /// ingest's, if that is earlier), as a snapshot ends what it no longer lists. Not stored as a field.
    public var endedAt: Date?

    public init(
        source: String, id: String, title: String = Incident.unknownTitle, summary: String? = nil,
        weblink: String? = nil, iconURL: String? = nil, updated: Date? = nil, expires: Date? = nil,
        road: String? = nil, category: IncidentCategory? = nil, position: Coordinate? = nil,
        segment: [Coordinate]? = nil, positionSource: PositionSource? = nil, properties: [String: String] = [:],
        endedAt: Date? = nil
    ) {
        self.source = source
        self.id = id
        self.title = title
        self.summary = summary
        self.weblink = weblink
        self.iconURL = iconURL
        self.updated = updated
        self.expires = expires
        self.road = road
        self.category = category
        self.position = position
        self.segment = segment
        self.positionSource = positionSource
        self.properties = properties
        self.endedAt = endedAt
    }

    /// The roads besides `road` (`otherRoadsProperty`).
    public var otherRoads: [String] {
        properties[Self.otherRoadsProperty].map { $0.split(separator: "|").map(String.init) } ?? []
    }

    /// Sets `road` to the first of these roads (in their normal forms) and keeps the others
    /// (`otherRoads`), each once.
    public mutating func setRoads(_ roads: [String]) {
        (road, properties[Self.otherRoadsProperty]) = Self.roadAndOthers(roads)
    }

    /// The road and the `otherRoadsProperty` value of a list of roads: the first, and the
    /// others each once, `|`-separated (nil when there are none).
    public static func roadAndOthers(_ roads: [String]) -> (road: String?, others: String?) {
        var seen: Set<String> = []
        let distinct = roads.filter { !$0.isEmpty && !$0.contains("|") && seen.insert($0).inserted }
        return (distinct.first, distinct.count > 1 ? distinct.dropFirst().joined(separator: "|") : nil)
    }

    /// Whether it is on `road` (its own or one of its other roads), in `country` if one is asked
    /// and the feed gave one (a feed that names no country is not refused by one).
    public func isOn(road wanted: String, country: String?) -> Bool {
        guard road == wanted || otherRoads.contains(wanted) else { return false }
        guard let country, let own = properties[Self.countryProperty] else { return true }
        return own == country
    }

    /// The pin colour for map output; incidents of unknown kind are notices (green).
    public var pinColor: PinColor { (category ?? .other).pinColor }
}

/// Where an incident's position came from.
public struct PositionSource: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The feed carried coordinates (GeoRSS, Autobahn JSON, GeoJSON, CSV).
        case feed
        /// The weblink carried `lat=`/`lon=` query items.
        case weblink
        /// A geocoder resolved the road title.
        case geocoder
    }

    public var kind: Kind
    public var geocoder: String?
    public var query: String?
    public var precision: GeocodePrecision?
    public var confidence: Double?

    public init(kind: Kind, geocoder: String? = nil, query: String? = nil,
                precision: GeocodePrecision? = nil, confidence: Double? = nil) {
        self.kind = kind
        self.geocoder = geocoder
        self.query = query
        self.precision = precision
        self.confidence = confidence
    }

    public static let feed = PositionSource(kind: .feed)
    public static let weblink = PositionSource(kind: .weblink)
}

/// How exactly a geocoded position is known.
public enum GeocodePrecision: String, Sendable, Codable, CaseIterable {
    /// A motorway junction the geocoder knows by name.
    case junction
    /// An address or point of interest (free-form queries).
    case address
    /// A settlement.
    case town
    /// Only the road (or its route) is known.
    case road
    case none
}
