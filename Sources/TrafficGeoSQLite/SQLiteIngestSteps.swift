import Foundation
import GRDB
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoStore

/// The SQLite store's steps of an ingest (`IngestRun`), on the write transaction's connection.
final class SQLiteIngestSteps: IngestSteps {
    private let db: Database
    private let now: Date
    private let tracksSeen: Bool
    /// Made after the sources are adopted: it looks sources up as it writes.
    private var writer: IncidentWriter!

    init(db: Database, now: Date, tracksSeen: Bool) {
        self.db = db
        self.now = now
        self.tracksSeen = tracksSeen
    }

    func begin(adopting formerNames: FormerSourceNames, into source: String) throws -> ReleasedReports {
        let released = try SourceNames.adopt(db, formerNames, into: source)
        writer = try IncidentWriter(db: db, now: now, tracksSeen: tracksSeen)
        return released
    }

    func upsert(_ incident: Incident) throws -> Bool? {
        let unchanged = writer.counts.unchanged
        try writer.upsert(incident)
        return writer.counts.unchanged != unchanged
    }

    func finishWrites() throws -> (inserted: Int, updated: Int, unchanged: Int) {
        try writer.finish()
        return (writer.counts.inserted, writer.counts.updated, writer.counts.unchanged)
    }

    func startLearning() throws -> JunctionLearningRun { try JunctionLearningRun(db) }

    func finishLearning(_ run: JunctionLearningRun, now: Date) throws -> JunctionLearning { try run.finish(db, now: now) }

    func endMissing(source: String, scope: SnapshotScope, skippedIDs: Set<String>, now: Date) throws -> [Int64] {
        try SnapshotEnding.end(db, source: source, scope: scope, writer: writer, skippedIDs: skippedIDs, now: now)
    }

    func endAsTold(_ told: [(source: String, id: String, at: Date)]) throws -> [Int64] { try SnapshotEnding.endAsTold(db, told) }

    func mergeEvents(source: String, ended: [Int64], released: ReleasedReports, now: Date) throws -> EventChanges {
        try SQLiteEventRows.merge(db, now: now, inserted: writer.insertedRanges.flatMap { Array($0) }, updated: writer.updatedIDs,
                                  ended: ended, source: source, released: released)
    }

    func recordChanges(_ changes: EventChanges, now: Date) throws -> ClosedRange<Int64>? {
        try ChangeLog.append(db, changes, at: now.timeIntervalSince1970)
    }

    func close() {}
}
