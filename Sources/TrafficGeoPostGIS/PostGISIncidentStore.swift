import Foundation
import Logging
import NIOCore
import PostgresNIO
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// Incidents in a PostgreSQL database with PostGIS, for users who outgrow one file: several
/// writers and many readers at once, replicas, years of history.
///
///     let store = try PostGISIncidentStore(url: "postgresql://traffic@db.example/traffic?sslmode=verify-full")
///
/// The same `IncidentStore` as the SQLite file, with the same exact answers: nearest by
/// PostGIS's `<->` index order with enough candidates, re-ranked by Karney's geodesic distance;
/// within by `ST_DWithin` and the same exact check (`PostGISIncidentStore+Queries`). Each ingest
/// is one transaction (a crash or a broken connection leaves the database as it was); writers
/// take an advisory lock, one at a time, so that change-feed numbers commit in order. Readers
/// never wait for writers.
public final class PostGISIncidentStore: IncidentStore {
    public let connectionInfo: PostgresLocation
    /// The URL without its password.
    public var location: String { connectionInfo.redacted }
    let session: PostgresSession
    var logger: Logger { session.logger }

    /// Opens the store in the database `url` names, creating or migrating its tables unless
    /// `readOnly` (then a database without them, or with older ones, is refused with what to do).
    @available(*, noasync, message: "connects and migrates, blocking its thread: use StoreOpening.open (async) or StoreThreads.run")
    public convenience init(url: String, readOnly: Bool = false) throws {
        let location: PostgresLocation
        do { location = try PostgresLocation(url: url) } catch let error as StoreURLError {
            throw StoreError.cannotOpen(error.url, reason: StoreFailure(.other, error.problem))
        }
        try self.init(location: location, readOnly: readOnly)
    }

    @available(*, noasync, message: "connects and migrates, blocking its thread: use StoreOpening.open (async) or StoreThreads.run")
    public init(location: PostgresLocation, readOnly: Bool = false) throws {
        connectionInfo = location
        session = try PostgresSession(location: location)
        do {
            if readOnly {
                let version = try session.withConnection { try PostGISSchema.version($0, logger: session.logger) }
                if version == 0 {
                    throw StoreError.cannotOpen(location.redacted, reason: StoreFailure(.missing, "the database holds no trafficgeo store (an ingest into it makes one)"))
                }
                if version < PostGISSchema.latestVersion {
                    throw StoreError.incompatible(location.redacted, reason: StoreFailure(.otherVersion, "its tables are at version \(version) and must be upgraded once (an ingest into it upgrades them)"))
                }
            } else {
                try PostGISSchema.migrate(session)
            }
            let version = try session.withConnection { try PostGISSchema.version($0, logger: session.logger) }
            if version > PostGISSchema.latestVersion {
                throw StoreError.incompatible(location.redacted, reason: StoreFailure(.otherVersion, "its tables are at version \(version), newer than this trafficgeo knows (\(PostGISSchema.latestVersion)); upgrade trafficgeo"))
            }
        } catch let error as StoreError {
            session.close()
            throw error
        } catch {
            session.close()
            throw StoreError.cannotOpen(location.redacted, reason: PostgresErrorText.failure(error))
        }
    }

    deinit { session.close() }

    // MARK: - Transactions

    /// An error of the caller's own closure run inside a transaction (an output that cannot be
    /// written, the other store of a copy): it leaves the store as thrown, and is never
    /// reported as a failure of the database.
    struct CallerError: Error {
        let underlying: any Error
    }

    /// Runs the caller's `body` inside a transaction, its errors marked as the caller's.
    func asCaller<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw CallerError(underlying: error) }
    }

    /// Runs `body` in a read transaction (one snapshot: REPEATABLE READ).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try reportingReadFailure { try session.transaction(readOnly: true, isolation: "REPEATABLE READ", body) }
    }

    /// Runs `body` as one statement's worth of reading, without a transaction of its own.
    func readOne<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try reportingReadFailure { try session.withConnection(body) }
    }

    /// The database's errors in `body` as a failed read of this store; the caller's own
    /// (`CallerError`) and the store's as they are.
    func reportingReadFailure<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CallerError {
            throw error.underlying
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.readFailed(location, reason: PostgresErrorText.failure(error))
        }
    }

    /// Runs `body` in a write transaction holding the writer lock.
    func write<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try session.transaction { connection in
                try connection.run("SELECT pg_advisory_xact_lock(\(PostGISSchema.writerLock))", logger: logger)
                return try body(connection)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as FeedError {
            throw error
        } catch {
            throw StoreError.writeFailed(location, reason: PostgresErrorText.failure(error))
        }
    }

    // MARK: - Ingest

    public func ingest(source: String, format: FeedFormat?, adopting formerNames: FormerSourceNames, snapshot: SnapshotScope?, now: Date,
                       read: ((FeedEvent) throws -> Void) throws -> Void) throws -> IngestSummary {
        // The steps every store takes (IngestRun), with this store's statements.
        let summary = try write { connection in
            try IngestRun.run(PostGISIngestSteps(store: self, connection: connection, now: now), source: source, format: format,
                              adopting: formerNames, snapshot: snapshot, now: now, read: read)
        }
        // Many new rows: fresh statistics now, so that the next query is planned on them (the
        // planner would not use the GiST index on a table it believes empty), not when
        // autovacuum gets to it.
        if summary.new >= Self.analyzeAfter {
            _ = try? session.withConnection { try $0.run("ANALYZE incidents", logger: logger) }
        }
        return summary
    }

    /// New incidents from one ingest after which the table's statistics are refreshed.
    static let analyzeAfter = 10_000

    /// Makes the sources an older version filed this feed under part of `source`: renamed, or
    /// merged into it by `SourceMergePlan` (the rule the SQLite store follows too).
    func adopt(_ connection: PostgresConnection, _ former: FormerSourceNames, into source: String) throws -> ReleasedReports {
        let candidates = former.given.map { ($0, false) } + former.migrated.map { ($0, true) }
        var released = ReleasedReports()
        for (name, onlyIfMigrated) in candidates where name != source {
            guard let row = try connection.rows("SELECT id, renamed_from FROM sources WHERE name = \(name)", logger: logger).first else { continue }
            let (id, renamedFrom) = try row.decode((Int64, String?).self)
            if onlyIfMigrated, renamedFrom == nil { continue }
            let existing = try connection.rows("SELECT id FROM sources WHERE name = \(source)", logger: logger).first?.decode(Int64.self)
            // The two sources become one, and an event holds one report of a source.
            let taken = try PostGISEventRows.release(connection, logger: logger, sources: [id] + (existing.map { [$0] } ?? []))
            released.reports += taken.reports
            released.events.formUnion(taken.events)
            let moving = try connection.rows("SELECT id, external_id, last_changed FROM incidents WHERE source_id = \(id)", logger: logger).map { row in
                let (storeID, externalID, changed) = try row.decode((Int64, String, Double).self)
                return SourceMergePlan.Copy(storeID: storeID, externalID: externalID, changed: changed)
            }
            var twins: [String: SourceMergePlan.Copy] = [:]
            if let existing {
                for row in try connection.rows("""
                    SELECT n.id, n.external_id, n.last_changed FROM incidents n JOIN incidents o ON o.external_id = n.external_id
                    WHERE n.source_id = \(existing) AND o.source_id = \(id)
                    """, logger: logger) {
                    let (storeID, externalID, changed) = try row.decode((Int64, String, Double).self)
                    twins[externalID] = SourceMergePlan.Copy(storeID: storeID, externalID: externalID, changed: changed)
                }
            }
            let plan = SourceMergePlan(oldName: name, newName: source, moving: moving, twins: twins)
            try applyObservers(connection, plan)
            if !plan.losers.isEmpty { try connection.run("DELETE FROM incidents WHERE id = ANY(\(plan.losers))", logger: logger) }
            if let existing {
                try connection.run("UPDATE incidents SET source_id = \(existing) WHERE source_id = \(id)", logger: logger)
                try connection.run("DELETE FROM sources WHERE id = \(id)", logger: logger)
            } else {
                try connection.run("UPDATE sources SET name = \(source), renamed_from = NULL WHERE id = \(id)", logger: logger)
            }
        }
        // Losers of the merge are gone.
        if !released.reports.isEmpty {
            let left = Set(try connection.rows("SELECT id FROM incidents WHERE id = ANY(\(released.reports))", logger: logger).map { try $0.decode(Int64.self) })
            released.reports = released.reports.filter { left.contains($0) }
        }
        return released
    }

    // MARK: - Reading

    public func incident(id: Int64) throws -> StoredIncident? {
        try readOne { connection in
            try connection.rows("SELECT \(unescaped: PostGISRows.selection) FROM incidents i WHERE i.id = \(id)", logger: logger)
                .first.map { try PostGISRows.decode($0) }
        }
    }

    public func incidents(ids: [Int64]) throws -> [Int64: StoredIncident] {
        guard !ids.isEmpty else { return [:] }
        return try readOne { connection in try fetch(connection, ids: ids).filter { $0.value.role != .member } }
    }

    func fetch(_ connection: PostgresConnection, ids: [Int64]) throws -> [Int64: StoredIncident] {
        var found: [Int64: StoredIncident] = [:]
        for row in try connection.rows("SELECT \(unescaped: PostGISRows.selection) FROM incidents i WHERE i.id = ANY(\(ids))", logger: logger) {
            let stored = try PostGISRows.decode(row)
            found[stored.storeID] = stored
        }
        return found
    }

    // MARK: - Change feed

    public func changes(after sequence: Int64, limit: Int) throws -> [Change] {
        try readOne { try PostGISChangeLog.events($0, logger: logger, after: sequence, limit: limit) }
    }

    public func changeFeedBounds() throws -> ChangeFeedBounds {
        try read { try PostGISChangeLog.bounds($0, logger: logger) }
    }

    public func firstChange(atOrAfter date: Date) throws -> Int64? {
        try readOne { try PostGISChangeLog.first($0, logger: logger, atOrAfter: date) }
    }

    // MARK: - Feed health

    public func recordFetch(_ report: FetchReport) throws {
        try write { connection in
            let name = PostgresText.storable(report.source)
            try connection.run("INSERT INTO sources (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING", logger: logger)
            let at = report.at.timeIntervalSince1970
            let failed = !report.errors.isEmpty
            let emptyRead = report.readSomething && report.entries == 0
            try connection.run("""
                UPDATE sources SET
                    last_attempt = \(at),
                    last_success = CASE WHEN \(report.readSomething) THEN \(at) ELSE last_success END,
                    last_entries = CASE WHEN \(report.readSomething) THEN \(report.entries) ELSE last_entries END,
                    last_error = CASE WHEN \(failed) THEN \(PostgresText.storable(report.errors.joined(separator: "; "))) ELSE last_error END,
                    last_error_at = CASE WHEN \(failed) THEN \(at) ELSE last_error_at END,
                    failure_streak = CASE WHEN \(failed) THEN failure_streak + 1 ELSE 0 END,
                    empty_streak = CASE WHEN \(emptyRead) THEN empty_streak + 1 WHEN \(!report.readSomething) THEN empty_streak ELSE 0 END
                WHERE name = \(name)
                """, logger: logger)
        }
    }

    public func feedHealth() throws -> [FeedHealth] {
        try readOne { try feedHealth($0) }
    }

    private func feedHealth(_ connection: PostgresConnection) throws -> [FeedHealth] {
        try connection.rows("""
            SELECT name, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries, last_snapshot
            FROM sources WHERE last_attempt IS NOT NULL ORDER BY name
            """, logger: logger).map { row in
            let (name, attempt, success, error, errorAt, empty, failures, entries, snapshot) =
                try row.decode((String, Double?, Double?, String?, Double?, Int32, Int32, Int32?, Double?).self)
            func date(_ t: Double?) -> Date? { t.map(Date.init(timeIntervalSince1970:)) }
            return FeedHealth(source: name, lastAttempt: date(attempt), lastSuccess: date(success), lastError: error, lastErrorAt: date(errorAt),
                              emptyStreak: Int(empty), failureStreak: Int(failures), lastEntries: entries.map(Int.init), lastSnapshot: date(snapshot))
        }
    }

    // MARK: - Maintenance

    @discardableResult
    public func pruneExpired(before date: Date) throws -> Int {
        try delete { "expires IS NOT NULL AND expires < \($0.bind(date.timeIntervalSince1970))" }
    }

    @discardableResult
    public func pruneEnded(before date: Date) throws -> Int {
        try delete { "ended IS NOT NULL AND ended < \($0.bind(date.timeIntervalSince1970))" }
    }

    /// Deletes the reports matching a condition of ours; the events that lose reports are
    /// composed again (or go with their last one). Records what happened to events; returns how
    /// many reports went.
    private func delete(where condition: (inout BoundSQL) -> String) throws -> Int {
        try write { connection in
            var query = BoundSQL()
            query.sql = "DELETE FROM incidents WHERE (" + condition(&query) + ") AND role <> 2 RETURNING id, event_id"
            let rows = try connection.rows(query.query, logger: logger).map { try $0.decode((Int64, Int64?).self) }
            guard !rows.isEmpty else { return 0 }
            let now = Date()
            let merger = EventMerger(rows: PostGISEventRows(connection: connection, logger: logger, now: now),
                                     settings: try PostGISEventRows.settings(connection, logger: logger))
            var changes = try merger.recompose(Set(rows.compactMap(\.1)))
            changes.removed = (rows.filter { $0.1 == nil }.map(\.0) + changes.removed).sorted()
            try PostGISChangeLog.append(connection, logger: logger, changes, at: now.timeIntervalSince1970.rounded(.down))
            return rows.count
        }
    }

    // MARK: - Reports and events

    public func conflationSettings() throws -> ConflationSettings {
        try readOne { try PostGISEventRows.settings($0, logger: logger) }
    }

    public func setConflationSettings(_ settings: ConflationSettings) throws {
        try write { try PostGISEventRows.setSettings(settings, $0, logger: logger) }
    }

    public func sourceReading(for source: String) throws -> SourceReading? {
        try readOne { connection in
            let rows = try connection.rows("SELECT value FROM store_info WHERE key = \(SourceReading.storeKey(for: source))", logger: logger)
            return SourceReading(storedText: try rows.first?.decode(String.self))
        }
    }

    public func setSourceReading(_ reading: SourceReading?, for source: String) throws {
        try write { connection in
            let key = SourceReading.storeKey(for: source)
            if let reading, !reading.isEmpty {
                try connection.run("""
                    INSERT INTO store_info (key, value) VALUES (\(key), \(reading.storedText)) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, logger: logger)
            } else {
                try connection.run("DELETE FROM store_info WHERE key = \(key)", logger: logger)
            }
        }
    }

    public func rebuildEvents() throws -> EventChanges {
        try write { connection in
            let now = Date()
            let changes = try PostGISEventRows.rebuild(connection, logger: logger, now: now)
            try PostGISChangeLog.append(connection, logger: logger, changes, at: now.timeIntervalSince1970.rounded(.down))
            return changes
        }
    }

    @discardableResult
    public func pruneChanges(before date: Date) throws -> Int {
        try write { try PostGISChangeLog.prune($0, logger: logger, before: date) }
    }

    public func limitStatements(to limit: Duration) {
        let ms = max(1, Int(limit.inSeconds * 1000))
        session.statementTimeout.withLockedValue { $0 = ms }
    }

    public func locatedExtent() throws -> LonLatBox? {
        try read { connection in
            guard let row = try connection.rows(
                "SELECT min(longitude), min(latitude), max(longitude), max(latitude) FROM incidents WHERE latitude IS NOT NULL AND role <> 1",
                logger: logger).first else { return nil }
            let (west, south, east, north) = try row.decode((Double?, Double?, Double?, Double?).self)
            guard let west, let south, let east, let north else { return nil }
            return LonLatBox(west: west, south: south, east: east, north: north)
        }
    }

    public func incidentCounts(now: Date) throws -> IncidentCounts {
        try read { connection in
            let row = try connection.rows("""
                SELECT count(*), count(*) FILTER (WHERE \(unescaped: Self.inEffect(now)))
                FROM incidents i WHERE role <> 1
                """, logger: logger).first
            let (all, active) = try row?.decode((Int, Int).self) ?? (0, 0)
            return IncidentCounts(all: all, active: active)
        }
    }

    /// In effect at `now` as `--active-at now` asks (`IncidentFilter.inEffectSQL`, the default
    /// `unconfirmedAfter`), table aliased `i`, with literals trafficgeo writes (digits, a "T").
    private static func inEffect(_ now: Date) -> String {
        IncidentFilter.inEffectSQL(seconds: "\(now.timeIntervalSince1970)", start: "'\(IncidentFilter.startText(of: now))'",
                                   cut: unconfirmedCut(now))
    }

    /// The instant before which a report without an end is unconfirmed at `now`, as a literal.
    private static func unconfirmedCut(_ now: Date) -> String {
        "\(now.timeIntervalSince1970 - IncidentFilter.defaultUnconfirmedAfter)"
    }

    public func statistics(now: Date) throws -> StoreStatistics {
        try read { connection in
            var stats = StoreStatistics(path: location, indexCRS: "EPSG:4326")
            stats.indexKind = PostGISSchema.indexDescription
            stats.hasBlockIndex = false
            let t = now.timeIntervalSince1970
            // Events.
            if let row = try connection.rows("""
                SELECT count(*), count(latitude), count(ended), count(*) FILTER (WHERE ended IS NULL AND expires IS NOT NULL AND expires <= \(t)),
                       count(*) FILTER (WHERE \(unescaped: Self.inEffect(now))),
                       count(*) FILTER (WHERE role = 2), min(updated), max(updated),
                       count(*) FILTER (WHERE i.expires IS NULL AND i.ended IS NULL AND NOT \(unescaped: IncidentFilter.confirmedSQL(cut: Self.unconfirmedCut(now))))
                FROM incidents i WHERE role <> 1
                """, logger: logger).first {
                let (total, located, ended, expired, active, merged, oldest, newest, unconfirmed)
                    = try row.decode((Int, Int, Int, Int, Int, Int, Double?, Double?, Int).self)
                stats.total = total
                stats.located = located
                stats.expired = expired
                stats.ended = ended
                stats.active = active
                stats.unconfirmed = unconfirmed
                stats.upcoming = total - active - expired - ended - unconfirmed
                stats.mergedEvents = merged
                stats.oldestUpdate = oldest.map(Date.init(timeIntervalSince1970:))
                stats.newestUpdate = newest.map(Date.init(timeIntervalSince1970:))
            }
            /// Counts of the events (or the `rows` asked for) by `column`.
            func counts(_ column: String, rows: String = "i.role <> 1", limit: Int? = nil) throws -> [(String, Int)] {
                // `column` and `rows` are our own expressions, never user input.
                try connection.rows("""
                    SELECT coalesce(\(unescaped: column), '(none)') AS k, count(*) AS n FROM incidents i WHERE \(unescaped: rows) GROUP BY k \
                    ORDER BY n DESC, k \(unescaped: limit.map { "LIMIT \($0)" } ?? "")
                    """, logger: logger).map { try $0.decode((String, Int).self) }
            }
            func count(_ sql: String) throws -> Int {
                try connection.rows(PostgresQuery(unsafeSQL: sql), logger: logger).first?.decode(Int.self) ?? 0
            }
            stats.reports = try count("SELECT count(*) FROM incidents WHERE role <> 2")
            // Reports by source; events by kind, road and how they are placed.
            stats.bySource = try counts("(SELECT name FROM sources WHERE id = i.source_id)", rows: "i.role <> 2")
            stats.byCategory = try counts("i.category")
            stats.byRoad = try counts("i.road", limit: 10)
            stats.byPositionSource = try counts("CASE i.position_source WHEN 0 THEN 'feed' WHEN 1 THEN 'weblink' WHEN 2 THEN 'geocoder' END")
            stats.geocodeCacheEntries = try count("SELECT count(*) FROM geocode_cache")
            stats.knownJunctions = try count("SELECT count(*) FROM junctions")
            stats.junctionRoads = try count("SELECT count(DISTINCT road) FROM junctions WHERE road <> ''")
            stats.changeFeed = try PostGISChangeLog.bounds(connection, logger: logger)
            stats.feedHealth = try feedHealth(connection)
            stats.fileBytes = Int64(try count("SELECT pg_database_size(current_database())"))
            return stats
        }
    }

    /// Checks what the schema cannot: positions and their geography agree, and the GiST index
    /// finds every located incident once.
    public func checkIntegrity() throws -> [String] {
        try read { connection in
            var problems: [String] = []
            let located = try connection.rows("SELECT count(*) FROM incidents WHERE latitude IS NOT NULL", logger: logger).first?.decode(Int.self) ?? 0
            let mismatched = try connection.rows("""
                SELECT count(*) FROM incidents WHERE (latitude IS NULL) <> (position IS NULL)
                   OR (latitude IS NOT NULL AND (ST_Y(position::geometry) <> latitude OR ST_X(position::geometry) <> longitude))
                """, logger: logger).first?.decode(Int.self) ?? 0
            if mismatched > 0 { problems.append("\(mismatched) incidents whose geography differs from their latitude and longitude") }
            // Through the index: every located incident lies within 20,100 km (more than half the
            // Earth's circumference on the sphere) of any point.
            try connection.run("SET LOCAL enable_seqscan = off", logger: logger)
            let indexed = try connection.rows("""
                SELECT count(*) FROM incidents WHERE ST_DWithin(position, 'SRID=4326;POINT(0 0)'::geography, 20100000, false)
                """, logger: logger).first?.decode(Int.self) ?? 0
            if indexed != located { problems.append("the spatial index finds \(indexed) of \(located) located incidents") }
            let orphans = try connection.rows("SELECT count(*) FROM incidents i WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = i.source_id)",
                                              logger: logger).first?.decode(Int.self) ?? 0
            if orphans > 0 { problems.append("\(orphans) incidents of no source") }
            return problems
        }
    }
}
