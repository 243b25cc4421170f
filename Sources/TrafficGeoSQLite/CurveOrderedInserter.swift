import Foundation
import GRDB
import GRDBSQLite
import TrafficGeoProjection
import TrafficGeoStore

/// Stores new incidents (`PendingInserts`) inside an open write transaction: those without a
/// position first, then the others along the Hilbert curve with consecutive ids, indexed as
/// blocks (`BlockIndexWriter.addBlocks`).
///
/// Into an empty table, the table's indexes are dropped and built after the rows (sorted, with
/// full pages, instead of a million random insertions each), and rows go in many to a statement,
/// bound through SQLite's C API.
final class CurveOrderedInserter {
    private let db: Database
    private let index: BlockIndexWriter
    private let now: Double
    private let insertStatement: Statement
    private var bulkInsertStatements: [Int: Statement] = [:]
    /// The ids `store` gave the incidents it stored last (consecutive).
    private(set) var lastStoredIDs: Range<Int64> = 0..<0
    /// The stored row (`IncidentWriter`'s find statement) of a source id and feed id.
    private let findStored: (DatabaseValue, DatabaseValue) throws -> Row?

    init(db: Database, index: BlockIndexWriter, now: Double, findStored: @escaping (DatabaseValue, DatabaseValue) throws -> Row?) throws {
        self.db = db
        self.index = index
        self.now = now
        self.findStored = findStored
        insertStatement = try db.makeStatement(sql: Self.insertSQL(rows: 1))
    }

    /// Whether no incident is stored yet: rows then go in in bulk, with the indexes built after.
    static func tableIsEmpty(_ db: Database) throws -> Bool {
        try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents)")!
    }

    private static func insertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: Int(IncidentRowLayout.NewRow.parameterCount)).joined(separator: ", ") + ")"
        return """
            INSERT INTO incidents (\(IncidentRowLayout.NewRow.columns.joined(separator: ", ")))
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))
            """
    }

    /// Stores `pending`. Returns the rows an earlier run of this transaction already stored (a
    /// repeated id in a big feed): the stored row and the pending values, for the caller to update.
    func store(_ pending: PendingInserts) throws -> [(stored: Row, values: [DatabaseValue])] {
        let order = pending.storageOrder()
        var nextID = try index.nextFreeID()
        let firstID = nextID
        defer { lastStoredIDs = firstID ..< nextID }
        let bulk = try Self.tableIsEmpty(db)
        let rebuild = bulk ? try dropIndexes() : []
        var repeated: [(stored: Row, values: [DatabaseValue])] = []
        var firstLocatedID: Int64?
        var points: [GeocentricPoint] = []
        points.reserveCapacity(order.count)
        func stored(_ slot: Int, as id: Int64) {
            if let p = pending.position(at: slot) {
                if firstLocatedID == nil { firstLocatedID = id }
                points.append(GeocentricPoint(p))
            }
        }
        if bulk {
            // No index can refuse a row here: many rows per statement, so that SQLite's per-statement
            // work (cursors, constraint bookkeeping) is shared (it was ~40 % of an insert).
            var start = 0
            while start < order.count {
                let rows = min(Self.rowsPerBulkInsert, order.count - start)
                let slots = order[start ..< start + rows]
                try insert(slots, of: pending, firstID: nextID)
                for (k, slot) in slots.enumerated() { stored(slot, as: nextID + Int64(k)) }
                nextID += Int64(rows)
                start += rows
            }
        } else {
            for slot in order {
                if let existing = try insertUnlessStored(slot, of: pending, id: nextID) {
                    repeated.append(existing)
                    continue
                }
                stored(slot, as: nextID)
                nextID += 1
            }
        }
        try build(rebuild)
        if let firstLocatedID { try index.addBlocks(firstID: firstLocatedID, points: points) }
        return repeated
    }

    /// Stores rows handed over already in storage order (`SpilledRuns.merge`, `locatedCount` of
    /// them with a position) into the empty table, in bulk, and indexes them as
    /// blocks without holding their points. A repeated feed id fails the identity index's build
    /// (`SQLITE_CONSTRAINT`): the caller then stores the runs one after another instead.
    func storeSorted(locatedCount: Int, _ merge: ((PendingInserts) throws -> Void) throws -> Void) throws {
        guard try Self.tableIsEmpty(db) else {
            throw StoreError.writeFailed("", reason: "sorted rows can only go into an empty table")
        }
        var nextID = try index.nextFreeID()
        let firstID = nextID
        defer { lastStoredIDs = firstID ..< nextID }
        let rebuild = try dropIndexes()
        var blocks = BlockIndex.Builder(count: locatedCount)
        try merge { batch in
            var start = 0
            while start < batch.count {
                let rows = min(Self.rowsPerBulkInsert, batch.count - start)
                try insert(start ..< start + rows, of: batch, firstID: nextID)
                for k in 0 ..< rows {
                    if let p = batch.position(at: start + k) { blocks.add(GeocentricPoint(p), id: nextID + Int64(k)) }
                }
                nextID += Int64(rows)
                start += rows
            }
        }
        try build(rebuild)
        try index.add(blocks.entries)
    }

    /// Drops the table's indexes before a bulk load (the rows go in faster and the indexes are
    /// then built sorted, with full pages); returns the statements that make them again.
    private func dropIndexes() throws -> [String] {
        var rebuild: [String] = []
        for index in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'incidents' AND sql IS NOT NULL") {
            try db.execute(sql: "DROP INDEX \(String(index[0]).quotedDatabaseIdentifier)")
            rebuild.append(index[1])
        }
        return rebuild
    }

    /// Builds the indexes `dropIndexes` dropped.
    private func build(_ rebuild: [String]) throws {
        guard !rebuild.isEmpty else { return }
        // SQLite sorts the keys of a new index with helper threads when allowed to (a tenth
        // faster with two; the other core is idle by now).
        let helpers = min(4, max(0, ProcessInfo.processInfo.activeProcessorCount - 1))
        try db.execute(sql: "PRAGMA threads = \(helpers)")
        defer { try? db.execute(sql: "PRAGMA threads = 0") }
        for sql in rebuild { try db.execute(sql: sql) }
    }

    private static let rowsPerBulkInsert = 32

    /// Inserts pending rows with one statement, ids from `firstID` on, binding the packed values
    /// straight through SQLite's C API (building GRDB's StatementArguments cost as much as the
    /// insert itself: a million rows, ~2 s).
    private func insert(_ slots: some Collection<Int>, of pending: PendingInserts, firstID: Int64) throws {
        let statement = try bulkInsertStatement(rows: slots.count).sqliteStatement
        sqlite3_reset(statement)
        for (k, slot) in slots.enumerated() {
            bindRow(slot, of: pending, id: firstID + Int64(k), to: statement, row: Int32(k))
        }
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        if code != SQLITE_DONE { throw lastError() }
    }

    /// Binds the parameters of row `row` of an insert statement (`IncidentRowLayout.NewRow`).
    private func bindRow(_ slot: Int, of pending: PendingInserts, id: Int64, to statement: SQLiteStatement, row: Int32) {
        let base = row * IncidentRowLayout.NewRow.parameterCount
        sqlite3_bind_int64(statement, base + 1, id)
        pending.bind(slot, to: statement, from: base + 2)
        sqlite3_bind_double(statement, base + IncidentRowLayout.NewRow.parameterCount, now)
    }

    /// What SQLite reported for the statement that just failed.
    private func lastError() -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)), message: db.lastErrorMessage)
    }

    /// The insert statement for `rows` rows at once (prepared once per size).
    private func bulkInsertStatement(rows: Int) throws -> Statement {
        if let statement = bulkInsertStatements[rows] { return statement }
        let statement = try db.makeStatement(sql: Self.insertSQL(rows: rows))
        bulkInsertStatements[rows] = statement
        return statement
    }

    /// Inserts one pending row as `id`; when an earlier run of this transaction stored the same
    /// incident, returns that stored row and the pending values instead.
    private func insertUnlessStored(_ slot: Int, of pending: PendingInserts, id: Int64) throws -> (stored: Row, values: [DatabaseValue])? {
        let insert = insertStatement.sqliteStatement
        sqlite3_reset(insert)
        bindRow(slot, of: pending, id: id, to: insert, row: 0)
        let code = sqlite3_step(insert)
        sqlite3_reset(insert)
        if code == SQLITE_DONE { return nil }
        let error = lastError()
        guard error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE else { throw error }
        let values = pending.values(at: slot)
        guard let existing = try findStored(values[0], values[1]) else { throw error }
        return (existing, values)
    }
}
