import Foundation
import GRDB
import TrafficGeoStore

extension StoreError {
    /// A database error as a failure with its kind, in words a user can act on.
    static func describe(_ error: Error) -> StoreFailure {
        guard let db = error as? DatabaseError else { return StoreFailure(.other, String(describing: error), underlying: error) }
        switch db.resultCode {
        case .SQLITE_READONLY: return StoreFailure(.readOnly, "the file is read-only", underlying: db)
        case .SQLITE_FULL: return StoreFailure(.diskFull, "the disk is full", underlying: db)
        case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreFailure(.busy, "the database is busy (another trafficgeo is writing); try again", underlying: db)
        case .SQLITE_NOTADB: return StoreFailure(.damaged, "the file is not an SQLite database", underlying: db)
        case .SQLITE_CORRUPT: return StoreFailure(.damaged, "the database file is damaged", underlying: db)
        case .SQLITE_CANTOPEN: return StoreFailure(.missing, "the file cannot be opened (missing folder or permission?)", underlying: db)
        case .SQLITE_INTERRUPT: return StoreFailure(.interrupted, "the query was stopped", underlying: db)
        default: return StoreFailure(.other, db.message ?? db.description, underlying: db)
        }
    }
}

/// A long-lived reader thread's own connection, the data version it last saw, and the index
/// nodes read in that version. Unchecked Sendable: used only by the thread that keeps it
/// (`ThreadSpecificVariable`).
final class ThreadConnection: @unchecked Sendable {
    let queue: DatabaseQueue
    private var dataVersion: Int64 = -1
    /// The connection `queue` reads on, seen in the first read (it lives as long as the queue).
    private var database: ObjectIdentifier?
    private var nodes: RTreeNodes?

    init(_ queue: DatabaseQueue) { self.queue = queue }

    /// Called first in each read. The pool checks the schema version before every read, so
    /// that GRDB's statement and schema caches never outlive a schema change by another
    /// process; here the same is done when anything was committed since the last read (the
    /// data version, which also starts the read transaction), and the index nodes are let go.
    func noticeCommits(_ db: Database) throws {
        database = ObjectIdentifier(db)
        let version = try DataVersion.read(db)
        if version != dataVersion {
            db.clearSchemaCache()
            dataVersion = version
            nodes = nil
        }
    }

    /// The index nodes for a read on this connection, nil for a read on another (this thread
    /// reading through the pool). The data version was read by `noticeCommits` in the same
    /// read: one pragma per read instead of two (`IndexNodeCache` reads its own).
    func indexNodes(_ db: Database) throws -> RTreeNodes? {
        guard ObjectIdentifier(db) == database else { return nil }
        if let nodes { return nodes }
        let read = try RTreeNodes(RTreeNodeReader(db))
        nodes = read
        return read
    }
}
