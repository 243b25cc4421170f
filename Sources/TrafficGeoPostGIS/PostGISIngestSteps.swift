import Foundation
import Logging
import PostgresNIO
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoStore

/// The PostGIS store's steps of an ingest (`IngestRun`), on the write transaction's connection.
final class PostGISIngestSteps: IngestSteps {
    private let store: PostGISIncidentStore
    private let connection: PostgresConnection
    private let now: Date
    /// Made after the sources are adopted; its worker thread writes batches while the feed is read.
    private var writer: PostGISIncidentWriter!
    private var logger: Logger { store.logger }

    init(store: PostGISIncidentStore, connection: PostgresConnection, now: Date) {
        self.store = store
        self.connection = connection
        self.now = now
    }

    func begin(adopting formerNames: FormerSourceNames, into source: String) throws -> ReleasedReports {
        let released = try store.adopt(connection, formerNames, into: source)
        writer = try PostGISIncidentWriter(connection: connection, logger: logger, now: now)
        return released
    }

    /// Unknown until its batch is written: a batch is compared with the stored rows at once.
    func upsert(_ incident: Incident) throws -> Bool? {
        try writer.upsert(incident)
        return nil
    }

    func finishWrites() throws -> (inserted: Int, updated: Int, unchanged: Int) {
        try writer.finish()
        return (writer.counts.inserted, writer.counts.updated, writer.counts.unchanged)
    }

    func startLearning() throws -> JunctionLearningRun {
        JunctionLearningRun(known: try store.knownJunctions(connection, roads: nil))
    }

    func finishLearning(_ run: JunctionLearningRun, now: Date) throws -> JunctionLearning {
        try store.finishLearning(run, connection, now: now)
    }

    func endMissing(source: String, scope: SnapshotScope, skippedIDs: Set<String>, now: Date) throws -> [Int64] {
        if scope.parts?.isEmpty == true { return [] }
        // What it still lists is vouched for now (a source read in parts: the parts read whole).
        try connection.run("UPDATE sources SET last_snapshot = \(now.timeIntervalSince1970) WHERE name = \(PostgresText.storable(source))", logger: logger)
        let rows = try connection.rows("""
            SELECT i.id, i.external_id, i.properties ->> \(Incident.snapshotPartProperty) FROM incidents i
            WHERE i.source_id = (SELECT id FROM sources WHERE name = \(PostgresText.storable(source))) AND i.ended IS NULL ORDER BY i.id
            """, logger: logger)
        let inserted = Set(writer.insertedIDs)
        var ended: [Int64] = []
        for row in rows {
            let (id, externalID, part) = try row.decode((Int64, String, String?).self)
            if writer.seenIDs.contains(id) || inserted.contains(id) || skippedIDs.contains(externalID) { continue }
            if let parts = scope.parts {
                guard let part, parts.contains(part) else { continue }
            }
            ended.append(id)
        }
        if !ended.isEmpty {
            try connection.run("UPDATE incidents SET ended = \(now.timeIntervalSince1970.rounded(.down)) WHERE id = ANY(\(ended))", logger: logger)
        }
        return ended
    }

    /// One statement per source: a feed that lists thousands of ended situations on every read
    /// is thousands of rows, not round trips.
    func endAsTold(_ told: [(source: String, id: String, at: Date)]) throws -> [Int64] {
        var ended: [Int64] = []
        for (source, list) in Dictionary(grouping: told, by: \.source) {
            let rows = try connection.rows("""
                UPDATE incidents i SET ended = told.at
                FROM unnest(\(list.map { PostgresText.storable($0.id) })::text[], \(list.map { $0.at.timeIntervalSince1970.rounded(.down) })::float8[]) AS told(eid, at)
                WHERE i.source_id = (SELECT id FROM sources WHERE name = \(PostgresText.storable(source))) AND i.external_id = told.eid AND i.ended IS NULL
                RETURNING i.id
                """, logger: logger)
            for row in rows { ended.append(try row.decode(Int64.self)) }
        }
        return ended
    }

    func mergeEvents(source: String, ended: [Int64], released: ReleasedReports, now: Date) throws -> EventChanges {
        try PostGISEventRows.merge(connection, logger: logger, now: now, inserted: writer.insertedIDs, updated: writer.updatedIDs,
                                   ended: ended, source: source, released: released)
    }

    func recordChanges(_ changes: EventChanges, now: Date) throws -> ClosedRange<Int64>? {
        try PostGISChangeLog.append(connection, logger: logger, changes, at: now.timeIntervalSince1970.rounded(.down))
    }

    /// The writer's worker must be idle before the transaction ends, also when reading failed.
    func close() { writer?.drain() }
}
