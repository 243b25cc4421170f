import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import TrafficGeoModel
import TrafficGeoStore

/// Inserts or updates incidents inside an ingest's transaction, in batches: the feed's entries
/// are collected, the stored copies of a whole batch are looked up with one query, and the batch
/// is written with one `INSERT … FROM unnest(…)` and one `UPDATE … FROM unnest(…)` — a million
/// entries are a few hundred round trips, not a million. The same rules as the SQLite store's
/// `StoreWriter`: identity by (source, feed id), change hashes, a position found earlier kept
/// while the words stay the same, a repeated feed id counted as an update, a listed incident
/// reopened if it had ended.
///
/// Batches are written on a worker thread of their own (`worker`, one batch at a time, in order)
/// while the ingest's thread goes on reading the feed: reading and encoding were the larger part
/// of a big load. The ingest's thread touches only `pending`, the source table (`sourceID`) and
/// `firstFailure`; the worker everything a batch decides. The counts and ids are read after
/// `finish()`, which drains the worker. (Hence `@unchecked Sendable`: that discipline, not the
/// compiler, keeps the two apart.)
final class PostGISIncidentWriter: @unchecked Sendable {
    struct Counts { var inserted = 0, updated = 0, unchanged = 0 }
    private(set) var counts = Counts()
    /// Stored incidents this writer changed (or reopened), in order, each once.
    private(set) var updatedIDs: [Int64] = []
    private var updatedSet: Set<Int64> = []
    /// The ids given to new incidents, in order (consecutive: the store's counter).
    private(set) var insertedIDs: [Int64] = []
    /// Every stored incident the feed named (changed or not): what a snapshot keeps.
    private(set) var seenIDs: Set<Int64> = []

    private struct Key: Hashable {
        var source: Int64
        var id: String
    }

    /// What a key is in this batch: a row already stored, or a new one not yet written.
    private enum Slot {
        case stored(id: Int64, incident: StoredIncident, hash: Int64)
        case new(index: Int)
    }

    private let connection: PostgresConnection
    private let logger: Logger
    private let now: Double
    private var sources: [String: Int64] = [:]
    private var freshSources: Set<Int64> = []
    /// Hashes of the keys stored by an earlier batch of this ingest: a key whose hash is here is
    /// looked up again (a collision only costs a lookup that finds nothing). Hashes, not keys: a
    /// set of a million strings was a tenth of a big ingest's client time.
    private var written: Set<Int> = []
    private var pending: [(key: Key, incident: Incident)] = []
    private let worker = DispatchQueue(label: "trafficgeo.postgis.writer")
    /// At most two batches wait for the worker: memory stays bounded when the server is slower.
    private let queued = DispatchSemaphore(value: 2)
    private let failure = NIOLockedValueBox<Error?>(nil)
    private var nextID: Int64
    let batchSize: Int
    /// The table was empty when this ingest began: a big load drops the indexes, the primary key
    /// and the source foreign key at its first full batch and builds them at `finish` (readers of
    /// the empty table wait until then).
    private let tableWasEmpty: Bool
    /// What a bulk load dropped and must build again; nil when not (or no longer) loading in bulk.
    private var dropped: [String]?
    private var bulkLoadDecided = false
    /// The last batch's write, still running on the server while the next batch is prepared.
    private var inFlight: EventLoopFuture<PostgresQueryResult>?

    init(connection: PostgresConnection, logger: Logger, now: Date, batchSize: Int = 5000) throws {
        self.connection = connection
        self.logger = logger
        // Whole seconds, as the SQLite store keeps them.
        self.now = now.timeIntervalSince1970.rounded(.down)
        self.batchSize = max(1, batchSize)
        let next = try connection.rows("SELECT value FROM store_info WHERE key = \(PostGISSchema.nextIncidentKey)", logger: logger)
        nextID = try next.first.flatMap { Int64(try $0.decode(String.self)) } ?? 1
        tableWasEmpty = try connection.rows("SELECT NOT EXISTS (SELECT 1 FROM incidents)", logger: logger).first?.decode(Bool.self) ?? false
    }

    /// Sends a write without waiting for it (the server works while the next batch is read and
    /// encoded); the one before is waited for first, so that errors surface and order holds.
    private func send(_ query: PostgresQuery) throws {
        try settle()
        inFlight = connection.query(query, logger: logger)
    }

    /// Waits for the write in flight.
    private func settle() throws {
        if let inFlight {
            self.inFlight = nil
            _ = try inFlight.wait()
        }
    }

    /// The id of the source, added if new.
    func sourceID(_ name: String) throws -> Int64 {
        let name = PostgresText.storable(name)
        if let id = sources[name] { return id }
        try connection.run("INSERT INTO sources (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING", logger: logger)
        guard let row = try connection.rows("SELECT id FROM sources WHERE name = \(name)", logger: logger).first else {
            throw StoreError.writeFailed("", reason: "the source \(name) could not be recorded")
        }
        let id = try row.decode(Int64.self)
        let stored = try connection.rows("SELECT EXISTS (SELECT 1 FROM incidents WHERE source_id = \(id))", logger: logger)
        if try stored.first?.decode(Bool.self) == false { freshSources.insert(id) }
        sources[name] = id
        return id
    }

    func upsert(_ incident: Incident) throws {
        let key = Key(source: try sourceID(incident.source), id: PostgresText.storable(incident.id))
        pending.append((key, incident))
        if pending.count >= batchSize { try handOff() }
    }

    /// Gives the pending batch to the worker; throws what an earlier batch failed with.
    private func handOff() throws {
        if let error = failure.withLockedValue({ $0 }) { throw error }
        guard !pending.isEmpty else { return }
        let batch = pending, fresh = freshSources
        pending = []
        queued.wait()
        worker.async { [self] in
            defer { queued.signal() }
            guard failure.withLockedValue({ $0 }) == nil else { return }
            do { try flush(batch, freshSources: fresh) } catch { failure.withLockedValue { $0 = $0 ?? error } }
        }
    }

    /// Waits until the worker is idle and nothing is in flight, whatever happened: the
    /// transaction may then end (an ingest that failed rolls back only after this).
    func drain() {
        worker.sync {}
        _ = try? settle()
    }

    /// Writes what is pending; call before the transaction commits.
    func finish() throws {
        try handOff()
        worker.sync {}
        if let error = failure.withLockedValue({ $0 }) { throw error }
        try settle()
        try endBulkLoad()
        try connection.run("UPDATE store_info SET value = \(String(nextID)) WHERE key = \(PostGISSchema.nextIncidentKey)", logger: logger)
    }

    /// Starts a bulk load into the empty table with this first full batch: drops the primary
    /// key, the foreign key and every index but the partial ones that few of these rows enter.
    private func beginBulkLoad(_ batch: [(key: Key, incident: Incident)]) throws {
        try settle()
        var dropped: [String] = []
        for index in PostGISSchema.incidentIndexes {
            if let enters = index.indexes, batch.lazy.filter({ enters($0.incident) }).count * 10 < batch.count { continue }
            try connection.run(PostgresQuery(unsafeSQL: "DROP INDEX \(index.name)"), logger: logger)
            dropped.append(index.sql)
        }
        for constraint in [PostGISSchema.primaryKey, PostGISSchema.sourceForeignKey] {
            try connection.run(PostgresQuery(unsafeSQL: "ALTER TABLE incidents DROP CONSTRAINT \(constraint.name)"), logger: logger)
            dropped.append(constraint.sql)
        }
        self.dropped = dropped
    }

    /// Builds what `beginBulkLoad` dropped: at `finish`, or as soon as a batch must look up rows
    /// written before it (a feed that repeats ids far apart), which needs the indexes.
    private func endBulkLoad() throws {
        guard let dropped else { return }
        try settle()
        for sql in dropped { try connection.run(PostgresQuery(unsafeSQL: sql), logger: logger) }
        self.dropped = nil
    }

    /// Decides and writes one batch (on the worker).
    private func flush(_ pending: [(key: Key, incident: Incident)], freshSources: Set<Int64>) throws {
        guard !pending.isEmpty else { return }
        if tableWasEmpty, !bulkLoadDecided, pending.count >= batchSize {
            bulkLoadDecided = true
            try beginBulkLoad(pending)
        }
        var slots = try storedRows(for: pending.map(\.key), freshSources: freshSources)
        slots.reserveCapacity(pending.count)
        var newRows: [(id: Int64, sourceID: Int64, incident: Incident)] = []
        var changed: [Int64: Incident] = [:]
        var changedOrder: [Int64] = []
        var reopened: [Int64] = []
        var stillEnded: [(id: Int64, ended: Date)] = []
        for (key, read) in pending {
            var incident = read
            switch slots[key] {
            case let .new(index)?:
                // The feed repeats an id not stored yet: the later entry wins.
                Self.carryPosition(into: &incident, from: newRows[index].incident)
                if PostGISRows.contentHash(incident) == PostGISRows.contentHash(newRows[index].incident) {
                    counts.unchanged += 1
                } else {
                    newRows[index].incident = incident
                    counts.updated += 1
                }
            case let .stored(id, stored, hash)?:
                seenIDs.insert(id)
                Self.carryPosition(into: &incident, from: stored.incident)
                let newHash = PostGISRows.contentHash(incident)
                if newHash == hash {
                    // Listed again: reopened, unless the feed says it is still over (`Incident.endedAt`).
                    if stored.ended != nil, read.endedAt == nil {
                        reopened.append(id)
                        noteUpdated(id)
                    } else {
                        counts.unchanged += 1
                    }
                    continue
                }
                if changed[id] == nil { changedOrder.append(id) }
                changed[id] = incident
                // The update reopens; an incident the feed says is still over keeps its end.
                if let ended = stored.ended, read.endedAt != nil { stillEnded.append((id, ended)) }
                var now = stored
                now.incident = incident
                now.ended = read.endedAt == nil ? nil : stored.ended
                slots[key] = .stored(id: id, incident: now, hash: newHash)
                noteUpdated(id)
            case nil:
                let id = nextID
                nextID += 1
                slots[key] = .new(index: newRows.count)
                newRows.append((id, key.source, incident))
                counts.inserted += 1
            }
        }
        if !newRows.isEmpty {
            var batch = PostGISRows.Batch(rows: newRows.count)
            for row in newRows {
                batch.append(storeID: row.id, sourceID: row.sourceID, incident: row.incident, firstSeen: now, lastChanged: now)
                insertedIDs.append(row.id)
                written.insert(Key(source: row.sourceID, id: PostgresText.storable(row.incident.id)).hashValue)
            }
            try send(batch.insertQuery)
        }
        if !changed.isEmpty {
            var batch = PostGISRows.Batch()
            for id in changedOrder {
                // source and first seen are not written by the update.
                batch.append(storeID: id, sourceID: 0, incident: changed[id]!, firstSeen: 0, lastChanged: now)
            }
            try send(PostgresQuery(unsafeSQL: PostGISRows.Batch.updateSQL, binds: batch.bindings))
            for (id, ended) in stillEnded {
                try send("UPDATE incidents SET ended = \(ended.timeIntervalSince1970) WHERE id = \(id)")
            }
        }
        if !reopened.isEmpty {
            try send("UPDATE incidents SET ended = NULL, last_changed = \(now) WHERE id = ANY(\(reopened))")
        }
    }

    /// The stored rows of these keys, where they may exist: a source that had no incidents when
    /// this ingest began has only those an earlier batch wrote.
    private func storedRows(for keys: [Key], freshSources: Set<Int64>) throws -> [Key: Slot] {
        var lookup = Set<Key>()
        for key in keys where !freshSources.contains(key.source) || written.contains(key.hashValue) { lookup.insert(key) }
        guard !lookup.isEmpty else { return [:] }
        try endBulkLoad()
        try settle()
        let list = Array(lookup)
        let rows = try connection.rows("""
            SELECT \(unescaped: PostGISRows.selection), i.source_id FROM incidents i
            JOIN unnest(\(list.map(\.source))::bigint[], \(list.map(\.id))::text[]) AS k(source_id, external_id)
              ON i.source_id = k.source_id AND i.external_id = k.external_id
            """, logger: logger)
        var slots: [Key: Slot] = [:]
        for row in rows {
            let access = PostgresRandomAccessRow(row)
            let stored = try PostGISRows.decode(access)
            let source = try access[PostGISRows.selectionCount].decode(Int64.self)
            slots[Key(source: source, id: stored.incident.id)] = .stored(id: stored.storeID, incident: stored,
                                                                         hash: try PostGISRows.contentHash(access))
        }
        return slots
    }

    private func noteUpdated(_ id: Int64) {
        counts.updated += 1
        if updatedSet.insert(id).inserted { updatedIDs.append(id) }
    }

    /// The feed still says the same words and has no coordinates: keep the position found
    /// earlier (by a geocoder, or by an earlier entry).
    static func carryPosition(into incident: inout Incident, from earlier: Incident) {
        guard incident.position == nil, earlier.position != nil,
              PostgresText.storable(earlier.title) == PostgresText.storable(incident.title),
              PostgresText.storable(earlier.summary) == PostgresText.storable(incident.summary) else { return }
        incident.position = earlier.position
        incident.positionSource = earlier.positionSource
        if incident.segment == nil { incident.segment = earlier.segment }
    }

    /// Replaces the stored fields of an incident (a geocoder found its position, a swapped
    /// position was put right); the content hash follows, so re-reading the feed counts it unchanged.
    static func replace(_ connection: PostgresConnection, logger: Logger, storeID: Int64, with incident: Incident, now: Date) throws {
        var batch = PostGISRows.Batch()
        batch.append(storeID: storeID, sourceID: 0, incident: incident, firstSeen: 0, lastChanged: now.timeIntervalSince1970.rounded(.down))
        try connection.run(PostgresQuery(unsafeSQL: PostGISRows.Batch.replaceSQL, binds: batch.bindings), logger: logger)
    }
}
