import GRDB
import TrafficGeoFeeds

/// Renaming and merging sources, for stores written before a feed's identity came from the feed
/// itself (`FeedIdentity`): trafficgeo 0.1 filed a file's incidents under its absolute path.
///
/// Schema v6 renames those sources to their file names and remembers the old name in
/// `sources.renamed_from`; the next ingest of the same feed adopts such a source into the feed's
/// own identity. Merging keeps, of two copies of one incident (same feed id), the one that changed
/// last, so nothing the store knew is lost and nothing is counted twice.
enum SourceNames {
    /// Makes the sources an older version filed this feed under part of `source`.
    static func adopt(_ db: Database, _ former: FormerSourceNames, into source: String) throws {
        let candidates = former.given.map { ($0, false) } + former.migrated.map { ($0, true) }
        for (name, onlyIfMigrated) in candidates where name != source {
            guard let row = try Row.fetchOne(db, sql: "SELECT id, renamed_from FROM sources WHERE name = ?", arguments: [name]) else { continue }
            if onlyIfMigrated, (row["renamed_from"] as String?) == nil { continue }
            try rename(db, id: row["id"], to: source)
        }
    }

    /// Gives the source `id` the name `name`, merging it into the source of that name if there is one.
    static func rename(_ db: Database, id: Int64, to name: String, renamedFrom: String? = nil) throws {
        guard let existing = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name]) else {
            try db.execute(sql: "UPDATE sources SET name = ?, renamed_from = ? WHERE id = ?", arguments: [name, renamedFrom, id])
            return
        }
        guard existing != id else { return }
        try merge(db, from: id, into: existing)
    }

    /// Moves every incident of source `old` into source `new` and removes `old`. Of two incidents
    /// with the same feed id, the one changed last stays (on a tie, the one already in `new`).
    static func merge(_ db: Database, from old: Int64, into new: Int64) throws {
        let losers = try Int64.fetchAll(db, sql: """
            SELECT CASE WHEN coalesce(o.last_changed, o.first_seen) > coalesce(n.last_changed, n.first_seen) THEN n.id ELSE o.id END
            FROM incidents o JOIN incidents n ON n.source_id = ? AND n.external_id = o.external_id
            WHERE o.source_id = ?
            """, arguments: [new, old])
        for id in losers {
            // A copy's junction observations repeat its twin's: counted twice they would be.
            try db.execute(sql: "DELETE FROM junction_observations WHERE observer = ?", arguments: ["incident:\(id)"])
            try db.execute(sql: "DELETE FROM incidents WHERE id = ?", arguments: [id])
        }
        if !losers.isEmpty { try BlockIndexWriter(db: db).dropEmptyBlocks() }
        try db.execute(sql: "UPDATE incidents SET source_id = ? WHERE source_id = ?", arguments: [new, old])
        try db.execute(sql: "DELETE FROM sources WHERE id = ?", arguments: [old])
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
