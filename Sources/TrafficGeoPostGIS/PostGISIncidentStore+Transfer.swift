import Foundation
import Logging
import NIOCore
import PostgresNIO
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoStore

/// Handing over everything the database holds, and filling an empty one (`trafficgeo copy`).
extension PostGISIncidentStore: TransferableStore {
    public func exportRecords(_ receive: (StoreRecord) throws -> Void) throws {
        // The receiver's errors (the other store of a copy) are its own, not this database's.
        func handle(_ record: StoreRecord) throws { try asCaller { try receive(record) } }
        try read { connection in
            for row in try connection.rows("""
                SELECT name, renamed_from, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries, last_snapshot
                FROM sources ORDER BY id
                """, logger: logger) {
                let (name, renamedFrom, attempt, success, error, errorAt, empty, failures, entries, snapshot) =
                    try row.decode((String, String?, Double?, Double?, String?, Double?, Int32, Int32, Int32?, Double?).self)
                func date(_ t: Double?) -> Date? { t.map(Date.init(timeIntervalSince1970:)) }
                try handle(.source(SourceRecord(name: name, renamedFrom: renamedFrom, health: FeedHealth(
                    source: name, lastAttempt: date(attempt), lastSuccess: date(success), lastError: error, lastErrorAt: date(errorAt),
                    emptyStreak: Int(empty), failureStreak: Int(failures), lastEntries: entries.map(Int.init), lastSnapshot: date(snapshot)))))
            }
            var after = Int64.min
            let n = PostGISRows.selectionCount
            while true {
                let rows = try connection.rows("""
                    SELECT \(unescaped: PostGISRows.selection), i.geocode_status, i.geocode_error, i.geocode_attempts FROM incidents i
                    WHERE i.id > \(after) ORDER BY i.id LIMIT 5000
                    """, logger: logger)
                for row in rows {
                    let access = PostgresRandomAccessRow(row)
                    let stored = try PostGISRows.decode(access)
                    after = stored.storeID
                    try handle(.incident(IncidentRecord(stored: stored, geocodeStatus: try access[n].decode(String?.self),
                                                        geocodeError: try access[n + 1].decode(String?.self),
                                                        geocodeAttempts: Int(try access[n + 2].decode(Int32.self)))))
                }
                if rows.count < 5000 { break }
            }
            for row in try connection.rows("SELECT seq, count, at, kind, first_id FROM changes ORDER BY seq", logger: logger) {
                let (seq, count, at, code, first) = try row.decode((Int64, Int64, Double, Int16, Int64).self)
                guard let kind = ChangeKind(storeCode: Int64(code)) else { continue }
                try handle(.changes(ChangeRun(sequence: seq, count: count, at: at, kind: kind, firstID: first)))
            }
            try handle(.changeSequence(try PostGISChangeLog.latest(connection, logger: logger)))
            for row in try connection.rows("SELECT request, status, response, fetched FROM geocode_cache ORDER BY request COLLATE \"C\"", logger: logger) {
                let (request, status, response, fetched) = try row.decode((String, String, String, Double).self)
                try handle(.geocodeAnswer(CachedGeocodeAnswer(request: request, status: status, response: response, fetched: fetched)))
            }
            for row in try connection.rows("""
                SELECT road, name_key, observer, name, kind, latitude, longitude, origin FROM junction_observations
                ORDER BY road COLLATE "C", name_key COLLATE "C", observer COLLATE "C"
                """, logger: logger) {
                let (road, key, observer, name, kind, lat, lon, origin) = try row.decode((String, String, String, String, String, Double, Double, String).self)
                try handle(.junctionObservation(JunctionObservationRecord(nameKey: key, observer: observer, observation: JunctionObservation(
                    road: road, name: name, kind: JunctionMention.Kind(rawValue: kind) ?? .unspecified,
                    coordinate: Coordinate(latitude: lat, longitude: lon), origin: origin))))
            }
            for row in try connection.rows("""
                SELECT road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions
                ORDER BY road COLLATE "C", name_key COLLATE "C"
                """, logger: logger) {
                let (road, key, name, kind, lat, lon, support, spread, learnedFrom) =
                    try row.decode((String, String, String, String, Double, Double, Int32, Double, String).self)
                try handle(.junction(JunctionRecord(nameKey: key, junction: KnownJunction(
                    road: road, name: name, kind: JunctionMention.Kind(rawValue: kind) ?? .unspecified,
                    coordinate: Coordinate(latitude: lat, longitude: lon), support: Int(support), spreadMeters: spread, learnedFrom: learnedFrom))))
            }
        }
    }

    public func importRecords(_ read: ((StoreRecord) throws -> Void) throws -> Void) throws -> TransferSummary {
        var summary = TransferSummary()
        try write { connection in
            let occupied = try connection.rows("SELECT EXISTS (SELECT 1 FROM incidents) OR EXISTS (SELECT 1 FROM sources)", logger: logger)
            guard try occupied.first?.decode(Bool.self) == false else {
                throw StoreError.writeFailed(location, reason: "it already holds incidents or sources: copy into a new, empty store")
            }
            var sourceIDs: [String: Int64] = [:]
            var batch = PostGISRows.Batch()
            // What the batch's columns do not carry: ended times, geocoding status, the place among reports and events.
            var extra: (id: [Int64], ended: ColumnArray<Double>, status: ColumnArray<String>, error: ColumnArray<String>, attempts: [Int32],
                        role: [Int16], event: ColumnArray<Int64>, reports: ColumnArray<String>) = ([], .init(), .init(), .init(), [], [], .init(), .init())
            var maxID: Int64 = 0
            func flush() throws {
                if batch.count > 0 {
                    try connection.run(batch.insertQuery, logger: logger)
                    batch = PostGISRows.Batch()
                }
                if !extra.id.isEmpty {
                    try connection.run("""
                        UPDATE incidents i SET ended = u.ended, geocode_status = u.status, geocode_error = u.error, geocode_attempts = u.attempts,
                            role = u.role, event_id = u.event, reports = u.reports
                        FROM unnest(\(extra.id)::bigint[], \(extra.ended)::float8[], \(extra.status)::text[], \(extra.error)::text[], \(extra.attempts)::integer[],
                                    \(extra.role)::smallint[], \(extra.event)::bigint[], \(extra.reports)::text[])
                             AS u(id, ended, status, error, attempts, role, event, reports)
                        WHERE i.id = u.id
                        """, logger: logger)
                    extra = ([], .init(), .init(), .init(), [], [], .init(), .init())
                }
            }
            try read { record in
                summary.count(record)
                switch record {
                case let .source(s):
                    func t(_ d: Date?) -> Double? { d?.timeIntervalSince1970 }
                    let row = try connection.rows("""
                        INSERT INTO sources (name, renamed_from, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries,
                                             last_snapshot)
                        VALUES (\(PostgresText.storable(s.name)), \(PostgresText.storable(s.renamedFrom)), \(t(s.health.lastAttempt)), \(t(s.health.lastSuccess)),
                                \(PostgresText.storable(s.health.lastError)), \(t(s.health.lastErrorAt)), \(Int32(s.health.emptyStreak)),
                                \(Int32(s.health.failureStreak)), \(s.health.lastEntries.map { Int32($0) }), \(t(s.health.lastSnapshot)))
                        RETURNING id
                        """, logger: logger)
                    sourceIDs[s.name] = try row.first?.decode(Int64.self)
                case let .incident(r):
                    // An event's row is filed under the events' source by its own id (`PostGISEventRows`).
                    let isEvent = r.stored.role == .event
                    let sourceName = isEvent ? EventRole.eventSourceName : r.stored.incident.source
                    guard let source = sourceIDs[sourceName] else {
                        throw StoreError.writeFailed(location, reason: "incident \(r.stored.storeID) names the source \(sourceName), which the copy did not list")
                    }
                    var incident = r.stored.incident
                    if isEvent { incident.id = String(r.stored.storeID) }
                    batch.append(storeID: r.stored.storeID, sourceID: source, incident: incident,
                                 firstSeen: r.stored.firstSeen.timeIntervalSince1970, lastChanged: r.stored.lastChanged.timeIntervalSince1970)
                    maxID = max(maxID, r.stored.storeID)
                    if r.stored.ended != nil || r.geocodeStatus != nil || r.geocodeError != nil || r.geocodeAttempts != 0 || r.stored.role != .report {
                        extra.id.append(r.stored.storeID)
                        extra.ended.append(r.stored.ended?.timeIntervalSince1970)
                        extra.status.append(PostgresText.storable(r.geocodeStatus))
                        extra.error.append(PostgresText.storable(r.geocodeError))
                        extra.attempts.append(Int32(clamping: r.geocodeAttempts))
                        extra.role.append(Int16(r.stored.role.rawValue))
                        extra.event.append(r.stored.memberOf)
                        extra.reports.append(isEvent ? PostgresText.storable(ReportReference.text(r.stored.memberReports)) : nil)
                    }
                    if batch.count >= 5000 { try flush() }
                case let .changes(c):
                    try connection.run("""
                        INSERT INTO changes (seq, count, at, kind, first_id) VALUES (\(c.sequence), \(c.count), \(c.at), \(Int16(c.kind.storeCode)), \(c.firstID))
                        """, logger: logger)
                case let .changeSequence(latest):
                    try connection.run("UPDATE store_info SET value = \(String(latest)) WHERE key = \(PostGISSchema.sequenceKey)", logger: logger)
                case let .geocodeAnswer(a):
                    try connection.run("""
                        INSERT INTO geocode_cache (request, status, response, fetched)
                        VALUES (\(PostgresText.storable(a.request)), \(a.status), \(PostgresText.storable(a.response)), \(a.fetched))
                        ON CONFLICT (request) DO UPDATE SET status = excluded.status, response = excluded.response, fetched = excluded.fetched
                        """, logger: logger)
                case let .junctionObservation(o):
                    let x = o.observation
                    try connection.run("""
                        INSERT INTO junction_observations (road, name_key, observer, name, kind, latitude, longitude, origin)
                        VALUES (\(PostgresText.storable(x.road)), \(PostgresText.storable(o.nameKey)), \(PostgresText.storable(o.observer)),
                                \(PostgresText.storable(x.name)), \(x.kind.rawValue), \(x.coordinate.latitude), \(x.coordinate.longitude), \(PostgresText.storable(x.origin)))
                        ON CONFLICT (road, name_key, observer) DO NOTHING
                        """, logger: logger)
                case let .junction(j):
                    let x = j.junction
                    try connection.run("""
                        INSERT INTO junctions (road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from)
                        VALUES (\(PostgresText.storable(x.road)), \(PostgresText.storable(j.nameKey)), \(PostgresText.storable(x.name)), \(x.kind.rawValue),
                                \(x.coordinate.latitude), \(x.coordinate.longitude), \(Int32(clamping: x.support)), \(x.spreadMeters), \(PostgresText.storable(x.learnedFrom)))
                        ON CONFLICT (road, name_key) DO NOTHING
                        """, logger: logger)
                }
            }
            try flush()
            // New incidents continue after the highest id copied (store ids are never reused).
            let next = try connection.rows("SELECT value FROM store_info WHERE key = \(PostGISSchema.nextIncidentKey)", logger: logger)
                .first.flatMap { Int64(try $0.decode(String.self)) } ?? 1
            try connection.run("UPDATE store_info SET value = \(String(max(next, maxID + 1))) WHERE key = \(PostGISSchema.nextIncidentKey)", logger: logger)
        }
        if summary.incidents >= Self.analyzeAfter {
            _ = try? session.withConnection { try $0.run("ANALYZE incidents", logger: logger) }
        }
        return summary
    }
}
