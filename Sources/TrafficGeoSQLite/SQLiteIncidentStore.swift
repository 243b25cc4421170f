import Foundation
import GRDB
import GRDBSQLite
import NIOPosix
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore
import TrafficGeoSupport

/// The SQLite file that keeps incidents, their R*Tree index and the geocoder cache.
///
///     let store = try SQLiteIncidentStore(path: "incidents.sqlite")
///     let summary = try store.ingest(source: "feed.xml") { emit in try reader.read(input, source: "feed.xml", handle: emit) }
///
/// The database runs in WAL mode (readers never wait for the writer); each ingest is one
/// transaction, so a crash mid-ingest leaves the database as it was.
public final class SQLiteIncidentStore: IncidentStore {
    public let path: String
    public var location: String { path }
    let pool: DatabasePool
    /// The spatial index's nodes as read by earlier queries (`SQLiteIncidentStore+Queries`).
    let nodeCache = IndexNodeCache()
    /// The read connection of each long-lived reader thread (`ReaderThread`), opened at its first
    /// read and closed when the thread ends.
    private let threadConnections = ThreadSpecificVariable<ThreadConnection>()
    /// How those connections are opened: as the pool's readers.
    let threadConnectionConfiguration: Configuration

    /// The default database: `$TRAFFICGEO_DB`, else `$XDG_DATA_HOME/trafficgeo/incidents.sqlite`
    /// (`~/.local/share/trafficgeo/incidents.sqlite`).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["TRAFFICGEO_DB"], !path.isEmpty { return path }
        return (UserFolders.folder(.data, environment: environment) as NSString).appendingPathComponent("trafficgeo/incidents.sqlite")
    }

    /// Opens (and creates or migrates) the store at `path`.
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        var config = Configuration()
        config.readonly = readOnly
        config.busyMode = .timeout(30)          // a concurrent writer waits instead of failing
        config.foreignKeysEnabled = true
        config.prepareDatabase { db in
            TextFolding.register(on: db)
            RecurringSchedule.register(on: db)
            // Every 1,000 virtual-machine steps: a statement whose work was told to stop
            // (`QueryStop`: serve's time limit, a client gone) is interrupted and its read fails,
            // which frees the thread. Outside a QueryStop the check is one thread-local read.
            sqlite3_progress_handler(db.sqliteConnection, 1000, { _ in QueryStop.currentIsStopped ? 1 : 0 }, nil)
            try db.execute(sql: "PRAGMA cache_size = -32768") // 32 MiB per connection
            // Queries touch pages all over a big file: reading them through a memory map instead of
            // read() calls into a private cache halves a 10 km radius query on 1M incidents
            // (docs/benchmarks.md). Only address space: the OS page cache holds the data.
            try db.execute(sql: "PRAGMA mmap_size = \(Self.memoryMapSize)")
            // In WAL mode NORMAL never corrupts the database; a power cut may only drop the latest
            // commits (an ingest or cached answers, which a re-run redoes). FULL would fsync every
            // cached geocoder answer, the main cost of a fast batch run.
            if !readOnly { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
        var readerConfig = config
        readerConfig.readonly = true
        threadConnectionConfiguration = readerConfig
        if !readOnly {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
                do {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw StoreError.cannotOpen(path, reason: "cannot create the folder \(folder): \(error.localizedDescription)")
                }
            }
        } else if !FileManager.default.fileExists(atPath: path) {
            throw StoreError.cannotOpen(path, reason: StoreFailure(.missing, "no such database (an ingest into it makes it)"))
        }
        do {
            var opened = try Self.retryingWhileBusy { try DatabasePool(path: path, configuration: config) }
            if readOnly, try !Self.retryingWhileBusy({ try opened.read { try StoreSchema.migrator.hasCompletedMigrations($0) } }) {
                // Written by an older version: upgrade it once (a write), then read as asked.
                try opened.close()
                try Self.upgrade(path)
                opened = try Self.retryingWhileBusy { try DatabasePool(path: path, configuration: config) }
            }
            pool = opened
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(path, reason: StoreError.describe(error))
        }
        do {
            if !readOnly { try Self.migrate(pool) }
            let crs = try Self.retryingWhileBusy {
                try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'index_crs'") }
            }
            guard crs == StoreSchema.indexCRS else {
                throw StoreError.incompatible(path, reason: StoreFailure(.otherVersion, "its index CRS is \(crs ?? "missing"), this version uses \(StoreSchema.indexCRS)"))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(path, reason: StoreError.describe(error))
        }
    }

    /// Brings a database written by an older version up to this version's schema.
    private static func upgrade(_ path: String) throws {
        do {
            var config = Configuration()
            config.busyMode = .timeout(30)
            let writable = try retryingWhileBusy { try DatabasePool(path: path, configuration: config) }
            try migrate(writable)
            try writable.close()
        } catch {
            throw StoreError.incompatible(path, reason: StoreFailure(.otherVersion, """
                it was written by an older trafficgeo and must be upgraded once, which needs write access \
                (\(StoreError.describe(error))); any ingest into it does that, or copy it somewhere writable
                """, underlying: error))
        }
    }

    /// Brings the schema up to date, also when another process does the same to the same file at
    /// the same moment (two ingests into a new database). GRDB checks which migrations are applied
    /// before it runs each one, so two processes may both start one; the second then fails ("table
    /// already exists", "duplicate column name", a second row in grdb_migrations) and its
    /// transaction rolls back. Such a failure is looked at again: once the other process has
    /// applied the migrations, there is nothing left to do.
    static func migrate(_ writer: some DatabaseWriter) throws {
        var attempt = 0
        while true {
            do {
                try retryingWhileBusy { try StoreSchema.migrator.migrate(writer) }
                return
            } catch let error as DatabaseError where attempt < 20 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02 * Double(attempt))
                if try retryingWhileBusy({ try writer.read { try StoreSchema.migrator.hasCompletedMigrations($0) } }) { return }
                _ = error   // not yet complete: the other process may still be at it; try again
            }
        }
    }

    /// Runs `body` again while SQLite says the database is busy, for up to 30 s. Two processes
    /// creating or migrating the same new file at once meet locks that SQLite reports at once,
    /// without waiting in its busy handler (to avoid a deadlock between lock upgrades); waiting
    /// here and trying again lets the second one open the finished file.
    static func retryingWhileBusy<T>(_ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + .seconds(30)
        var pause = 0.02
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                guard ContinuousClock.now < deadline else { throw error }
                Thread.sleep(forTimeInterval: pause * Double.random(in: 0.5...1.5))
                pause = min(pause * 2, 0.5)
            }
        }
    }

    /// The largest part of the database file read through a memory map (1 GiB).
    static let memoryMapSize: Int64 = 1 << 30

    /// The CRS of the R*Tree, as recorded in the database.
    public var indexCRS: String { StoreSchema.indexCRS }

    // MARK: - Ingest

    /// Runs `read` inside one write transaction and stores every incident it emits.
    ///
    /// A `FeedError.malformed` thrown by `read` keeps the entries emitted before it (the summary
    /// says so); any other error rolls the whole ingest back.
    ///
    /// The incidents an older version filed under `formerNames` join `source` first, so that
    /// re-reading the feed updates them instead of adding copies (`SourceNames`).
    public func ingest(source: String, format: FeedFormat?, adopting formerNames: FormerSourceNames, snapshot: SnapshotScope?, now: Date,
                       read: ((FeedEvent) throws -> Void) throws -> Void) throws -> IngestSummary {
        let summary: IngestSummary
        do {
            // The steps every store takes (IngestRun), with this store's statements. Not stopped
            // once begun (`QueryStop`: a cancelled task, a loop told to stop): a write in
            // progress finishes its transaction, as FeedLoop promises.
            summary = try QueryStop.unstoppable {
                try pool.write { db in
                    try IngestRun.run(SQLiteIngestSteps(db: db, now: now, tracksSeen: snapshot != nil), source: source, format: format,
                                      adopting: formerNames, snapshot: snapshot, now: now, read: read)
                }
            }
        } catch let error as FeedError {
            throw error
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.writeFailed(path, reason: StoreError.describe(error))
        }
        return summary
    }

    // MARK: - Reading

    /// Runs `block` on a read-only connection (a consistent snapshot in WAL mode): on a
    /// long-lived reader thread (`ReaderThread`) that thread's own, else one from the pool.
    public func read<T>(_ block: (Database) throws -> T) throws -> T {
        do {
            if ReaderThread.isCurrentMarked {
                let connection = try threadConnection()
                return try connection.queue.inDatabase { db in
                    try Self.inSnapshot(db) { db in
                        try connection.noticeCommits(db)
                        return try block(db)
                    }
                }
            }
            return try pool.unsafeRead { db in try Self.inSnapshot(db, block) }
        } catch let error as DatabaseError {
            throw StoreError.readFailed(path, reason: StoreError.describe(error))
        }
    }

    /// `block` in one deferred read transaction, the snapshot of GRDB's `read`, but begun and
    /// committed through cached statements: `read` prepares BEGIN and COMMIT anew every time, 3 %
    /// of a 10-nearest request in `serve`.
    private static func inSnapshot<T>(_ db: Database, _ block: (Database) throws -> T) throws -> T {
        try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
        let result: T
        do {
            result = try block(db)
        } catch {
            // Not interrupted itself when the read was (QueryStop): the connection must leave
            // the transaction, or every later read on it would fail.
            QueryStop.unstoppable { try? db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
            throw error
        }
        try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        return result
    }

    /// The index's nodes for a read on the calling thread's own connection (`ReaderThread`), kept
    /// with that connection; nil on other connections.
    func threadIndexNodes(_ db: Database) throws -> RTreeNodes? {
        guard ReaderThread.isCurrentMarked, let connection = threadConnections.currentValue else { return nil }
        return try connection.indexNodes(db)
    }

    /// The calling long-lived reader thread's own connection (`ReaderThread`), opened at its first read.
    private func threadConnection() throws -> ThreadConnection {
        if let kept = threadConnections.currentValue { return kept }
        let connection = ThreadConnection(try Self.retryingWhileBusy { try DatabaseQueue(path: path, configuration: threadConnectionConfiguration) })
        threadConnections.currentValue = connection
        return connection
    }

    /// `read` through GRDB's async access, for async callers (the caller's thread is not held).
    /// Named apart from `read`: as an overload, it would be chosen for every `read` in async code.
    func asyncRead<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(block)
        } catch let error as DatabaseError {
            throw StoreError.readFailed(path, reason: StoreError.describe(error))
        }
    }

    /// The incident with this store id.
    public func incident(id: Int64) throws -> StoredIncident? {
        try read { db in try IncidentRowLayout.fetch(db, id: id) }
    }

    // MARK: - Maintenance

    /// Deletes incidents whose `expires` lies before `date`; returns how many.
    @discardableResult
    public func pruneExpired(before date: Date) throws -> Int {
        try delete(where: "expires IS NOT NULL AND expires < ?", date)
    }

    /// Deletes incidents that ended before `date`; returns how many.
    @discardableResult
    public func pruneEnded(before date: Date) throws -> Int {
        try delete(where: "ended IS NOT NULL AND ended < ?", date)
    }

    /// Deletes the reports matching `condition` (our own SQL, one date argument); the events
    /// that lose reports are composed again (or go with their last one). Records what happened
    /// to events; returns how many reports went.
    private func delete(where condition: String, _ date: Date) throws -> Int {
        try write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, event_id FROM incidents WHERE \(condition) AND role <> 2 ORDER BY id",
                                        arguments: [date.timeIntervalSince1970])
            guard !rows.isEmpty else { return 0 }
            try db.execute(sql: "DELETE FROM incidents WHERE \(condition) AND role <> 2", arguments: [date.timeIntervalSince1970])
            let now = Date()
            let events = Set(rows.compactMap { $0[1] as Int64? })
            var changes = try EventMerger(rows: SQLiteEventRows(db: db, now: now), settings: SQLiteEventRows.settings(db)).recompose(events)
            changes.removed = (rows.filter { ($0[1] as Int64?) == nil }.map { $0[0] as Int64 } + changes.removed).sorted()
            try BlockIndexWriter(db: db).dropEmptyBlocks()
            try ChangeLog.append(db, changes, at: now.timeIntervalSince1970.rounded(.down))
            return rows.count
        }
    }

    /// Forgets change-feed events recorded before `date`; returns how many.
    @discardableResult
    public func pruneChanges(before date: Date) throws -> Int {
        try write { db in try ChangeLog.prune(db, before: date) }
    }

    // MARK: - Reports and events

    public func conflationSettings() throws -> ConflationSettings {
        try read { db in try SQLiteEventRows.settings(db) }
    }

    public func setConflationSettings(_ settings: ConflationSettings) throws {
        try write { db in try SQLiteEventRows.setSettings(settings, db) }
    }

    public func sourceReading(for source: String) throws -> SourceReading? {
        try read { db in
            SourceReading(storedText: try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = ?",
                                                          arguments: [SourceReading.storeKey(for: source)]))
        }
    }

    public func setSourceReading(_ reading: SourceReading?, for source: String) throws {
        try write { db in
            if let reading, !reading.isEmpty {
                try db.execute(sql: "INSERT OR REPLACE INTO store_info (key, value) VALUES (?, ?)",
                               arguments: [SourceReading.storeKey(for: source), reading.storedText])
            } else {
                try db.execute(sql: "DELETE FROM store_info WHERE key = ?", arguments: [SourceReading.storeKey(for: source)])
            }
        }
    }

    public func rebuildEvents() throws -> EventChanges {
        try write { db in
            let now = Date()
            let changes = try SQLiteEventRows.rebuild(db, now: now)
            try BlockIndexWriter(db: db).dropEmptyBlocks()
            try ChangeLog.append(db, changes, at: now.timeIntervalSince1970.rounded(.down))
            return changes
        }
    }

    // MARK: - Change feed

    public func changes(after sequence: Int64, limit: Int) throws -> [Change] {
        try read { db in try ChangeLog.events(db, after: sequence, limit: limit) }
    }

    public func changeFeedBounds() throws -> ChangeFeedBounds {
        try read { db in try ChangeLog.bounds(db) }
    }

    public func firstChange(atOrAfter date: Date) throws -> Int64? {
        try read { db in try ChangeLog.first(db, atOrAfter: date) }
    }

    public func incidents(ids: [Int64]) throws -> [Int64: StoredIncident] {
        try read { db in try IncidentRowLayout.fetch(db, ids: ids).filter { $0.value.role != .member } }
    }
}
