import Foundation
import GRDB
import TrafficGeoModel
import TrafficGeoStore

/// Ends what a snapshot of a source no longer lists (`SnapshotScope`), inside the ingest's
/// transaction: the incidents keep their rows and history, with an `ended` time.
enum SnapshotEnding {
    /// Ends the source's open incidents in `scope` that the ingest did not name; returns their ids.
    /// `skippedIDs`: feed ids of entries the ingest could not read (they may still be there).
    static func end(_ db: Database, source: String, scope: SnapshotScope, writer: IncidentWriter,
                    skippedIDs: Set<String>, now: Date) throws -> [Int64] {
        guard let sourceID = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [source]) else { return [] }
        if scope.parts?.isEmpty == true { return [] }
        // What it still lists is vouched for now (a source read in parts: the parts read whole).
        try db.execute(sql: "UPDATE sources SET last_snapshot = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, sourceID])
        let rows = try Row.fetchAll(db, sql: """
            SELECT id, external_id, json_extract(properties, '$.' || ?) FROM incidents
            WHERE source_id = ? AND ended IS NULL ORDER BY id
            """, arguments: [Incident.snapshotPartProperty, sourceID])
        var ended: [Int64] = []
        for row in rows {
            let id: Int64 = row[0]
            if writer.seenIDs.contains(id) || writer.insertedRanges.contains(where: { $0.contains(id) }) { continue }
            if skippedIDs.contains(row[1]) { continue }
            if let parts = scope.parts {
                guard let part = row[2] as String?, parts.contains(part) else { continue }
            }
            ended.append(id)
        }
        let statement = try db.makeStatement(sql: "UPDATE incidents SET ended = ? WHERE id = ?")
        for id in ended { try statement.execute(arguments: [now.timeIntervalSince1970.rounded(.down), id]) }
        return ended
    }

    /// Ends the incidents a feed says are over (`Incident.endedAt`) that have not ended yet;
    /// returns their ids (the change feed's `ended` events).
    static func endAsTold(_ db: Database, _ incidents: [(source: String, id: String, at: Date)]) throws -> [Int64] {
        guard !incidents.isEmpty else { return [] }
        let statement = try db.makeStatement(sql: """
            UPDATE incidents SET ended = ?
            WHERE source_id = (SELECT id FROM sources WHERE name = ?) AND external_id = ? AND ended IS NULL
            RETURNING id
            """)
        var ended: [Int64] = []
        for incident in incidents {
            let ids = try Int64.fetchAll(statement, arguments: [incident.at.timeIntervalSince1970.rounded(.down), incident.source, incident.id])
            ended += ids
        }
        return ended
    }
}
