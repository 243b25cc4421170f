import Foundation
import GRDB

/// Inserts or updates incidents and their R*Tree entries inside an open write transaction.
///
/// Statements are prepared once per writer; positions are projected to the store's CRS with one
/// PROJ context owned by the writer (PROJ contexts are per thread).
final class IncidentWriter {
    enum Outcome { case inserted, updated, unchanged }

    private let db: Database
    private let now: Double
    private let projector: Projector
    private let findStatement: Statement
    private let insertStatement: Statement
    private let updateStatement: Statement
    private let indexInsert: Statement
    private let indexDelete: Statement
    private let resetGeocodeStatus: Statement
    /// Set when the R*Tree was empty at the start: index changes are collected here (in order,
    /// nil = no position) and `finish()` packs them into the tree in one pass.
    private var deferredIndex: [(id: Int64, point: ProjectedPoint?)]?
    /// Inserted rows get increasing ids, so the deferred list can hold an id twice only if some id
    /// came in out of order (an update): then `finish` keeps the last change per id.
    private var deferredMayRepeat = false
    private var lastDeferredID = Int64.min
    /// Sources known to have no stored incidents: their entries are inserted without a lookup first.
    private var freshSources: Set<String> = []
    private var knownSources: Set<String> = []

    /// With `bulkIndex`, an empty R*Tree is built by `RTreeBulkLoader` when `finish()` is called
    /// (which must then happen before the transaction commits).
    init(db: Database, now: Date, bulkIndex: Bool = false) throws {
        self.db = db
        // Whole seconds: SQLite stores an integral REAL in 4 bytes instead of 8 (8 bytes a row for both columns).
        self.now = now.timeIntervalSince1970.rounded(.down)
        projector = try Projector(target: StoreSchema.indexCRS)
        if bulkIndex, try RTreeBulkLoader.isEmpty(db) { deferredIndex = [] }
        // Column 0 the hash, then the incident from column 1 (its store id first): read by position.
        findStatement = try db.makeStatement(sql: """
            SELECT i.content_hash, \(StoredIncident.selection) FROM incidents i WHERE i.source = ? AND i.external_id = ?
            """)
        let columns = Self.columns.joined(separator: ", ")
        let placeholders = Self.columns.map { _ in "?" }.joined(separator: ", ")
        insertStatement = try db.makeStatement(sql: """
            INSERT INTO incidents (source, external_id, \(columns), first_seen, last_changed) VALUES (?, ?, \(placeholders), ?, ?)
            """)
        let assignments = Self.columns.map { "\($0) = ?" }.joined(separator: ", ")
        updateStatement = try db.makeStatement(sql: "UPDATE incidents SET \(assignments), last_changed = ? WHERE id = ?")
        indexInsert = try db.makeStatement(sql: "INSERT OR REPLACE INTO incident_index VALUES (?, ?, ?, ?, ?, ?, ?)")
        indexDelete = try db.makeStatement(sql: "DELETE FROM incident_index WHERE id = ?")
        resetGeocodeStatus = try db.makeStatement(sql: "UPDATE incidents SET geocode_status = NULL, geocode_error = NULL WHERE id = ?")
    }

    /// The stored columns besides identity and bookkeeping, in binding order.
    static let columns = [
        "title", "summary", "weblink", "icon_url", "updated", "expires", "road", "category",
        "latitude", "longitude", "segment", "position_source", "geocoder", "geocode_query",
        "geocode_precision", "geocode_confidence", "properties", "content_hash",
    ]

    /// Writes the deferred index entries (bulk mode); a no-op otherwise.
    func finish() throws {
        guard let deferred = deferredIndex else { return }
        deferredIndex = nil
        // The last change of each incident wins; incidents whose last change removed the position stay out.
        var latest: [Int64: ProjectedPoint?] = [:]
        var order: [Int64] = []
        let repeated = deferredMayRepeat
        if repeated {
            for (id, point) in deferred {
                if latest.updateValue(point, forKey: id) == nil { order.append(id) }
            }
        }
        let entries: [RTreeBulkLoader.Entry] = repeated
            ? order.compactMap { id in latest[id]!.map { RTreeBulkLoader.Entry(id: id, x: $0.x, y: $0.y, z: $0.z) } }
            : deferred.compactMap { e in e.point.map { RTreeBulkLoader.Entry(id: e.id, x: $0.x, y: $0.y, z: $0.z) } }
        try RTreeBulkLoader.load(entries, into: db)
    }

    func upsert(_ incoming: Incident) throws -> Outcome {
        var incident = incoming
        if try isFresh(incident.source) {
            // Nothing of this source is stored yet: insert straight away; only an id repeated
            // within the feed hits the unique constraint and takes the update path below.
            let values = Self.values(of: incident)
            do {
                try insertStatement.execute(arguments: Self.arguments([incident.source.databaseValue, incident.id.databaseValue], values.list, [now.databaseValue, now.databaseValue]))
                try index(db.lastInsertedRowID, incident.position)
                return .inserted
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                // fall through to the lookup
            }
        }
        let existing = try Row.fetchOne(findStatement, arguments: [incident.source, incident.id])
        if let existing, incident.position == nil {
            let stored = StoredIncident(row: existing, startingAt: 1).incident
            // The feed still says the same words and has no coordinates: keep the position a geocoder found earlier.
            if let position = stored.position, stored.title == incident.title, stored.summary == incident.summary {
                incident.position = position
                incident.positionSource = stored.positionSource
                incident.segment = incident.segment ?? stored.segment
            }
        }
        let values = Self.values(of: incident)
        let hash = values.hash
        if let existing {
            let rowID: Int64 = existing[1]
            if existing[0] as Int64 == hash { return .unchanged }
            try updateStatement.execute(arguments: Self.arguments([], values.list, [now.databaseValue, rowID.databaseValue]))
            try index(rowID, incident.position)
            // New words without a position: worth asking the geocoder again.
            if incident.position == nil { try resetGeocodeStatus.execute(arguments: [rowID]) }
            return .updated
        }
        try insertStatement.execute(arguments: Self.arguments([incident.source.databaseValue, incident.id.databaseValue], values.list, [now.databaseValue, now.databaseValue]))
        try index(db.lastInsertedRowID, incident.position)
        return .inserted
    }

    /// Replaces the stored fields of an existing incident (a geocoder found its position) and
    /// re-indexes it; the content hash follows, so re-reading the feed later counts it unchanged.
    func replacePosition(storeID: Int64, with incident: Incident) throws {
        let values = Self.values(of: incident)
        try updateStatement.execute(arguments: Self.arguments([], values.list, [now.databaseValue, storeID.databaseValue]))
        try index(storeID, incident.position)
    }

    private func isFresh(_ source: String) throws -> Bool {
        if freshSources.contains(source) { return true }
        if knownSources.contains(source) { return false }
        let stored = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents WHERE source = ?)", arguments: [source]) ?? true
        if stored { knownSources.insert(source) } else { freshSources.insert(source) }
        return !stored
    }

    /// Puts the incident's position into the R*Tree (or removes it when it has none).
    private func index(_ rowID: Int64, _ position: Coordinate?) throws {
        if deferredIndex != nil {
            deferredIndex!.append((rowID, try position.map { try projector.forward($0) }))
            if rowID <= lastDeferredID { deferredMayRepeat = true }
            lastDeferredID = max(lastDeferredID, rowID)
            return
        }
        guard let position else {
            try indexDelete.execute(arguments: [rowID])
            return
        }
        let p = try projector.forward(position)
        try indexInsert.execute(arguments: [rowID, p.x, p.x, p.y, p.y, p.z, p.z])
    }

    /// The stored columns of `columns`, in order, as database values (no existential boxing: the
    /// arguments of the insert statement were a fifth of a big ingest), and their change hash.
    private static func values(of i: Incident) -> (list: [DatabaseValue], hash: Int64) {
        func value(_ x: (some DatabaseValueConvertible)?) -> DatabaseValue { x?.databaseValue ?? .null }
        let source = i.positionSource
        var list: [DatabaseValue] = [
            value(i.title), value(i.summary), value(i.weblink), value(i.iconURL),
            value(i.updated?.timeIntervalSince1970), value(i.expires?.timeIntervalSince1970),
            value(i.road), value(i.category?.rawValue), value(i.position?.latitude), value(i.position?.longitude),
            value(i.segment.map(GeoJSONText.coordinates)), value(source?.kind.rawValue), value(source?.geocoder),
            value(source?.query), value(source?.precision?.rawValue), value(source?.confidence),
            value(i.properties.isEmpty ? nil : GeoJSONText.object(i.properties)),
        ]
        var hash = StableHash()
        for value in list { hash.combine(column: value) }
        list.append(hash.int64.databaseValue)
        return (list, hash.int64)
    }

    private static func arguments(_ head: [DatabaseValue], _ body: [DatabaseValue], _ tail: [DatabaseValue]) -> StatementArguments {
        var all: [DatabaseValue] = []
        all.reserveCapacity(head.count + body.count + tail.count)
        all += head
        all += body
        all += tail
        return StatementArguments(all)
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
