import GRDB
import TrafficGeoStore

/// The ids of source names in `sources` for one write transaction, and which sources have no
/// stored incidents yet (their entries need not be looked up before they are inserted).
final class SourceRegistry {
    private let db: Database
    private var ids: [String: Int64] = [:]
    private var fresh: Set<Int64> = []
    private var known: Set<Int64> = []

    init(db: Database) { self.db = db }

    /// The id of the source in `sources`, added if new.
    func id(of name: String) throws -> Int64 {
        if let id = ids[name] { return id }
        try db.execute(sql: "INSERT OR IGNORE INTO sources (name) VALUES (?)", arguments: [name])
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name]) else {
            throw StoreError.writeFailed("", reason: "the source \(name) could not be recorded")
        }
        ids[name] = id
        return id
    }

    /// Whether no incident of the source was stored before this transaction began looking.
    func isFresh(_ source: Int64) throws -> Bool {
        if fresh.contains(source) { return true }
        if known.contains(source) { return false }
        let stored = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents WHERE source_id = ?)", arguments: [source]) ?? true
        if stored { known.insert(source) } else { fresh.insert(source) }
        return !stored
    }
}
