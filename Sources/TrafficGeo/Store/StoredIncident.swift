import Foundation
import GRDB

/// An incident as the store keeps it: the incident plus its store id and bookkeeping times.
public struct StoredIncident: Sendable, Equatable {
    /// The store's id (the R*Tree key).
    public var storeID: Int64
    public var incident: Incident
    public var firstSeen: Date
    public var lastChanged: Date

    public init(storeID: Int64, incident: Incident, firstSeen: Date, lastChanged: Date) {
        self.storeID = storeID
        self.incident = incident
        self.firstSeen = firstSeen
        self.lastChanged = lastChanged
    }

    /// The columns `init(row:startingAt:)` decodes, in order, for a table aliased `i`.
    /// Decoding by position: GRDB's lookup by name lower-cases every name on every access, which
    /// was the largest cost of a radius query.
    public static let selection = """
        i.id, (SELECT name FROM sources WHERE id = i.source_id), i.external_id, i.title, i.summary, i.weblink, i.icon_url, i.updated, i.expires, i.road, \
        i.category, i.latitude, i.longitude, i.segment, i.position_source, i.geocoder, i.geocode_query, \
        i.geocode_precision, i.geocode_confidence, i.properties, i.first_seen, coalesce(i.last_changed, i.first_seen)
        """

    init(row: Row, startingAt c: Int = 0) {
        storeID = row[c]
        var incident = Incident(source: row[c + 1], id: row[c + 2], title: row[c + 3])
        incident.summary = row[c + 4]
        incident.weblink = row[c + 5]
        incident.iconURL = row[c + 6]
        incident.updated = (row[c + 7] as Double?).map(Date.init(timeIntervalSince1970:))
        incident.expires = (row[c + 8] as Double?).map(Date.init(timeIntervalSince1970:))
        incident.road = row[c + 9]
        incident.category = (row[c + 10] as String?).flatMap(IncidentCategory.init(rawValue:))
        if let lat = row[c + 11] as Double?, let lon = row[c + 12] as Double? {
            incident.position = Coordinate(latitude: lat, longitude: lon)
        }
        incident.segment = (row[c + 13] as String?).flatMap(GeoJSONText.parseCoordinates)
        if let kind = (row[c + 14] as Int64?).flatMap(PositionSource.Kind.init(storeCode:)) {
            incident.positionSource = PositionSource(
                kind: kind, geocoder: row[c + 15], query: row[c + 16],
                precision: (row[c + 17] as String?).flatMap(GeocodePrecision.init(rawValue:)),
                confidence: row[c + 18])
        }
        incident.properties = (row[c + 19] as String?).map(GeoJSONText.parseObject) ?? [:]
        self.incident = incident
        firstSeen = Date(timeIntervalSince1970: row[c + 20])
        lastChanged = Date(timeIntervalSince1970: row[c + 21])
    }

    static func fetch(_ db: Database, id: Int64) throws -> StoredIncident? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(selection) FROM incidents i WHERE i.id = ?"), arguments: [id]).map { StoredIncident(row: $0) }
    }
}

extension PositionSource.Kind {
    /// The kind as stored: a small integer (0 and 1 take no bytes in an SQLite record, a word
    /// 4 to 8; a million feed positions, 4 MB).
    var storeCode: Int64 {
        switch self {
        case .feed: 0
        case .weblink: 1
        case .geocoder: 2
        }
    }

    init?(storeCode: Int64) {
        switch storeCode {
        case 0: self = .feed
        case 1: self = .weblink
        case 2: self = .geocoder
        default: return nil
        }
    }

    /// SQL for the name of the stored kind in `column`.
    static func nameSQL(_ column: String) -> String {
        let cases: [Self] = [.feed, .weblink, .geocoder]
        return "CASE \(column) " + cases.map { "WHEN \($0.storeCode) THEN '\($0.rawValue)'" }.joined(separator: " ") + " END"
    }
}
