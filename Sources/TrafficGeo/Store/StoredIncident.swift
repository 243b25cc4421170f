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

    init(row: Row) {
        storeID = row["id"]
        var incident = Incident(source: row["source"], id: row["external_id"], title: row["title"])
        incident.summary = row["summary"]
        incident.weblink = row["weblink"]
        incident.iconURL = row["icon_url"]
        incident.updated = (row["updated"] as Double?).map(Date.init(timeIntervalSince1970:))
        incident.expires = (row["expires"] as Double?).map(Date.init(timeIntervalSince1970:))
        incident.road = row["road"]
        incident.category = (row["category"] as String?).flatMap(IncidentCategory.init(rawValue:))
        if let lat = row["latitude"] as Double?, let lon = row["longitude"] as Double? {
            incident.position = Coordinate(latitude: lat, longitude: lon)
        }
        incident.segment = (row["segment"] as String?).flatMap(GeoJSONText.parseCoordinates)
        if let kind = (row["position_source"] as String?).flatMap(PositionSource.Kind.init(rawValue:)) {
            incident.positionSource = PositionSource(
                kind: kind, geocoder: row["geocoder"], query: row["geocode_query"],
                precision: (row["geocode_precision"] as String?).flatMap(GeocodePrecision.init(rawValue:)),
                confidence: row["geocode_confidence"])
        }
        incident.properties = (row["properties"] as String?).map(GeoJSONText.parseObject) ?? [:]
        self.incident = incident
        firstSeen = Date(timeIntervalSince1970: row["first_seen"])
        lastChanged = Date(timeIntervalSince1970: row["last_changed"])
    }

    static func fetch(_ db: Database, id: Int64) throws -> StoredIncident? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM incidents WHERE id = ?"), arguments: [id]).map(StoredIncident.init(row:))
    }
}
