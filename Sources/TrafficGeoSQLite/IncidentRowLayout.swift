import Foundation
import GRDB
import GRDBSQLite
import TrafficGeoModel
import TrafficGeoStore

/// The incidents table's row layout, defined once: the columns that hold an incident's fields
/// (`Field`, in binding order), what a reading query selects (`selection`, decoded by
/// `decode(_:startingAt:)`), and the values written for an incident (`values(of:)`).
/// Every statement and every column position is derived from here, so a new column is one new
/// case: nothing else shifts silently (`StoreLayoutTests` round-trips every field).
enum IncidentRowLayout {
    /// The stored fields of an incident besides its identity, change hash and bookkeeping times.
    enum Field: Int, CaseIterable {
        case title, summary, weblink, iconURL, updated, expires, road, category, latitude, longitude, segment
        /// How the position was found (`positionFields`).
        case positionSource, geocoder, geocodeQuery, geocodePrecision, geocodeConfidence
        case properties
        /// When it begins: the `valid_from` detail in whole seconds, where `--active-at` reads it
        /// (`IncidentFilter.began`) without parsing the properties' JSON (v9; not decoded: the
        /// detail is in the properties).
        case validFrom
        /// The other roads it is on (`Incident.otherRoads`) as "|I-35|US-6|", where a road filter
        /// finds "|I-35|" (v10; not decoded: the detail is in the properties). NULL for most rows,
        /// and a partial index over the others, so a road filter still reads only its roads' rows.
        case otherRoads
        /// Its recurring schedule's canonical text (`RecurringSchedule.text`), which
        /// `--active-at` tests with `RecurringSchedule.sqlFunctionName` (v11; not decoded: the
        /// detail is in the properties). NULL for the rows without one.
        case schedule

        var column: String {
            switch self {
            case .title: "title"
            case .summary: "summary"
            case .weblink: "weblink"
            case .iconURL: "icon_url"
            case .updated: "updated"
            case .expires: "expires"
            case .road: "road"
            case .category: "category"
            case .latitude: "latitude"
            case .longitude: "longitude"
            case .segment: "segment"
            case .positionSource: "position_source"
            case .geocoder: "geocoder"
            case .geocodeQuery: "geocode_query"
            case .geocodePrecision: "geocode_precision"
            case .geocodeConfidence: "geocode_confidence"
            case .properties: "properties"
            case .validFrom: "valid_from"
            case .otherRoads: "other_roads"
            case .schedule: "schedule"
            }
        }
    }

    /// The field columns in binding order: the fields, then each measure's number
    /// (`IncidentMeasure.column`; not decoded: the detail is in the properties).
    static let fieldColumns = Field.allCases.map(\.column) + IncidentMeasure.allCases.map(\.column)
    /// Where the measures' numbers are among the field values (after the fields).
    static let measurePositions = Field.allCases.count ..< fieldColumns.count
    /// The fields that say how a position was found: carried over together with it.
    static let positionFields: [Field] = [.positionSource, .geocoder, .geocodeQuery, .geocodePrecision, .geocodeConfidence]

    // MARK: - Reading

    /// What a query selects before the fields (table aliased `i`): store id, source name, feed id.
    private static let leadingSelection = ["i.id", "(SELECT name FROM sources WHERE id = i.source_id)", "i.external_id"]
    /// After the fields: first seen, last changed (NULL while unchanged: stored as first seen),
    /// ended, and its place among reports and events (`EventRole`, the event of a member, the
    /// reports of an event), and when a snapshot last listed it (`IncidentFilter.listedAtSQL`).
    private static let trailingSelection = ["i.first_seen", "coalesce(i.last_changed, i.first_seen)", "i.ended", "i.role", "i.event_id", "i.reports",
                                            "(\(IncidentFilter.listedAtSQL))"]

    /// The columns `decode(_:startingAt:)` reads, in order, for a table aliased `i`.
    /// Decoding by position: GRDB's lookup by name lower-cases every name on every access, which
    /// was the largest cost of a radius query.
    static let selection = (leadingSelection + fieldColumns.map { "i." + $0 } + trailingSelection).joined(separator: ", ")
    /// How many columns `selection` has.
    static let selectionCount = leadingSelection.count + fieldColumns.count + trailingSelection.count

    /// Where things are in `selection`.
    enum Selected {
        static let storeID = 0, source = 1, externalID = 2
        static func field(_ f: Field) -> Int { leadingSelection.count + f.rawValue }
        static let firstSeen = leadingSelection.count + fieldColumns.count
        static let lastChanged = firstSeen + 1
        static let ended = firstSeen + 2
        static let role = firstSeen + 3
        static let event = firstSeen + 4
        static let reports = firstSeen + 5
        static let listedAt = firstSeen + 6
    }

    /// The stored incident in `row`, whose `selection` columns start at column `c`.
    static func decode(_ row: Row, startingAt c: Int = 0) -> StoredIncident {
        decode(RowColumns(row: row, first: c))
    }

    /// The stored incident in the current row of `statement` (stepped through SQLite's C API),
    /// whose `selection` columns start at column `c`.
    static func decode(_ statement: SQLiteStatement, startingAt c: Int32) -> StoredIncident {
        decode(StatementColumns(statement: statement, first: c))
    }

    /// The stored incident whose `selection` columns `columns` reads.
    private static func decode(_ columns: some SelectedColumns) -> StoredIncident {
        func text(_ f: Field) -> String? { columns.text(Selected.field(f)) }
        func date(_ f: Field) -> Date? { columns.real(Selected.field(f)).map(Date.init(timeIntervalSince1970:)) }
        var incident = Incident(source: columns.text(Selected.source) ?? "",
                                id: columns.text(Selected.externalID) ?? "",
                                title: text(.title) ?? "")
        incident.summary = text(.summary)
        incident.weblink = text(.weblink)
        incident.iconURL = text(.iconURL)
        incident.updated = date(.updated)
        incident.expires = date(.expires)
        incident.road = text(.road)
        incident.category = text(.category).flatMap(IncidentCategory.init(rawValue:))
        if let lat = columns.real(Selected.field(.latitude)), let lon = columns.real(Selected.field(.longitude)) {
            incident.position = Coordinate(latitude: lat, longitude: lon)
        }
        incident.segment = text(.segment).flatMap(ColumnJSON.parseCoordinates)
        if let kind = columns.integer(Selected.field(.positionSource)).flatMap(PositionSource.Kind.init(storeCode:)) {
            incident.positionSource = PositionSource(
                kind: kind, geocoder: text(.geocoder), query: text(.geocodeQuery),
                precision: text(.geocodePrecision).flatMap(GeocodePrecision.init(rawValue:)),
                confidence: columns.real(Selected.field(.geocodeConfidence)))
        }
        incident.properties = text(.properties).map(PropertiesJSON.parse) ?? [:]
        // (A local, not `.map(Date.init)` in the call: that crashed the 6.3 optimiser, CopyPropagation.)
        var ended: Date?
        if let seconds = columns.real(Selected.ended) { ended = Date(timeIntervalSince1970: seconds) }
        var listedAt: Date?
        if let seconds = columns.real(Selected.listedAt) { listedAt = Date(timeIntervalSince1970: seconds) }
        let role = columns.integer(Selected.role).flatMap { EventRole(rawValue: Int($0)) } ?? .report
        var members: [ReportReference] = []
        if role == .event {
            // An event's row is filed under the events' own source; it shows its first report's.
            members = columns.text(Selected.reports).map(ReportReference.parse) ?? []
            incident.source = members.first?.source ?? ""
            incident.id = members.first?.id ?? ""
        }
        return StoredIncident(storeID: columns.integer(Selected.storeID) ?? 0, incident: incident,
                              firstSeen: Date(timeIntervalSince1970: columns.real(Selected.firstSeen) ?? 0),
                              lastChanged: Date(timeIntervalSince1970: columns.real(Selected.lastChanged) ?? 0),
                              ended: ended, role: role, memberOf: role == .member ? columns.integer(Selected.event) : nil,
                              memberReports: members, listedAt: listedAt)
    }

    /// The incidents with these ids (those that exist). Up to 64 ids (a page of nearest
    /// results) go as a table of values that one statement joins to the incidents, id by id;
    /// more go in one `IN` statement per 500 ids. A statement and its row set-up cost more than decoding a row; for
    /// a short list, `IN` builds and sorts a temporary index of the ids first (fetching the 10
    /// results of a nearest request in `serve` then cost as much as finding them), and a lookup
    /// statement per id pays the statement's start and end ten times.
    static func fetch(_ db: Database, ids: [Int64]) throws -> [Int64: StoredIncident] {
        var found: [Int64: StoredIncident] = [:]
        found.reserveCapacity(ids.count)
        // Bound and stepped through SQLite's C API: GRDB's arguments and row cursor were a
        // tenth of a 10-nearest request in `serve`.
        func collect(_ raw: SQLiteStatement) throws {
            var code = sqlite3_step(raw)
            while code == SQLITE_ROW {
                let stored = decode(raw, startingAt: 0)
                found[stored.storeID] = stored
                code = sqlite3_step(raw)
            }
            sqlite3_reset(raw)
            guard code == SQLITE_DONE else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage) }
        }
        if !ids.isEmpty, ids.count <= byListedIDs.count {
            let raw = try db.cachedStatement(sql: byListedIDs[ids.count - 1]).sqliteStatement
            sqlite3_reset(raw)
            for (k, id) in ids.enumerated() { sqlite3_bind_int64(raw, Int32(k + 1), id) }
            try collect(raw)
            return found
        }
        // In chunks: SQLite allows 32766 parameters to a statement.
        var start = 0
        while start < ids.count {
            let chunk = ids[start ..< min(ids.count, start + 500)]
            let marks = String(repeating: "?,", count: chunk.count - 1) + "?"
            let raw = try db.cachedStatement(sql: "SELECT \(selection) FROM incidents i WHERE i.id IN (\(marks))").sqliteStatement
            sqlite3_reset(raw)
            for (k, id) in chunk.enumerated() { sqlite3_bind_int64(raw, Int32(k + 1), id) }
            try collect(raw)
            start += chunk.count
        }
        return found
    }

    /// For 1…64 ids: the ids as a table of values, each looked up in the incidents in turn (`fetch(_:ids:)`).
    private static let byListedIDs = (1...64).map { n in
        "SELECT \(selection) FROM (VALUES " + Array(repeating: "(?)", count: n).joined(separator: ",") + ") v CROSS JOIN incidents i ON i.id = v.column1"
    }
    /// One incident by store id (made once: the statement cache is keyed by the SQL text).
    private static let byID = "SELECT \(selection) FROM incidents i WHERE i.id = ?"

    /// The stored incident with this store id.
    static func fetch(_ db: Database, id: Int64) throws -> StoredIncident? {
        try Row.fetchOne(db.cachedStatement(sql: byID), arguments: [id]).map { decode($0) }
    }

    // MARK: - Writing

    /// The field values of an incident, indexed by `Field.rawValue` (then the measures, in the
    /// order of `IncidentMeasure.allCases`), as database values (no
    /// existential boxing: the arguments of the insert statement were a fifth of a big ingest).
    static func values(of i: Incident) -> [DatabaseValue] {
        func value(_ x: (some DatabaseValueConvertible)?) -> DatabaseValue { x?.databaseValue ?? .null }
        let source = i.positionSource
        let values: [DatabaseValue] = Field.allCases.map { field in
            switch field {
            case .title: value(i.title)
            case .summary: value(i.summary)
            case .weblink: value(i.weblink)
            case .iconURL: value(i.iconURL)
            case .updated: value(i.updated?.timeIntervalSince1970)
            case .expires: value(i.expires?.timeIntervalSince1970)
            case .road: value(i.road)
            case .category: value(i.category?.rawValue)
            case .latitude: value(i.position?.latitude)
            case .longitude: value(i.position?.longitude)
            case .segment: value(i.segment.map(ColumnJSON.coordinates))
            case .positionSource: value(source?.kind.storeCode)
            case .geocoder: value(source?.geocoder)
            case .geocodeQuery: value(source?.query)
            case .geocodePrecision: value(source?.precision?.rawValue)
            case .geocodeConfidence: value(source?.confidence)
            case .properties: value(i.properties.isEmpty ? nil : PropertiesJSON.text(i.properties))
            case .validFrom: value(IncidentFilter.startSeconds(i))
            case .otherRoads: value(i.otherRoads.isEmpty ? nil : "|" + i.otherRoads.joined(separator: "|") + "|")
            // The detail as it is when it reads as a schedule (reading checks the canonical
            // form exactly; writing it again cost a third of an ingest of scheduled rows).
            case .schedule: value(i.properties[RecurringSchedule.property].flatMap { RecurringSchedule(text: $0) == nil ? nil : $0 })
            }
        } + IncidentMeasure.allCases.map { value($0.value(of: i)) }
        return values
    }

    /// The position in a list of field values.
    static func position(_ values: [DatabaseValue]) -> Coordinate? {
        guard let lat = Double.fromDatabaseValue(values[Field.latitude.rawValue]),
              let lon = Double.fromDatabaseValue(values[Field.longitude.rawValue]) else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }

    // MARK: - New rows

    /// What a new row holds, in the order of the insert statement's parameters: the store id,
    /// the values `PendingInserts` packs, first seen (last_changed stays NULL until the incident
    /// changes: 4 bytes a row).
    enum NewRow {
        static let packedColumns = ["source_id", "external_id"] + fieldColumns + ["content_hash"]
        static let columns = ["id"] + packedColumns + ["first_seen"]
        /// Where the fields start among the packed values.
        static let firstPackedField = packedColumns.firstIndex(of: fieldColumns[0])!
        static let parameterCount = Int32(columns.count)
    }
}

extension PositionSource.Kind {
    /// SQL for the name of the stored kind in `column`.
    static func nameSQL(_ column: String) -> String {
        let cases: [Self] = [.feed, .weblink, .geocoder]
        return "CASE \(column) " + cases.map { "WHEN \($0.storeCode) THEN '\($0.rawValue)'" }.joined(separator: " ") + " END"
    }
}

/// Compact JSON text for the segment column (the properties: `PropertiesJSON`).
enum ColumnJSON {
    static func coordinates(_ points: [Coordinate]) -> String {
        "[" + points.map { "[\(format($0.longitude)),\(format($0.latitude))]" }.joined(separator: ",") + "]"
    }

    static func parseCoordinates(_ text: String) -> [Coordinate]? {
        // What `coordinates` writes, "[[lon,lat],…]", read by hand (JSONSerialization was a
        // tenth of merging reports into events); anything else through JSONSerialization.
        if let read = plainPairs(text) { return read }
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[Double]] else { return nil }
        return array.compactMap { $0.count >= 2 ? Coordinate(latitude: $0[1], longitude: $0[0]) : nil }
    }

    /// "[[x,y],[x,y]]" with plain numbers, else nil.
    private static func plainPairs(_ text: String) -> [Coordinate]? {
        var numbers: [Double] = []
        var token: [UInt8] = []
        var depth = 0, pairStart = 0
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "["):
                depth += 1
                guard depth <= 2 else { return nil }
                pairStart = numbers.count
            case UInt8(ascii: "]"), UInt8(ascii: ","):
                if !token.isEmpty {
                    guard depth == 2, let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else { return nil }
                    numbers.append(value)
                    token.removeAll(keepingCapacity: true)
                }
                if b == UInt8(ascii: "]") {
                    // Each inner array a pair.
                    if depth == 2, numbers.count - pairStart != 2 { return nil }
                    depth -= 1
                }
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                token.append(b)
            case UInt8(ascii: " "):
                continue
            default:
                return nil
            }
        }
        guard depth == 0, numbers.count.isMultiple(of: 2) else { return nil }
        return stride(from: 0, to: numbers.count, by: 2).map { Coordinate(latitude: numbers[$0 + 1], longitude: numbers[$0]) }
    }

    /// Shortest round-tripping decimal text of a coordinate value.
    static func format(_ value: Double) -> String { "\(value)" }
}

/// The `selection` columns of one row, by position from its first, typed as GRDB converts them
/// (text: TEXT, or a BLOB in UTF-8; real: REAL or INTEGER; integer: INTEGER, or a REAL in range).
private protocol SelectedColumns {
    func text(_ k: Int) -> String?
    func real(_ k: Int) -> Double?
    func integer(_ k: Int) -> Int64?
}

/// A row GRDB fetched.
private struct RowColumns: SelectedColumns {
    let row: Row
    let first: Int
    func text(_ k: Int) -> String? { String.fromDatabaseValue(row[first + k] as DatabaseValue) }
    func real(_ k: Int) -> Double? { Double.fromDatabaseValue(row[first + k] as DatabaseValue) }
    func integer(_ k: Int) -> Int64? { Int64.fromDatabaseValue(row[first + k] as DatabaseValue) }
}

/// The current row of a statement stepped through SQLite's C API, read by the typed column
/// calls: a GRDB `DatabaseValue` per column first (and a String in it) was 2 % of a 10-nearest
/// request in `serve`.
private struct StatementColumns: SelectedColumns {
    let statement: SQLiteStatement
    let first: Int32

    func text(_ k: Int) -> String? {
        let i = first + Int32(k)
        switch sqlite3_column_type(statement, i) {
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(statement, i) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, i))), as: UTF8.self)
        case SQLITE_BLOB:
            // As GRDB: UTF-8 or nothing.
            let count = Int(sqlite3_column_bytes(statement, i))
            guard count > 0, let bytes = sqlite3_column_blob(statement, i) else { return count == 0 ? "" : nil }
            return String(bytes: UnsafeRawBufferPointer(start: bytes, count: count), encoding: .utf8)
        default:
            return nil
        }
    }

    func real(_ k: Int) -> Double? {
        let i = first + Int32(k)
        switch sqlite3_column_type(statement, i) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_column_double(statement, i)
        default: return nil
        }
    }

    func integer(_ k: Int) -> Int64? {
        let i = first + Int32(k)
        switch sqlite3_column_type(statement, i) {
        case SQLITE_INTEGER: return sqlite3_column_int64(statement, i)
        case SQLITE_FLOAT: return Int64(exactly: sqlite3_column_double(statement, i).rounded(.towardZero))
        default: return nil
        }
    }
}
