import Foundation
import GRDB
import TrafficGeoConflation
import TrafficGeoStore

/// The change feed's table (`changes`, schema v7): events are appended inside the transaction
/// that makes the change, as runs over consecutive store ids (an ingest's new incidents are one
/// run), and read back one event per sequence number.
enum ChangeLog {
    static let sequenceKey = "change_sequence"

    /// Appends one event per id, in the order given; runs of consecutive ids share a row.
    /// Returns the sequence numbers given out.
    @discardableResult
    static func append(_ db: Database, kind: ChangeKind, ids: [Int64], at: Double) throws -> ClosedRange<Int64>? {
        guard !ids.isEmpty else { return nil }
        var runs: [(first: Int64, count: Int64)] = []
        for id in ids {
            if let last = runs.last, last.first + last.count == id {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((id, 1))
            }
        }
        return try append(db, kind: kind, runs: runs, at: at)
    }

    /// Appends what happened to events (new, updated, ended, removed, in that order); the
    /// sequence numbers given out.
    @discardableResult
    static func append(_ db: Database, _ changes: EventChanges, at: Double) throws -> ClosedRange<Int64>? {
        var recorded: [ClosedRange<Int64>] = []
        for (kind, ids) in [(ChangeKind.new, changes.new), (.updated, changes.updated), (.ended, changes.ended), (.removed, changes.removed)] {
            if let r = try append(db, kind: kind, ids: ids, at: at) { recorded.append(r) }
        }
        guard let first = recorded.first, let last = recorded.last else { return nil }
        return first.lowerBound...last.upperBound
    }

    /// Appends one event per id of `range`.
    @discardableResult
    static func append(_ db: Database, kind: ChangeKind, range: Range<Int64>, at: Double) throws -> ClosedRange<Int64>? {
        guard !range.isEmpty else { return nil }
        return try append(db, kind: kind, runs: [(range.lowerBound, Int64(range.count))], at: at)
    }

    private static func append(_ db: Database, kind: ChangeKind, runs: [(first: Int64, count: Int64)], at: Double) throws -> ClosedRange<Int64> {
        let last = try latest(db)
        var next = last + 1
        let insert = try db.cachedStatement(sql: "INSERT INTO changes (seq, count, at, kind, first_id) VALUES (?, ?, ?, ?, ?)")
        for run in runs {
            try insert.execute(arguments: [next, run.count, at, kind.storeCode, run.first])
            next += run.count
        }
        try db.execute(sql: "UPDATE store_info SET value = ? WHERE key = ?", arguments: [String(next - 1), sequenceKey])
        return (last + 1)...(next - 1)
    }

    /// The last sequence number given out (0 before the first).
    static func latest(_ db: Database) throws -> Int64 {
        try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = ?", arguments: [sequenceKey]).flatMap { Int64($0) } ?? 0
    }

    /// Up to `limit` events after `sequence`, oldest first.
    static func events(_ db: Database, after sequence: Int64, limit: Int) throws -> [Change] {
        guard limit > 0 else { return [] }
        // The row holding event sequence + 1, then the rows after it.
        let rows = try Row.fetchAll(db, sql: """
            SELECT * FROM (SELECT seq, count, at, kind, first_id FROM changes WHERE seq <= ? ORDER BY seq DESC LIMIT 1)
            UNION ALL
            SELECT * FROM (SELECT seq, count, at, kind, first_id FROM changes WHERE seq > ? ORDER BY seq LIMIT ?)
            """, arguments: [sequence + 1, sequence + 1, limit])
        let runs = rows.compactMap { row -> ChangeRun? in
            guard let kind = ChangeKind(storeCode: row[3]) else { return nil }
            return ChangeRun(sequence: row[0], count: row[1], at: row[2], kind: kind, firstID: row[4])
        }
        return ChangeRun.events(runs, after: sequence, limit: limit)
    }

    static func bounds(_ db: Database) throws -> ChangeFeedBounds {
        let latest = try latest(db)
        let first = try Int64.fetchOne(db, sql: "SELECT min(seq) FROM changes") ?? latest + 1
        return ChangeFeedBounds(first: first, latest: latest)
    }

    static func first(_ db: Database, atOrAfter date: Date) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT min(seq) FROM changes WHERE at >= ?", arguments: [date.timeIntervalSince1970])
    }

    /// Forgets the events recorded before `date`; returns how many events.
    static func prune(_ db: Database, before date: Date) throws -> Int {
        let count = try Int.fetchOne(db, sql: "SELECT coalesce(sum(count), 0) FROM changes WHERE at < ?", arguments: [date.timeIntervalSince1970]) ?? 0
        try db.execute(sql: "DELETE FROM changes WHERE at < ?", arguments: [date.timeIntervalSince1970])
        return count
    }
}
