import GRDB
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoStore

/// Renaming and merging sources, for stores written before a feed's identity came from the feed
/// itself (`FeedIdentity`): trafficgeo 0.1 filed a file's incidents under its absolute path.
///
/// Schema v6 renames those sources to their file names and remembers the old name in
/// `sources.renamed_from`; the next ingest of the same feed adopts such a source into the feed's
/// own identity. Merging keeps, of two copies of one incident (same feed id), the one that changed
/// last, so nothing the store knew is lost and nothing is counted twice (`SourceMergePlan`, the
/// rule both stores follow).
enum SourceNames {
    /// Makes the sources an older version filed this feed under part of `source`.
    /// Returns the reports it took out of their events (to be placed again).
    @discardableResult
    static func adopt(_ db: Database, _ former: FormerSourceNames, into source: String) throws -> ReleasedReports {
        let candidates = former.given.map { ($0, false) } + former.migrated.map { ($0, true) }
        var released = ReleasedReports()
        for (name, onlyIfMigrated) in candidates where name != source {
            guard let row = try Row.fetchOne(db, sql: "SELECT id, renamed_from FROM sources WHERE name = ?", arguments: [name]) else { continue }
            if onlyIfMigrated, (row["renamed_from"] as String?) == nil { continue }
            // The two sources become one, and an event holds one report of a source.
            let into = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [source])
            let taken = try SQLiteEventRows.release(db, sources: [row["id"]] + (into.map { [$0] } ?? []))
            released.reports += taken.reports
            released.events.formUnion(taken.events)
            try rename(db, id: row["id"], to: source)
        }
        // Losers of the merge are gone.
        if !released.reports.isEmpty {
            let left = Set(try Int64.fetchAll(db, sql: "SELECT id FROM incidents WHERE id IN (\(released.reports.map(String.init).joined(separator: ",")))"))
            released.reports = released.reports.filter { left.contains($0) }
        }
        return released
    }

    /// Gives the source `id` the name `name`, merging it into the source of that name if there
    /// is one (`SourceMergePlan`: the copy changed last stays; junction observations follow it).
    static func rename(_ db: Database, id: Int64, to name: String, renamedFrom: String? = nil) throws {
        let oldName = try String.fetchOne(db, sql: "SELECT name FROM sources WHERE id = ?", arguments: [id]) ?? ""
        let existing = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name])
        guard existing != id else { return }
        let changed = "coalesce(last_changed, first_seen)"
        let moving = try Row.fetchAll(db, sql: "SELECT id, external_id, \(changed) FROM incidents WHERE source_id = ?", arguments: [id])
            .map { SourceMergePlan.Copy(storeID: $0[0], externalID: $0[1], changed: $0[2]) }
        var twins: [String: SourceMergePlan.Copy] = [:]
        if let existing {
            for row in try Row.fetchAll(db, sql: """
                SELECT n.id, n.external_id, coalesce(n.last_changed, n.first_seen) FROM incidents n JOIN incidents o ON o.external_id = n.external_id
                WHERE n.source_id = ? AND o.source_id = ?
                """, arguments: [existing, id]) {
                twins[row[1]] = SourceMergePlan.Copy(storeID: row[0], externalID: row[1], changed: row[2])
            }
        }
        let plan = SourceMergePlan(oldName: oldName, newName: name, moving: moving, twins: twins)
        try applyObservers(db, plan)
        for loser in plan.losers { try db.execute(sql: "DELETE FROM incidents WHERE id = ?", arguments: [loser]) }
        if !plan.losers.isEmpty { try BlockIndexWriter(db: db).dropEmptyBlocks() }
        if let existing {
            try db.execute(sql: "UPDATE incidents SET source_id = ? WHERE source_id = ?", arguments: [existing, id])
            try db.execute(sql: "DELETE FROM sources WHERE id = ?", arguments: [id])
        } else {
            try db.execute(sql: "UPDATE sources SET name = ?, renamed_from = ? WHERE id = ?", arguments: [name, renamedFrom, id])
        }
    }

    /// Drops the losers' junction observations and files the rest under the new name, then
    /// re-aggregates the junctions whose support changed.
    private static func applyObservers(_ db: Database, _ plan: SourceMergePlan) throws {
        var touched = Set<[String]>()
        for observer in plan.droppedObservers {
            for row in try Row.fetchAll(db, sql: "DELETE FROM junction_observations WHERE observer = ? RETURNING road, name_key", arguments: [observer]) {
                touched.insert([row[0], row[1]])
            }
        }
        for (from, to) in plan.renamedObservers {
            try db.execute(sql: "UPDATE junction_observations SET observer = ? WHERE observer = ?", arguments: [to, from])
        }
        guard !touched.isEmpty else { return }
        try db.execute(sql: """
            DELETE FROM junctions WHERE NOT EXISTS (SELECT 1 FROM junction_observations o WHERE o.road = junctions.road AND o.name_key = junctions.name_key)
            """)
        try SQLiteIncidentStore.refreshJunctions(db, touched)
    }

    /// The v6 migration: absolute paths become file names, and row ids that carried their
    /// source's name (`/path/roads.csv#row3`) carry only the row (`row3`).
    static func migrateToFeedIdentities(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE sources ADD COLUMN renamed_from TEXT")
        let sources = try Row.fetchAll(db, sql: "SELECT id, name FROM sources ORDER BY id")
        for source in sources {
            // substr and length count characters, so the prefix is measured by SQLite too.
            try db.execute(sql: """
                UPDATE incidents SET external_id = substr(external_id, length(:prefix) + 1)
                WHERE source_id = :id AND substr(external_id, 1, length(:prefix) + 3) = :prefix || 'row'
                """, arguments: ["prefix": (source["name"] as String) + "#", "id": source["id"] as Int64])
        }
        for source in sources {
            let id: Int64 = source["id"], name: String = source["name"]
            guard name.hasPrefix("/") else { continue }
            let fileName = FeedIdentity.sourceName(forLocation: name)
            guard fileName != name else { continue }
            try rename(db, id: id, to: fileName, renamedFrom: name)
        }
    }
}
