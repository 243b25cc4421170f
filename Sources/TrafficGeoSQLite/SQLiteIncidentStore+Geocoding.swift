import Foundation
import GRDB
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoStore

/// The store's side of geocoding: the answer cache, the list of incidents waiting for a
/// position, and writing a found position (with its R*Tree entry) in one small transaction.
extension SQLiteIncidentStore {
    /// Through GRDB's async access: the geocoding actor awaits it instead of blocking.
    public func cachedAnswer(for key: String) async throws -> GeocodeAnswer? {
        let json = try await asyncRead { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT response FROM geocode_cache WHERE request = ?"), arguments: [key])
        }
        return try json.map(GeocodeAnswer.init(cachedJSON:))
    }

    public func storeAnswer(_ answer: GeocodeAnswer, for key: String) async throws {
        let (status, json) = try answer.cacheEntry()
        let fetched = Date().timeIntervalSince1970
        try await asyncWrite { db in
            try db.execute(sql: """
                INSERT INTO geocode_cache(request, status, response, fetched) VALUES (?, ?, ?, ?)
                ON CONFLICT(request) DO UPDATE SET status = excluded.status, response = excluded.response, fetched = excluded.fetched
                """, arguments: [key, status, json, fetched])
        }
    }

    /// Incidents without a position that have not been given up on, oldest first.
    /// `retryNotFound` also returns those a geocoder definitely did not find before.
    public func pendingGeocodes(source: String?, retryNotFound: Bool, limit: Int) throws -> [StoredIncident] {
        try read { db in
            // Ended incidents are not worth a geocoder's time (a feed that lists one again reopens it).
            var sql = "SELECT \(IncidentRowLayout.selection) FROM incidents i WHERE i.latitude IS NULL AND i.ended IS NULL AND i.role <> 2"
            var arguments = StatementArguments()
            sql += retryNotFound ? "" : " AND (i.geocode_status IS NULL OR i.geocode_status = 'failed')"
            if let source { sql += " AND i.source_id = (SELECT id FROM sources WHERE name = ?)"; arguments += [source] }
            sql += " ORDER BY i.id LIMIT ?"
            arguments += [limit]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { IncidentRowLayout.decode($0) }
        }
    }

    /// Records a geocoding outcome: a position (indexed in the R*Tree), or why there is none.
    public func recordGeocode(storeID: Int64, result: Result<LocatedPosition?, GeocodingError>, geocoder: String) throws {
        try write { db in
            // An event's row is placed by its reports, never by a geocoder.
            guard let stored = try IncidentRowLayout.fetch(db, id: storeID), stored.role != .event else { return }
            switch result {
            case let .success(found?):
                var incident = stored.incident
                incident.position = found.position
                incident.segment = incident.segment ?? found.segment
                incident.positionSource = PositionSource(kind: .geocoder, geocoder: found.provider.isEmpty ? geocoder : found.provider,
                                                         query: found.queries.joined(separator: " | "),
                                                         precision: found.precision, confidence: found.confidence)
                let writer = try IncidentWriter(db: db, now: Date())
                try writer.replacePosition(storeID: storeID, with: incident)
                try db.execute(sql: """
                    UPDATE incidents SET geocode_status = 'found', geocode_error = NULL, geocode_attempts = geocode_attempts + 1 WHERE id = ?
                    """, arguments: [storeID])
                // Placed, it may be an event another feed reports too.
                let now = Date()
                let changes = try SQLiteEventRows.merge(db, now: now, inserted: [], updated: [storeID], ended: [], source: stored.incident.source)
                try ChangeLog.append(db, changes, at: now.timeIntervalSince1970.rounded(.down))
            case .success(nil):
                try db.execute(sql: """
                    UPDATE incidents SET geocode_status = 'not-found', geocode_error = NULL, geocode_attempts = geocode_attempts + 1 WHERE id = ?
                    """, arguments: [storeID])
            case let .failure(error):
                try db.execute(sql: """
                    UPDATE incidents SET geocode_status = 'failed', geocode_error = ?, geocode_attempts = geocode_attempts + 1 WHERE id = ?
                    """, arguments: [error.description, storeID])
            }
        }
    }

    /// Runs `block` in a write transaction, mapping database errors to `StoreError`. Not
    /// stopped (`QueryStop`) once begun: a cancelled caller's write finishes or fails on its own.
    func write<T>(_ block: (Database) throws -> T) throws -> T {
        do {
            return try QueryStop.unstoppable { try pool.write(block) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.writeFailed(path, reason: StoreError.describe(error))
        }
    }

    /// `write` through GRDB's async access, for async callers.
    func asyncWrite<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(block)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.writeFailed(path, reason: StoreError.describe(error))
        }
    }
}
