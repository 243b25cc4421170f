import Foundation
import Logging
import PostgresNIO
import TrafficGeoConflation
import TrafficGeoStore

/// The change feed's table in PostgreSQL: the same runs over consecutive store ids as the SQLite
/// store's `ChangeLog`, appended inside the transaction that makes the change (which holds the
/// writer lock, so sequence numbers commit in order).
enum PostGISChangeLog {
    /// Appends one event per id, in the order given; runs of consecutive ids share a row.
    /// Returns the sequence numbers given out.
    @discardableResult
    static func append(_ connection: PostgresConnection, logger: Logger, kind: ChangeKind, ids: [Int64], at: Double) throws -> ClosedRange<Int64>? {
        guard !ids.isEmpty else { return nil }
        var firsts: [Int64] = [], counts: [Int64] = []
        for id in ids {
            if let first = firsts.last, first + counts[counts.count - 1] == id {
                counts[counts.count - 1] += 1
            } else {
                firsts.append(id)
                counts.append(1)
            }
        }
        let last = try latest(connection, logger: logger)
        var seqs: [Int64] = []
        var next = last + 1
        for count in counts {
            seqs.append(next)
            next += count
        }
        try connection.run("""
            INSERT INTO changes (seq, count, at, kind, first_id)
            SELECT s, c, \(at), \(Int16(kind.storeCode)), f FROM unnest(\(seqs)::bigint[], \(counts)::bigint[], \(firsts)::bigint[]) AS u(s, c, f)
            """, logger: logger)
        try connection.run("UPDATE store_info SET value = \(String(next - 1)) WHERE key = \(PostGISSchema.sequenceKey)", logger: logger)
        return (last + 1)...(next - 1)
    }

    /// Appends what happened to events (new, updated, ended, removed, in that order); the
    /// sequence numbers given out.
    @discardableResult
    static func append(_ connection: PostgresConnection, logger: Logger, _ changes: EventChanges, at: Double) throws -> ClosedRange<Int64>? {
        var recorded: [ClosedRange<Int64>] = []
        for (kind, ids) in [(ChangeKind.new, changes.new), (.updated, changes.updated), (.ended, changes.ended), (.removed, changes.removed)] {
            if let r = try append(connection, logger: logger, kind: kind, ids: ids, at: at) { recorded.append(r) }
        }
        guard let first = recorded.first, let last = recorded.last else { return nil }
        return first.lowerBound...last.upperBound
    }

    /// The last sequence number given out (0 before the first).
    static func latest(_ connection: PostgresConnection, logger: Logger) throws -> Int64 {
        let rows = try connection.rows("SELECT value FROM store_info WHERE key = \(PostGISSchema.sequenceKey)", logger: logger)
        return try rows.first.flatMap { Int64(try $0.decode(String.self)) } ?? 0
    }

    static func events(_ connection: PostgresConnection, logger: Logger, after sequence: Int64, limit: Int) throws -> [Change] {
        guard limit > 0 else { return [] }
        // The row holding event sequence + 1, then the rows after it.
        let rows = try connection.rows("""
            (SELECT seq, count, at, kind, first_id FROM changes WHERE seq <= \(sequence + 1) ORDER BY seq DESC LIMIT 1)
            UNION ALL
            (SELECT seq, count, at, kind, first_id FROM changes WHERE seq > \(sequence + 1) ORDER BY seq LIMIT \(limit))
            ORDER BY seq
            """, logger: logger)
        let runs = try rows.compactMap { row -> ChangeRun? in
            let (seq, count, at, code, firstID) = try row.decode((Int64, Int64, Double, Int16, Int64).self)
            guard let kind = ChangeKind(storeCode: Int64(code)) else { return nil }
            return ChangeRun(sequence: seq, count: count, at: at, kind: kind, firstID: firstID)
        }
        return ChangeRun.events(runs, after: sequence, limit: limit)
    }

    static func bounds(_ connection: PostgresConnection, logger: Logger) throws -> ChangeFeedBounds {
        let latest = try latest(connection, logger: logger)
        let first = try connection.rows("SELECT min(seq) FROM changes", logger: logger).first?.decode(Int64?.self) ?? nil
        return ChangeFeedBounds(first: first ?? latest + 1, latest: latest)
    }

    static func first(_ connection: PostgresConnection, logger: Logger, atOrAfter date: Date) throws -> Int64? {
        try connection.rows("SELECT min(seq) FROM changes WHERE at >= \(date.timeIntervalSince1970)", logger: logger).first?.decode(Int64?.self) ?? nil
    }

    static func prune(_ connection: PostgresConnection, logger: Logger, before date: Date) throws -> Int {
        let t = date.timeIntervalSince1970
        let count = try connection.rows("SELECT coalesce(sum(count), 0)::bigint FROM changes WHERE at < \(t)", logger: logger).first?.decode(Int64.self) ?? 0
        try connection.run("DELETE FROM changes WHERE at < \(t)", logger: logger)
        return Int(count)
    }
}
