import Foundation
import Logging
import NIOCore
import PostgresNIO
import TrafficGeoConflation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// The PostGIS store's rows of reports and events (`EventRows`, for `EventMerger`), inside an
/// open write transaction: the same roles and columns as the SQLite store's (`role`, `event_id`,
/// `reports`, migration 3).
final class PostGISEventRows: EventRows {
    private let connection: PostgresConnection
    private let logger: Logger
    private let now: Double
    private var sourceNames: [Int64: String] = [:]

    init(connection: PostgresConnection, logger: Logger, now: Date) {
        self.connection = connection
        self.logger = logger
        self.now = now.timeIntervalSince1970.rounded(.down)
    }

    /// The settings the store keeps (`store_info`), or the defaults.
    static func settings(_ connection: PostgresConnection, logger: Logger) throws -> ConflationSettings {
        let rows = try connection.rows("SELECT value FROM store_info WHERE key = 'conflation'", logger: logger)
        return ConflationSettings(storedText: try rows.first?.decode(String.self))
    }

    static func setSettings(_ settings: ConflationSettings, _ connection: PostgresConnection, logger: Logger) throws {
        try connection.run("""
            INSERT INTO store_info (key, value) VALUES ('conflation', \(settings.storedText)) ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, logger: logger)
    }

    /// Merges the reports an ingest (or a geocode) wrote, by the store's settings.
    static func merge(_ connection: PostgresConnection, logger: Logger, now: Date, inserted: [Int64], updated: [Int64], ended: [Int64],
                      source: String?, released: ReleasedReports = ReleasedReports()) throws -> EventChanges {
        let merger = EventMerger(rows: PostGISEventRows(connection: connection, logger: logger, now: now), settings: try settings(connection, logger: logger))
        return try merger.merge(inserted: inserted, updated: updated, ended: ended, source: source, released: released)
    }

    /// Takes the reports of these sources out of their events (before the sources merge: an
    /// event holds one report of a source).
    static func release(_ connection: PostgresConnection, logger: Logger, sources: [Int64]) throws -> ReleasedReports {
        let rows = try connection.rows("""
            WITH taken AS (SELECT id, event_id FROM incidents WHERE source_id = ANY(\(sources)) AND role = 1)
            UPDATE incidents i SET role = 0, event_id = NULL FROM taken WHERE i.id = taken.id RETURNING taken.id, taken.event_id
            """, logger: logger).map { try $0.decode((Int64, Int64).self) }
        return ReleasedReports(reports: rows.map(\.0), events: Set(rows.map(\.1)))
    }

    /// Merges every report anew (`IncidentStore.rebuildEvents`), as the SQLite store does (the
    /// id counter never gives an id twice: the former events' ids stay theirs to take back).
    static func rebuild(_ connection: PostgresConnection, logger: Logger, now: Date) throws -> EventChanges {
        let former = try connection.rows("SELECT id, event_id FROM incidents WHERE role = 1", logger: logger).map { try $0.decode((Int64, Int64).self) }
        let removed = try connection.rows("DELETE FROM incidents WHERE role = 2 RETURNING id", logger: logger).map { try $0.decode(Int64.self) }.sorted()
        try connection.run("UPDATE incidents SET role = 0, event_id = NULL WHERE role = 1", logger: logger)
        var sources: [(name: String, reports: [Int64])] = []
        for (id, name) in try connection.rows("""
            SELECT s.id, s.name FROM sources s JOIN incidents i ON i.source_id = s.id GROUP BY s.id, s.name ORDER BY min(i.first_seen), s.id
            """, logger: logger).map({ try $0.decode((Int64, String).self) }) {
            sources.append((name, try connection.rows("SELECT id FROM incidents WHERE source_id = \(id) AND role = 0 ORDER BY id", logger: logger)
                .map { try $0.decode(Int64.self) }))
        }
        let merger = EventMerger(rows: PostGISEventRows(connection: connection, logger: logger, now: now), settings: try settings(connection, logger: logger))
        return try merger.rebuild(sources: sources, removed: removed, formerEvents: Dictionary(former, uniquingKeysWith: { a, _ in a }))
    }

    func rows(ids: [Int64]) throws -> [StoredIncident] {
        guard !ids.isEmpty else { return [] }
        return try connection.rows("SELECT \(unescaped: PostGISRows.selection) FROM incidents i WHERE i.id = ANY(\(ids))", logger: logger)
            .map { try PostGISRows.decode($0) }
    }

    func places(ids: [Int64]) throws -> [ReportPlace] {
        guard !ids.isEmpty else { return [] }
        return try places(connection.rows("""
            SELECT \(unescaped: Self.placeColumns) FROM incidents i WHERE i.id = ANY(\(ids))
            """, logger: logger))
    }

    func eventPlaces(road: String, latitudes: ClosedRange<Double>, excluding excluded: String?) throws -> [ReportPlace] {
        // Through the index of (road, latitude).
        try places(connection.rows("""
            SELECT \(unescaped: Self.placeColumns) FROM incidents i WHERE i.road = \(PostgresText.storable(road)) AND i.latitude BETWEEN \(latitudes.lowerBound) AND \(latitudes.upperBound)
              AND i.role <> 1 AND NOT (i.role = 0 AND i.source_id IS NOT DISTINCT FROM (SELECT id FROM sources WHERE name = \(PostgresText.storable(excluded))))
            """, logger: logger))
    }

    func hasEvents(besides source: String?) throws -> Bool {
        // Source by source (few), each through the identity index: no scan of the source's own rows.
        try connection.rows("""
            SELECT EXISTS (SELECT 1 FROM sources s WHERE s.name IS DISTINCT FROM \(PostgresText.storable(source)) AND EXISTS (
                SELECT 1 FROM incidents i WHERE i.source_id = s.id AND i.latitude IS NOT NULL AND i.role <> 1))
            """, logger: logger).first?.decode(Bool.self) ?? false
    }

    /// What `places` reads of a row.
    private static let placeColumns = """
        i.id, i.source_id, i.role, i.event_id, i.road, i.latitude, i.longitude, ST_AsBinary(i.segment), \
        i.properties ->> 'valid_from', i.updated, i.expires, i.ended, i.first_seen, i.category
        """

    private func places(_ rows: [PostgresRow]) throws -> [ReportPlace] {
        try rows.map { row in
            let (id, sourceID, role, event, road, lat, lon, segment) = try row.decode((Int64, Int64, Int16, Int64?, String?, Double?, Double?, ByteBuffer?).self)
            let access = PostgresRandomAccessRow(row)
            let times = ReportPlace.Times(validFrom: try access[8].decode(String?.self).flatMap(TimestampParser.parse)?.timeIntervalSince1970,
                                          updated: try access[9].decode(Double?.self), expires: try access[10].decode(Double?.self),
                                          ended: try access[11].decode(Double?.self), firstSeen: try access[12].decode(Double.self),
                                          category: try access[13].decode(String?.self).flatMap(IncidentCategory.init(rawValue:)))
            var shape: [Coordinate] = []
            if let line = segment.flatMap(SegmentWKB.decode), line.count >= 2 {
                shape = line
            } else if let lat, let lon {
                shape = [Coordinate(latitude: lat, longitude: lon)]
            }
            return ReportPlace(storeID: id, source: try sourceName(sourceID), role: EventRole(rawValue: Int(role)) ?? .report, memberOf: event,
                               road: road, shape: shape, times: times)
        }
    }

    private func sourceName(_ id: Int64) throws -> String {
        if let name = sourceNames[id] { return name }
        let name = try connection.rows("SELECT name FROM sources WHERE id = \(id)", logger: logger).first?.decode(String.self) ?? ""
        sourceNames[id] = name
        return name
    }

    func members(ofEvents ids: [Int64]) throws -> [Int64: EventMembers] {
        guard !ids.isEmpty else { return [:] }
        var members: [Int64: EventMembers] = [:]
        for row in try connection.rows("SELECT event_id, id FROM incidents WHERE event_id = ANY(\(ids)) ORDER BY id", logger: logger) {
            let (event, id) = try row.decode((Int64, Int64).self)
            members[event, default: EventMembers(ids: [], listed: [])].ids.append(id)
        }
        for row in try connection.rows("SELECT id, reports FROM incidents WHERE id = ANY(\(ids)) AND role = 2", logger: logger) {
            let (id, reports) = try row.decode((Int64, String?).self)
            members[id]?.listed = reports.map(ReportReference.parse) ?? []
        }
        return members
    }

    func promote(_ id: Int64, as eventID: Int64?) throws -> Promotion {
        try connection.run("INSERT INTO sources (name) VALUES (\(EventRole.eventSourceName)) ON CONFLICT (name) DO NOTHING", logger: logger)
        let columns = try copiedColumns()
        if let eventID {
            // The event's row, a copy of the report's under the events' source, at the id given.
            try connection.run(PostgresQuery(unsafeSQL: """
                INSERT INTO incidents (id, source_id, external_id, role, event_id, \(columns))
                SELECT $1, (SELECT id FROM sources WHERE name = $2), $1::text, 2, NULL, \(columns) FROM incidents WHERE id = $3
                """, binds: {
                    var b = PostgresBindings()
                    b.append(eventID)
                    b.append(EventRole.eventSourceName)
                    b.append(id)
                    return b
                }()), logger: logger)
            try setEvent(ofReport: id, to: eventID)
            return Promotion(event: eventID, report: id)
        }
        let next = try connection.rows("""
            UPDATE store_info SET value = (value::bigint + 1)::text WHERE key = \(PostGISSchema.nextIncidentKey) RETURNING value::bigint - 1
            """, logger: logger)
        guard let newID = try next.first?.decode(Int64.self) else { throw StoreError.writeFailed("", reason: "the store has no id counter") }
        // The report moves, as it was, to a row of its own; its row becomes the event's (under
        // the events' source, by its id): the identity (source, feed id) is unique, so the row
        // is renamed first.
        let identity = try connection.rows("SELECT source_id, external_id FROM incidents WHERE id = \(id)", logger: logger)
        guard let (sourceID, externalID) = try identity.first?.decode((Int64, String).self) else {
            throw StoreError.writeFailed("", reason: "report \(id) to merge is missing")
        }
        try connection.run("""
            UPDATE incidents SET source_id = (SELECT id FROM sources WHERE name = \(EventRole.eventSourceName)), external_id = id::text,
                role = 2, event_id = NULL WHERE id = \(id)
            """, logger: logger)
        try connection.run(PostgresQuery(unsafeSQL: """
            INSERT INTO incidents (id, source_id, external_id, role, event_id, \(columns))
            SELECT $1, $2, $3, 1, $4, \(columns) FROM incidents WHERE id = $4
            """, binds: {
                var b = PostgresBindings()
                b.append(newID)
                b.append(sourceID)
                b.append(externalID)
                b.append(id)
                return b
            }()), logger: logger)
        return Promotion(event: id, report: newID)
    }

    /// The columns a promoted report's row and its event's share as they are (all but the id,
    /// identity and role), asked once.
    private var copied: String?
    private func copiedColumns() throws -> String {
        if let copied { return copied }
        let columns = try connection.rows("""
            SELECT column_name FROM information_schema.columns WHERE table_name = 'incidents' AND table_schema = current_schema()
              AND column_name NOT IN ('id', 'role', 'event_id', 'reports', 'source_id', 'external_id') ORDER BY ordinal_position
            """, logger: logger).map { try $0.decode(String.self) }.joined(separator: ", ")
        copied = columns
        return columns
    }

    func setEvent(ofReport id: Int64, to event: Int64?) throws {
        try connection.run("UPDATE incidents SET role = \(Int16((event == nil ? EventRole.report : .member).rawValue)), event_id = \(event) WHERE id = \(id)",
                           logger: logger)
    }

    func writeEvent(_ id: Int64, _ composed: EventComposition.Composed) throws -> Bool {
        var incident = composed.incident
        incident.id = String(id)
        let hash = PostGISRows.contentHash(incident)
        let reports = PostgresText.storable(ReportReference.text(composed.reports))
        let ended = composed.ended?.timeIntervalSince1970
        let changed = try connection.rows("""
            SELECT content_hash IS DISTINCT FROM \(hash) OR reports IS DISTINCT FROM \(reports) OR ended IS DISTINCT FROM \(ended)
            FROM incidents WHERE id = \(id)
            """, logger: logger).first?.decode(Bool.self) ?? true
        guard changed else { return false }
        try PostGISIncidentWriter.replace(connection, logger: logger, storeID: id, with: incident, now: Date(timeIntervalSince1970: now))
        try connection.run("""
            UPDATE incidents SET reports = \(reports), ended = \(ended), geocode_status = NULL, geocode_error = NULL WHERE id = \(id)
            """, logger: logger)
        return true
    }

    func deleteEvent(_ id: Int64) throws {
        try connection.run("DELETE FROM incidents WHERE id = \(id) AND role = 2", logger: logger)
    }
}
