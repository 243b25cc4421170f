import Foundation
import Logging
import PostgresNIO
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoStore

/// The store's side of geocoding: the answer cache (async, as the geocoding actor asks it), the
/// incidents waiting for a position, and recording an outcome in one small transaction.
extension PostGISIncidentStore {
    public func cachedAnswer(for key: String) async throws -> GeocodeAnswer? {
        let logger = self.logger
        let key = PostgresText.storable(key)
        let json: String?
        do {
            json = try await session.withConnection { connection in
                let rows = try await connection.query("SELECT response FROM geocode_cache WHERE request = \(key)", logger: logger).get().rows
                return try rows.first?.decode(String.self)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.readFailed(location, reason: PostgresErrorText.failure(error))
        }
        return try json.map(GeocodeAnswer.init(cachedJSON:))
    }

    public func storeAnswer(_ answer: GeocodeAnswer, for key: String) async throws {
        let (status, text) = try answer.cacheEntry()
        let json = PostgresText.storable(text), fetched = Date().timeIntervalSince1970
        let logger = self.logger
        let key = PostgresText.storable(key)
        do {
            try await session.withConnection { connection in
                _ = try await connection.query("""
                    INSERT INTO geocode_cache (request, status, response, fetched) VALUES (\(key), \(status), \(json), \(fetched))
                    ON CONFLICT (request) DO UPDATE SET status = excluded.status, response = excluded.response, fetched = excluded.fetched
                    """, logger: logger).get()
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.writeFailed(location, reason: PostgresErrorText.failure(error))
        }
    }

    public func pendingGeocodes(source: String?, retryNotFound: Bool, limit: Int) throws -> [StoredIncident] {
        try readOne { connection in
            // Ended incidents are not worth a geocoder's time (a feed that lists one again reopens it).
            var query = BoundSQL("SELECT \(PostGISRows.selection) FROM incidents i WHERE i.latitude IS NULL AND i.ended IS NULL AND i.role <> 2")
            if !retryNotFound { query.sql += " AND (i.geocode_status IS NULL OR i.geocode_status = 'failed')" }
            if let source {
                let name = query.bind(PostgresText.storable(source))
                query.sql += " AND i.source_id = (SELECT id FROM sources WHERE name = \(name))"
            }
            query.sql += " ORDER BY i.id"
            if limit >= 0 { query.sql += " LIMIT \(query.bind(limit))" }
            return try connection.rows(query.query, logger: logger).map { try PostGISRows.decode($0) }
        }
    }

    public func recordGeocode(storeID: Int64, result: Result<LocatedPosition?, GeocodingError>, geocoder: String) throws {
        try write { connection in
            guard let row = try connection.rows("SELECT \(unescaped: PostGISRows.selection) FROM incidents i WHERE i.id = \(storeID)", logger: logger).first
            else { return }
            let stored = try PostGISRows.decode(row)
            // An event's row is placed by its reports, never by a geocoder.
            guard stored.role != .event else { return }
            switch result {
            case let .success(found?):
                var incident = stored.incident
                incident.position = found.position
                incident.segment = incident.segment ?? found.segment
                incident.positionSource = PositionSource(kind: .geocoder, geocoder: found.provider.isEmpty ? geocoder : found.provider,
                                                         query: found.queries.joined(separator: " | "),
                                                         precision: found.precision, confidence: found.confidence)
                try PostGISIncidentWriter.replace(connection, logger: logger, storeID: storeID, with: incident, now: Date())
                try connection.run("""
                    UPDATE incidents SET geocode_status = 'found', geocode_error = NULL, geocode_attempts = geocode_attempts + 1 WHERE id = \(storeID)
                    """, logger: logger)
                // Placed, it may be an event another feed reports too.
                let now = Date()
                let changes = try PostGISEventRows.merge(connection, logger: logger, now: now, inserted: [], updated: [storeID], ended: [],
                                                         source: stored.incident.source)
                try PostGISChangeLog.append(connection, logger: logger, changes, at: now.timeIntervalSince1970.rounded(.down))
            case .success(nil):
                try connection.run("""
                    UPDATE incidents SET geocode_status = 'not-found', geocode_error = NULL, geocode_attempts = geocode_attempts + 1 WHERE id = \(storeID)
                    """, logger: logger)
            case let .failure(error):
                try connection.run("""
                    UPDATE incidents SET geocode_status = 'failed', geocode_error = \(PostgresText.storable(error.description)),
                        geocode_attempts = geocode_attempts + 1 WHERE id = \(storeID)
                    """, logger: logger)
            }
        }
    }
}
