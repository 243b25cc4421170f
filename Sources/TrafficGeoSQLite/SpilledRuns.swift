import Foundation
import GRDB
import GRDBSQLite
import HeapModule
import TrafficGeoStore

/// The external sort of a big first ingest: new incidents that would not fit in one
/// `PendingInserts` chunk are written out as sorted runs, one file per chunk, and merged along the
/// Hilbert curve when the feed ends, so that the whole feed is stored as one curve-ordered run.
///
/// Why: storing each chunk on its own (what a big feed did before) gave a 10M-point ingest five
/// runs, each spread over the whole area. A 10-nearest query then read blocks of all five (each
/// five times as wide as one run's), and every chunk after the first went into a table with its
/// indexes, one lookup and one index insertion per row. Memory stays that of one chunk however
/// big the feed is (docs/benchmarks.md, "Ten million").
///
/// The files are made next to the database (where the rows will go anyway; a /tmp on tmpfs would
/// hold them in memory) and unlinked at once: a killed ingest leaves nothing behind.
final class SpilledRuns {
    private(set) var runs: [Run] = []
    private let directory: String
    /// The database's path, for errors.
    private let databasePath: String

    /// The files go in the folder of the database `db` (the system's temporary folder for an
    /// in-memory one).
    init(besideDatabaseOf db: Database) {
        let path = sqlite3_db_filename(db.sqliteConnection, "main").map { String(cString: $0) } ?? ""
        databasePath = path
        directory = path.isEmpty ? NSTemporaryDirectory() : (path as NSString).deletingLastPathComponent
    }

    var locatedCount: Int { runs.reduce(0) { $0 + $1.locatedCount } }

    /// Writes `pending` as a run, in its storage order.
    func spill(_ pending: PendingInserts) throws {
        let run = try Run(directory: directory, databasePath: databasePath)
        try pending.forEachRecordInStorageOrder { header, values in try run.write(header, values: values) }
        try run.finishWriting()
        runs.append(run)
    }

    /// Every spilled row in storage order (unlocated first, in feed order; then along the curve,
    /// an earlier run first where two rows share a curve index), handed over in batches.
    func merge(batchSize: Int = 4096, _ body: (PendingInserts) throws -> Void) throws {
        struct Head: Comparable {
            var key: PendingInserts.StorageKey, run: Int
            static func < (a: Head, b: Head) -> Bool { a.key != b.key ? a.key < b.key : a.run < b.run }
        }
        var heads = Heap<Head>()
        for (k, run) in runs.enumerated() {
            try run.rewind()
            if let h = try run.next() { heads.insert(Head(key: h.storageKey, run: k)) }
        }
        var batch = PendingInserts()
        while let head = heads.popMin() {
            let run = runs[head.run]
            run.withCurrent { header, values in batch.appendRecord(header, values: values) }
            if let h = try run.next() { heads.insert(Head(key: h.storageKey, run: head.run)) }
            if batch.count >= batchSize {
                try body(batch)
                batch.removeAll()
            }
        }
        if batch.count > 0 { try body(batch) }
    }

    /// One sorted run: an unlinked file of records, each a header and the row's packed values.
    final class Run {
        private(set) var count = 0
        private(set) var locatedCount = 0
        private let fd: Int32
        private let databasePath: String
        /// Written out once it holds a megabyte; on reading, the bytes read and not yet used.
        private var buffer: [UInt8] = []
        private var start = 0
        private var current: (header: PendingInserts.RecordHeader, values: Range<Int>)?
        private var atEnd = false

        private static let headerSize = 8 + 8 + 8 + 1 + 4
        private static let bufferSize = 1 << 20

        init(directory: String, databasePath: String) throws {
            self.databasePath = databasePath
            var template = Array((directory as NSString).appendingPathComponent(".trafficgeo-sort-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw Self.failure(databasePath, "cannot make a sort file in \(directory)") }
            // Gone from the folder at once: the open descriptor keeps the data until it closes.
            _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
            self.fd = fd
            buffer.reserveCapacity(Self.bufferSize + Self.headerSize)
        }

        deinit { close(fd) }

        func write(_ header: PendingInserts.RecordHeader, values: UnsafeBufferPointer<UInt8>) throws {
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { buffer.append(contentsOf: $0) } }
            put(header.curveIndex)
            put(header.latitude.bitPattern)
            put(header.longitude.bitPattern)
            buffer.append(header.located ? 1 : 0)
            put(UInt32(values.count))
            buffer.append(contentsOf: values)
            count += 1
            if header.located { locatedCount += 1 }
            if buffer.count >= Self.bufferSize { try drain() }
        }

        func finishWriting() throws {
            try drain()
            buffer = []
        }

        private func drain() throws {
            try buffer.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = Foundation.write(fd, raw.baseAddress! + done, raw.count - done)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw Self.failure(databasePath, "cannot write the ingest's sort file")
                    }
                    done += n
                }
            }
            buffer.removeAll(keepingCapacity: true)
        }

        func rewind() throws {
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw Self.failure(databasePath, "cannot read the ingest's sort file") }
            buffer.removeAll(keepingCapacity: true)
            start = 0
            atEnd = false
            current = nil
        }

        /// Reads the next record; nil at the end of the run.
        func next() throws -> PendingInserts.RecordHeader? {
            if let current { start = current.values.upperBound }
            current = nil
            guard try fill(Self.headerSize) else { return nil }
            func get(_ at: Int, _ width: Int) -> UInt64 {
                var v: UInt64 = 0
                for k in 0..<width { v |= UInt64(buffer[start + at + k]) << (8 * UInt64(k)) }
                return v
            }
            let header = PendingInserts.RecordHeader(curveIndex: get(0, 8), latitude: Double(bitPattern: get(8, 8)),
                                                     longitude: Double(bitPattern: get(16, 8)), located: buffer[start + 24] != 0)
            let length = Int(get(25, 4))
            guard try fill(Self.headerSize + length) else { throw Self.failure(databasePath, "the ingest's sort file ends inside a record") }
            let values = start + Self.headerSize ..< start + Self.headerSize + length
            current = (header, values)
            return header
        }

        /// The record `next` read: its header and packed values (valid inside `body` only).
        func withCurrent(_ body: (PendingInserts.RecordHeader, UnsafeBufferPointer<UInt8>) -> Void) {
            guard let current else { return }
            buffer.withUnsafeBufferPointer { body(current.header, UnsafeBufferPointer(rebasing: $0[current.values])) }
        }

        /// Makes at least `needed` unread bytes available from `start`; false at the end of the file.
        private func fill(_ needed: Int) throws -> Bool {
            if buffer.count - start >= needed { return true }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            var chunk = [UInt8](repeating: 0, count: max(Self.bufferSize, needed))
            while buffer.count < needed && !atEnd {
                let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress!, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure(databasePath, "cannot read the ingest's sort file")
                }
                if n == 0 { atEnd = true } else { buffer.append(contentsOf: chunk[..<n]) }
            }
            return buffer.count >= needed
        }

        private static func failure(_ databasePath: String, _ what: String) -> StoreError {
            let code = errno
            let kind: StoreFailure.Kind = code == ENOSPC || code == EDQUOT ? .diskFull : code == EACCES || code == EROFS ? .notPermitted : .other
            return StoreError.writeFailed(databasePath, reason: StoreFailure(kind, "\(what) (\(String(cString: strerror(code)))); a big first ingest sorts its rows in files in the database's folder, about as big as the rows"))
        }
    }
}
