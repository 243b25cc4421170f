import Foundation
import GRDB
import GRDBSQLite
import NIOPosix
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore
import TrafficGeoSupport

/// What the store can say about itself: feed health, extent, counts, statistics, integrity.
extension SQLiteIncidentStore {
    // MARK: - Feed health

    public func recordFetch(_ report: FetchReport) throws {
        try write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO sources (name) VALUES (?)", arguments: [report.source])
            let at = report.at.timeIntervalSince1970
            let failed = !report.errors.isEmpty
            try db.execute(sql: """
                UPDATE sources SET
                    last_attempt = ?,
                    last_success = CASE WHEN ? THEN ? ELSE last_success END,
                    last_entries = CASE WHEN ? THEN ? ELSE last_entries END,
                    last_error = CASE WHEN ? THEN ? ELSE last_error END,
                    last_error_at = CASE WHEN ? THEN ? ELSE last_error_at END,
                    failure_streak = CASE WHEN ? THEN failure_streak + 1 ELSE 0 END,
                    empty_streak = CASE WHEN ? THEN empty_streak + 1 WHEN ? THEN empty_streak ELSE 0 END
                WHERE name = ?
                """, arguments: [at, report.readSomething, at, report.readSomething, report.entries,
                                 failed, report.errors.joined(separator: "; "), failed, at,
                                 failed, report.readSomething && report.entries == 0, !report.readSomething, report.source])
        }
    }

    public func feedHealth() throws -> [FeedHealth] {
        try read { db in try Self.feedHealth(db) }
    }

    private static func feedHealth(_ db: Database) throws -> [FeedHealth] {
            try Row.fetchAll(db, sql: """
                SELECT name, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries, last_snapshot
                FROM sources WHERE last_attempt IS NOT NULL ORDER BY name
                """).map { row in
                func date(_ k: Int) -> Date? { (row[k] as Double?).map(Date.init(timeIntervalSince1970:)) }
                return FeedHealth(source: row[0], lastAttempt: date(1), lastSuccess: date(2), lastError: row[3], lastErrorAt: date(4),
                                  emptyStreak: row[5], failureStreak: row[6], lastEntries: row[7], lastSnapshot: date(8))
            }
    }

    /// Counts for `trafficgeo stats`.
    public func locatedExtent() throws -> LonLatBox? {
        try read { db in
            let sql = "SELECT min(longitude), min(latitude), max(longitude), max(latitude) FROM incidents WHERE latitude IS NOT NULL AND role <> 1"
            guard let row = try Row.fetchOne(db, sql: sql), let west = row[0] as Double?, let south = row[1] as Double?,
                  let east = row[2] as Double?, let north = row[3] as Double? else { return nil }
            return LonLatBox(west: west, south: south, east: east, north: north)
        }
    }

    public func incidentCounts(now: Date) throws -> IncidentCounts {
        try read { db in
            let (inEffect, arguments) = IncidentFilter.inEffectSQL(at: now, unconfirmedAfter: IncidentFilter.defaultUnconfirmedAfter)
            let row = try Row.fetchOne(db, sql: "SELECT count(*), sum(\(inEffect)) FROM incidents i WHERE role <> 1", arguments: arguments)
            return IncidentCounts(all: row?[0] ?? 0, active: row?[1] ?? 0)
        }
    }

    public func statistics(now: Date) throws -> StoreStatistics {
        try read { db in
            var stats = StoreStatistics(path: path, indexCRS: indexCRS)
            let t = now.timeIntervalSince1970
            // Events, each in one state (`StoreStatistics.ended`; ended by now: nothing ends later).
            let (inEffect, inEffectArguments) = IncidentFilter.inEffectSQL(at: now, unconfirmedAfter: IncidentFilter.defaultUnconfirmedAfter)
            let (unconfirmed, unconfirmedArguments) = IncidentFilter.unconfirmedSQL(at: now, after: IncidentFilter.defaultUnconfirmedAfter)
            if let row = try Row.fetchOne(db, sql: """
                SELECT count(*) AS total, count(latitude) AS located,
                       count(ended) AS ended,
                       sum(ended IS NULL AND expires IS NOT NULL AND expires <= ?) AS expired,
                       sum(\(unconfirmed)) AS unconfirmed,
                       sum(\(inEffect)) AS active,
                       sum(role = 2) AS merged,
                       min(updated) AS oldest, max(updated) AS newest
                FROM incidents i WHERE role <> 1
                """, arguments: [t] + unconfirmedArguments + inEffectArguments) {
                stats.total = row["total"]
                stats.located = row["located"]
                stats.expired = row["expired"] ?? 0
                stats.unconfirmed = row["unconfirmed"] ?? 0
                stats.active = row["active"] ?? 0
                stats.ended = row["ended"] ?? 0
                stats.upcoming = stats.total - stats.active - stats.expired - stats.ended - stats.unconfirmed
                stats.mergedEvents = row["merged"] ?? 0
                stats.oldestUpdate = (row["oldest"] as Double?).map(Date.init(timeIntervalSince1970:))
                stats.newestUpdate = (row["newest"] as Double?).map(Date.init(timeIntervalSince1970:))
            }
            stats.reports = try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents WHERE role <> 2") ?? 0
            stats.indexBlocks = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(BlockIndex.table) WHERE id > 0") ?? 0
            stats.indexSingles = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(BlockIndex.table) WHERE id < 0") ?? 0
            // Reports by source; events by kind, road and how they are placed.
            stats.bySource = try Self.counts(db, "(SELECT name FROM sources WHERE id = source_id)", rows: "role <> 2")
            stats.byCategory = try Self.counts(db, "category")
            stats.byRoad = try Self.counts(db, "road", limit: 10)
            stats.byPositionSource = try Self.counts(db, PositionSource.Kind.nameSQL("position_source"))
            stats.geocodeCacheEntries = try Int.fetchOne(db, sql: "SELECT count(*) FROM geocode_cache") ?? 0
            stats.knownJunctions = try Int.fetchOne(db, sql: "SELECT count(*) FROM junctions") ?? 0
            stats.junctionRoads = try Int.fetchOne(db, sql: "SELECT count(DISTINCT road) FROM junctions WHERE road <> ''") ?? 0
            stats.changeFeed = try ChangeLog.bounds(db)
            stats.feedHealth = try Self.feedHealth(db)
            stats.fileBytes = Self.fileSize(path) + Self.fileSize(path + "-wal")
            return stats
        }
    }

    /// Counts of the events (or the `rows` asked for) by `column`.
    private static func counts(_ db: Database, _ column: String, rows: String = "role <> 1", limit: Int = -1) throws -> [(String, Int)] {
        // `column` and `rows` are our own names or expressions, never user input.
        try Row.fetchAll(db, sql: """
            SELECT coalesce(\(column), '(none)') AS k, count(*) AS n FROM incidents WHERE \(rows) GROUP BY k ORDER BY n DESC, k LIMIT ?
            """, arguments: [limit]).map { ($0["k"], $0["n"]) }
    }

    private static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Checks the database file and that the spatial index finds every located incident once.
    public func checkIntegrity() throws -> [String] {
        try read { db in
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            problems += try BlockIndex.verify(db)
            return problems
        }
    }
}
