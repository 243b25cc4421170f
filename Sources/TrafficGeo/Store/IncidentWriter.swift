import Foundation
import GRDB
import GRDBSQLite

/// Inserts or updates incidents and keeps the spatial index (`BlockIndex`) right, inside an open
/// write transaction. Statements are prepared once per writer.
///
/// New incidents are held back (packed, `PendingInserts`) and stored by `flush()` in Hilbert-curve
/// order of their positions, so that nearby incidents get consecutive ids and the index can cover
/// them as blocks. `finish()` must be called before the transaction commits.
final class IncidentWriter {
    /// What the writer did so far; entries of the feed that repeat an id count as updates.
    struct Counts { var inserted = 0, updated = 0, unchanged = 0 }
    private(set) var counts = Counts()

    private let db: Database
    private let now: Double
    private let index: BlockIndexWriter
    private let findStatement: Statement
    private let insertStatement: Statement
    private let updateStatement: Statement
    private let resetGeocodeStatus: Statement
    private var pending = PendingInserts()
    private var bulkInsertStatements: [Int: Statement] = [:]
    /// Pending incidents are stored once this many wait (about 100 bytes each for short entries);
    /// bigger feeds are stored and indexed in several runs, each in curve order.
    private let flushThreshold: Int
    /// Source names and their ids in `sources`.
    private var sourceIDs: [String: Int64] = [:]
    /// Sources known to have no stored incidents: their entries are not looked up first.
    private var freshSources: Set<Int64> = []
    private var knownSources: Set<Int64> = []

    init(db: Database, now: Date, flushThreshold: Int = 2_000_000) throws {
        self.db = db
        // Whole seconds: SQLite stores an integral REAL in 4 bytes instead of 8 (8 bytes a row for both columns).
        self.now = now.timeIntervalSince1970.rounded(.down)
        self.flushThreshold = max(1, flushThreshold)
        index = try BlockIndexWriter(db: db)
        let columns = Self.columns.joined(separator: ", ")
        // Column 0 the hash, 1 the store id, then `columns` in order.
        findStatement = try db.makeStatement(sql: "SELECT content_hash, id, \(columns) FROM incidents WHERE source_id = ? AND external_id = ?")
        let placeholders = Self.columns.map { _ in "?" }.joined(separator: ", ")
        // last_changed stays NULL until the incident changes (4 bytes a row).
        insertStatement = try db.makeStatement(sql: """
            INSERT INTO incidents (id, source_id, external_id, \(columns), content_hash, first_seen)
            VALUES (?, ?, ?, \(placeholders), ?, ?)
            """)
        let assignments = Self.columns.map { "\($0) = ?" }.joined(separator: ", ")
        updateStatement = try db.makeStatement(sql: "UPDATE incidents SET \(assignments), content_hash = ?, last_changed = ? WHERE id = ?")
        resetGeocodeStatus = try db.makeStatement(sql: "UPDATE incidents SET geocode_status = NULL, geocode_error = NULL WHERE id = ?")
    }

    /// The stored columns besides identity, hash and bookkeeping, in binding order.
    static let columns = [
        "title", "summary", "weblink", "icon_url", "updated", "expires", "road", "category",
        "latitude", "longitude", "segment", "position_source", "geocoder", "geocode_query",
        "geocode_precision", "geocode_confidence", "properties",
    ]
    /// Positions in `columns`.
    private enum Column {
        static let title = 0, summary = 1, latitude = 8, longitude = 9, segment = 10
        /// position_source … geocode_confidence: how the position was found.
        static let positionSource = 11...15
    }

    /// Stores the incidents still pending; call before the transaction commits.
    func finish() throws {
        try flush()
    }

    func upsert(_ incident: Incident) throws {
        var list = Self.values(of: incident)
        let key = PendingInserts.key(source: incident.source, id: incident.id)
        if let slot = pending.slot(of: key) {
            // The feed repeats an id not stored yet: the later entry wins, as for stored ones.
            let earlier = pending.values(at: slot)
            Self.carryPosition(into: &list) { earlier[PendingInserts.firstColumn + $0] }
            let hash = Self.hash(list)
            if earlier.last == hash.databaseValue { counts.unchanged += 1; return }
            // The position as stored (possibly carried over from the earlier entry), not as read.
            pending.replace(slot, with: [earlier[0], incident.id.databaseValue] + list + [hash.databaseValue], position: Self.position(list))
            counts.updated += 1
            return
        }
        let source = try sourceID(incident.source)
        if try !isFresh(source), let existing = try Row.fetchOne(findStatement, arguments: [source, incident.id]) {
            return try update(existing, with: &list)
        }
        pending.append(key: key, values: [source.databaseValue, incident.id.databaseValue] + list + [Self.hash(list).databaseValue],
                       position: incident.position)
        counts.inserted += 1
        if pending.count >= flushThreshold { try flush() }
    }

    /// Updates a stored incident (`existing`: a `findStatement` row) to the column values `list`.
    private func update(_ existing: Row, with list: inout [DatabaseValue]) throws {
        let rowID: Int64 = existing[1]
        Self.carryPosition(into: &list) { existing[2 + $0] as DatabaseValue }
        let hash = Self.hash(list)
        if existing[0] as Int64 == hash { counts.unchanged += 1; return }
        try updateStatement.execute(arguments: StatementArguments(list + [hash.databaseValue, now.databaseValue, rowID.databaseValue]))
        let position = Self.position(list)
        try index.positionChanged(id: rowID, to: position)
        // New words without a position: worth asking the geocoder again.
        if position == nil { try resetGeocodeStatus.execute(arguments: [rowID]) }
        counts.updated += 1
    }

    /// Stores the pending incidents: those without a position first, then the others along the
    /// Hilbert curve with consecutive ids, indexed as blocks.
    private func flush() throws {
        guard pending.count > 0 else { return }
        let order = pending.storageOrder()
        var nextID = try index.nextFreeID()
        // Into an empty table (pending ids are unique among themselves), the indexes are built
        // after the rows: sorted, with full pages, instead of a million random insertions each.
        let bulk = try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents)")!
        var rebuild: [String] = []
        if bulk {
            for index in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'incidents' AND sql IS NOT NULL") {
                try db.execute(sql: "DROP INDEX \(String(index[0]).quotedDatabaseIdentifier)")
                rebuild.append(index[1])
            }
        }
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
                try insert(slots, firstID: nextID)
                for (k, slot) in slots.enumerated() { stored(slot, as: nextID + Int64(k)) }
                nextID += Int64(rows)
                start += rows
            }
        } else {
            for slot in order {
                guard try insertOrUpdate(slot, id: nextID) else { continue }
                stored(slot, as: nextID)
                nextID += 1
            }
        }
        if !rebuild.isEmpty {
            // SQLite sorts the keys of a new index with helper threads when allowed to (a tenth
            // faster with two; the other core is idle by now).
            let helpers = min(4, max(0, ProcessInfo.processInfo.activeProcessorCount - 1))
            try db.execute(sql: "PRAGMA threads = \(helpers)")
            defer { try? db.execute(sql: "PRAGMA threads = 0") }
            for sql in rebuild { try db.execute(sql: sql) }
        }
        if let firstLocatedID { try index.addBlocks(firstID: firstLocatedID, points: points) }
        pending = PendingInserts()
    }

    private static let rowsPerBulkInsert = 32
    /// Parameters of one row of `insertStatement`: id, then the pending values (source id, feed id,
    /// columns, hash), then first_seen.
    private static let parametersPerRow = Int32(2 + PendingInserts.firstColumn + columns.count + 1)

    /// Inserts pending rows with one statement, ids from `firstID` on, binding the packed values
    /// straight through SQLite's C API (building GRDB's StatementArguments cost as much as the
    /// insert itself: a million rows, ~2 s).
    private func insert(_ slots: ArraySlice<Int>, firstID: Int64) throws {
        let statement = try bulkInsertStatement(rows: slots.count).sqliteStatement
        sqlite3_reset(statement)
        for (k, slot) in slots.enumerated() {
            bindRow(slot, id: firstID + Int64(k), to: statement, row: Int32(k))
        }
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        if code != SQLITE_DONE { throw lastError() }
    }

    /// Binds the parameters of row `row` of an insert statement: the id, the pending values, first_seen.
    private func bindRow(_ slot: Int, id: Int64, to statement: SQLiteStatement, row: Int32) {
        let base = row * Self.parametersPerRow
        sqlite3_bind_int64(statement, base + 1, id)
        pending.bind(slot, to: statement, from: base + 2)
        sqlite3_bind_double(statement, base + Self.parametersPerRow, now)
    }

    /// What SQLite reported for the statement that just failed.
    private func lastError() -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)), message: db.lastErrorMessage)
    }

    /// `insertStatement` for `rows` rows at once (prepared once per size).
    private func bulkInsertStatement(rows: Int) throws -> Statement {
        if let statement = bulkInsertStatements[rows] { return statement }
        let columns = Self.columns.joined(separator: ", ")
        let row = "(" + Array(repeating: "?", count: Int(Self.parametersPerRow)).joined(separator: ", ") + ")"
        let statement = try db.makeStatement(sql: """
            INSERT INTO incidents (id, source_id, external_id, \(columns), content_hash, first_seen)
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))
            """)
        bulkInsertStatements[rows] = statement
        return statement
    }

    /// Inserts one pending row as `id`; false when an earlier flush of this ingest stored the same
    /// incident (a repeated id in a big feed), which is then updated instead.
    private func insertOrUpdate(_ slot: Int, id: Int64) throws -> Bool {
        let insert = insertStatement.sqliteStatement
        sqlite3_reset(insert)
        bindRow(slot, id: id, to: insert, row: 0)
        let code = sqlite3_step(insert)
        sqlite3_reset(insert)
        if code == SQLITE_DONE { return true }
        let error = lastError()
        guard error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE else { throw error }
        let values = pending.values(at: slot)
        guard let existing = try Row.fetchOne(findStatement, arguments: [values[0], values[1]]) else { throw error }
        counts.inserted -= 1
        var list = Array(values[PendingInserts.firstColumn ..< PendingInserts.firstColumn + Self.columns.count])
        try update(existing, with: &list)
        return false
    }

    /// Replaces the stored fields of an existing incident (a geocoder found its position) and
    /// re-indexes it; the content hash follows, so re-reading the feed later counts it unchanged.
    func replacePosition(storeID: Int64, with incident: Incident) throws {
        let list = Self.values(of: incident)
        try updateStatement.execute(arguments: StatementArguments(list + [Self.hash(list).databaseValue, now.databaseValue, storeID.databaseValue]))
        try index.positionChanged(id: storeID, to: incident.position)
    }

    /// The id of the source in `sources`, added if new.
    private func sourceID(_ name: String) throws -> Int64 {
        if let id = sourceIDs[name] { return id }
        try db.execute(sql: "INSERT OR IGNORE INTO sources (name) VALUES (?)", arguments: [name])
        guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [name]) else {
            throw StoreError.writeFailed("", reason: "the source \(name) could not be recorded")
        }
        sourceIDs[name] = id
        return id
    }

    private func isFresh(_ source: Int64) throws -> Bool {
        if freshSources.contains(source) { return true }
        if knownSources.contains(source) { return false }
        let stored = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents WHERE source_id = ?)", arguments: [source]) ?? true
        if stored { knownSources.insert(source) } else { freshSources.insert(source) }
        return !stored
    }

    /// The feed still says the same words and has no coordinates: keep the position found
    /// earlier (by a geocoder, or by an earlier entry). `earlier(i)` is the earlier value of column i.
    private static func carryPosition(into list: inout [DatabaseValue], earlier: (Int) -> DatabaseValue) {
        guard list[Column.latitude].isNull, !earlier(Column.latitude).isNull,
              earlier(Column.title) == list[Column.title], earlier(Column.summary) == list[Column.summary] else { return }
        list[Column.latitude] = earlier(Column.latitude)
        list[Column.longitude] = earlier(Column.longitude)
        for c in Column.positionSource { list[c] = earlier(c) }
        if list[Column.segment].isNull { list[Column.segment] = earlier(Column.segment) }
    }

    private static func position(_ list: [DatabaseValue]) -> Coordinate? {
        guard let lat = Double.fromDatabaseValue(list[Column.latitude]), let lon = Double.fromDatabaseValue(list[Column.longitude]) else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }

    /// The stored columns of `columns`, in order, as database values (no existential boxing: the
    /// arguments of the insert statement were a fifth of a big ingest).
    private static func values(of i: Incident) -> [DatabaseValue] {
        func value(_ x: (some DatabaseValueConvertible)?) -> DatabaseValue { x?.databaseValue ?? .null }
        let source = i.positionSource
        return [
            value(i.title), value(i.summary), value(i.weblink), value(i.iconURL),
            value(i.updated?.timeIntervalSince1970), value(i.expires?.timeIntervalSince1970),
            value(i.road), value(i.category?.rawValue), value(i.position?.latitude), value(i.position?.longitude),
            value(i.segment.map(GeoJSONText.coordinates)), value(source?.kind.storeCode), value(source?.geocoder),
            value(source?.query), value(source?.precision?.rawValue), value(source?.confidence),
            value(i.properties.isEmpty ? nil : GeoJSONText.object(i.properties)),
        ]
    }

    /// The change hash of the column values: 47 bits, which SQLite stores in 6 bytes instead of 8.
    private static func hash(_ list: [DatabaseValue]) -> Int64 {
        var hash = StableHash()
        for value in list { hash.combine(column: value) }
        return hash.int64 & (1 << 47 - 1)
    }
}

/// New incidents waiting to be stored, packed into one byte buffer: about 100 bytes for a short
/// entry instead of ~550 as arrays of database values (a million-point ingest holds them all).
private struct PendingInserts {
    /// Values are source id, external id, the writer's columns, content hash.
    static let firstColumn = 2

    private struct Item {
        var offset: Int
        var curveIndex: UInt64
        var latitude: Double, longitude: Double
        var located: Bool
    }

    private var bytes: [UInt8] = []
    private var items: [Item] = []
    private var slots: [String: Int] = [:]

    var count: Int { items.count }

    static func key(source: String, id: String) -> String { source + "\u{0}" + id }

    func slot(of key: String) -> Int? { slots[key] }

    mutating func append(key: String, values: [DatabaseValue], position: Coordinate?) {
        slots[key] = items.count
        items.append(item(values, position))
    }

    /// A later entry with the same id: its values replace the earlier ones (the old bytes stay unused).
    mutating func replace(_ slot: Int, with values: [DatabaseValue], position: Coordinate?) {
        items[slot] = item(values, position)
    }

    func position(at slot: Int) -> Coordinate? {
        let item = items[slot]
        return item.located ? Coordinate(latitude: item.latitude, longitude: item.longitude) : nil
    }

    /// Slots in the order to store them: unlocated first (in feed order), then along the curve.
    func storageOrder() -> [Int] {
        items.indices.sorted { a, b in
            let x = items[a], y = items[b]
            if x.located != y.located { return !x.located }
            return x.curveIndex != y.curveIndex ? x.curveIndex < y.curveIndex : a < b
        }
    }

    private mutating func item(_ values: [DatabaseValue], _ position: Coordinate?) -> Item {
        let offset = bytes.count
        bytes.append(UInt8(values.count))
        for value in values { encode(value) }
        guard let position else { return Item(offset: offset, curveIndex: 0, latitude: 0, longitude: 0, located: false) }
        return Item(offset: offset, curveIndex: HilbertCurve3D.index(of: GeocentricPoint(position)),
                    latitude: position.latitude, longitude: position.longitude, located: true)
    }

    // Encoding: a tag byte, then 8 bytes (integer, real) or a 4-byte length and the bytes (text, blob).
    private enum Tag: UInt8 { case null, integer, real, text, blob }

    private mutating func encode(_ value: DatabaseValue) {
        switch value.storage {
        case .null: bytes.append(Tag.null.rawValue)
        case let .int64(v): bytes.append(Tag.integer.rawValue); put(UInt64(bitPattern: v))
        case let .double(v): bytes.append(Tag.real.rawValue); put(v.bitPattern)
        case let .string(s):
            bytes.append(Tag.text.rawValue)
            var s = s
            s.withUTF8 { putBytes($0) }
        case let .blob(d):
            bytes.append(Tag.blob.rawValue)
            d.withUnsafeBytes { putBytes($0.bindMemory(to: UInt8.self)) }
        }
    }

    private mutating func put(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func putBytes(_ b: UnsafeBufferPointer<UInt8>) {
        withUnsafeBytes(of: UInt32(b.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: b)
    }

    /// One packed value, its bytes valid only inside `forEachValue`.
    private enum Packed {
        case null, integer(Int64), real(Double), text(UnsafeBufferPointer<UInt8>), blob(UnsafeBufferPointer<UInt8>)
    }

    /// Calls `body` with the index and value of each value of `slot`, in order.
    private func forEachValue(of slot: Int, _ body: (Int, Packed) -> Void) {
        bytes.withUnsafeBufferPointer { b in
            var at = items[slot].offset
            let n = Int(b[at])
            at += 1
            func word() -> UInt64 {
                var v: UInt64 = 0
                for k in 0..<8 { v |= UInt64(b[at + k]) << (8 * UInt64(k)) }
                at += 8
                return v
            }
            func chunk() -> UnsafeBufferPointer<UInt8> {
                var length = 0
                for k in 0..<4 { length |= Int(b[at + k]) << (8 * k) }
                at += 4
                defer { at += length }
                return UnsafeBufferPointer(rebasing: b[at ..< at + length])
            }
            for k in 0..<n {
                let tag = Tag(rawValue: b[at])!
                at += 1
                switch tag {
                case .null: body(k, .null)
                case .integer: body(k, .integer(Int64(bitPattern: word())))
                case .real: body(k, .real(Double(bitPattern: word())))
                case .text: body(k, .text(chunk()))
                case .blob: body(k, .blob(chunk()))
                }
            }
        }
    }

    /// Binds the values of `slot` to the parameters `first`, `first + 1`, … of `statement`.
    func bind(_ slot: Int, to statement: SQLiteStatement, from first: Int32) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        forEachValue(of: slot) { k, value in
            let parameter = first + Int32(k)
            switch value {
            case .null: sqlite3_bind_null(statement, parameter)
            case let .integer(v): sqlite3_bind_int64(statement, parameter, v)
            case let .real(v): sqlite3_bind_double(statement, parameter, v)
            case let .text(bytes):
                // An empty value still needs a pointer: NULL would bind SQL NULL.
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    sqlite3_bind_text(statement, parameter, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count), transient)
                } else {
                    sqlite3_bind_text(statement, parameter, "", 0, transient)
                }
            case let .blob(bytes):
                if let base = bytes.baseAddress, !bytes.isEmpty {
                    sqlite3_bind_blob(statement, parameter, base, Int32(bytes.count), transient)
                } else {
                    sqlite3_bind_zeroblob(statement, parameter, 0)
                }
            }
        }
    }

    func values(at slot: Int) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        forEachValue(of: slot) { _, value in
            switch value {
            case .null: values.append(.null)
            case let .integer(v): values.append(v.databaseValue)
            case let .real(v): values.append(v.databaseValue)
            case let .text(bytes): values.append(String(decoding: bytes, as: UTF8.self).databaseValue)
            case let .blob(bytes): values.append(Data(bytes).databaseValue)
            }
        }
        return values
    }
}

/// Compact JSON text for the segment and properties columns.
enum GeoJSONText {
    static func coordinates(_ points: [Coordinate]) -> String {
        "[" + points.map { "[\(format($0.longitude)),\(format($0.latitude))]" }.joined(separator: ",") + "]"
    }

    static func parseCoordinates(_ text: String) -> [Coordinate]? {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[Double]] else { return nil }
        return array.compactMap { $0.count >= 2 ? Coordinate(latitude: $0[1], longitude: $0[0]) : nil }
    }

    static func object(_ dictionary: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func parseObject(_ text: String) -> [String: String] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])?
            .compactMapValues { $0 as? String } ?? [:]
    }

    /// Shortest round-tripping decimal text of a coordinate value.
    static func format(_ value: Double) -> String { "\(value)" }
}
