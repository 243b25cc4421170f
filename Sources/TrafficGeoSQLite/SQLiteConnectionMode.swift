import CSQLiteConfig
import GRDB

/// Connection settings SQLite only exposes through `sqlite3_db_config` (variadic, so in C:
/// Sources/CSQLiteConfig).
enum SQLiteConnectionMode {
    /// Whether SQLite's defensive mode is on: shadow tables (the R*Tree's nodes) are then
    /// read-only to SQL, so the index is written through the R*Tree itself.
    static func isDefensive(_ db: Database) -> Bool {
        trafficgeo_sqlite_is_defensive(UnsafeMutableRawPointer(db.sqliteConnection)) == 1
    }

    /// Turns defensive mode on or off (tests: a store must work either way).
    static func setDefensive(_ db: Database, _ on: Bool) {
        _ = trafficgeo_sqlite_set_defensive(UnsafeMutableRawPointer(db.sqliteConnection), on ? 1 : 0)
    }
}
