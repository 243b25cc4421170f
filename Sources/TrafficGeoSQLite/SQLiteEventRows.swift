import Foundation
import GRDB
import TrafficGeoConflation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// The SQLite store's rows of reports and events (`EventRows`, for `EventMerger`), inside an
/// open write transaction: `role` 0 a report of its own, 1 a report merged into the event
/// `event_id`, 2 an event's row, filed under `EventRole.eventSourceName` by its own id, its reports
/// listed in `reports` (schema v8).
final class SQLiteEventRows: EventRows {
    private let db: Database
    private let now: Double
    let index: BlockIndexWriter
    private var sourceNames: [Int64: String] = [:]

    init(db: Database, now: Date) throws {
        self.db = db
        self.now = now.timeIntervalSince1970.rounded(.down)
        index = try BlockIndexWriter(db: db)
    }

    /// The settings the store keeps (`store_info`), or the defaults.
    static func settings(_ db: Database) throws -> ConflationSettings {
        ConflationSettings(storedText: try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key = 'conflation'"))
    }

    static func setSettings(_ settings: ConflationSettings, _ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO store_info (key, value) VALUES ('conflation', ?)", arguments: [settings.storedText])
    }

    /// Merges the reports an ingest (or a geocode) wrote, by the store's settings.
    static func merge(_ db: Database, now: Date, inserted: [Int64], updated: [Int64], ended: [Int64], source: String?,
                      released: ReleasedReports = ReleasedReports()) throws -> EventChanges {
        let merger = EventMerger(rows: try SQLiteEventRows(db: db, now: now), settings: try settings(db))
        return try merger.merge(inserted: inserted, updated: updated, ended: ended, source: source, released: released)
    }

    /// Takes the reports of these sources out of their events (before the sources merge: an
    /// event holds one report of a source).
    static func release(_ db: Database, sources: [Int64]) throws -> ReleasedReports {
        let marks = sources.map { _ in "?" }.joined(separator: ",")
        let rows = try Row.fetchAll(db, sql: "SELECT id, event_id FROM incidents WHERE source_id IN (\(marks)) AND role = 1",
                                    arguments: StatementArguments(sources))
        guard !rows.isEmpty else { return ReleasedReports() }
        try db.execute(sql: "UPDATE incidents SET role = 0, event_id = NULL WHERE source_id IN (\(marks)) AND role = 1",
                       arguments: StatementArguments(sources))
        return ReleasedReports(reports: rows.map { $0[0] }, events: Set(rows.map { $0[1] }))
    }

    /// Merges every report anew (`IncidentStore.rebuildEvents`, `EventMerger.rebuild`): the
    /// events' rows go, every report is one of its own, then each source's reports, in the order
    /// the sources were first read, look for their events; those made again take their ids back.
    static func rebuild(_ db: Database, now: Date) throws -> EventChanges {
        let former = try Row.fetchAll(db, sql: "SELECT id, event_id FROM incidents WHERE role = 1")
        let removed = try Int64.fetchAll(db, sql: "SELECT id FROM incidents WHERE role = 2 ORDER BY id")
        // New rows take ids above every id of before: the former events' ids stay theirs to take back.
        let floor = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM incidents") ?? 0) + 1
        try db.execute(sql: "DELETE FROM incidents WHERE role = 2")
        try db.execute(sql: "UPDATE incidents SET role = 0, event_id = NULL WHERE role = 1")
        var sources: [(name: String, reports: [Int64])] = []
        for source in try Row.fetchAll(db, sql: """
            SELECT s.id, s.name FROM sources s JOIN incidents i ON i.source_id = s.id GROUP BY s.id ORDER BY min(i.first_seen), s.id
            """) {
            sources.append((source[1], try Int64.fetchAll(db, sql: "SELECT id FROM incidents WHERE source_id = ? AND role = 0 ORDER BY id",
                                                          arguments: [source[0] as Int64])))
        }
        let rows = try SQLiteEventRows(db: db, now: now)
        rows.next = max(try rows.index.nextFreeID(), floor)
        let merger = EventMerger(rows: rows, settings: try settings(db))
        return try merger.rebuild(sources: sources, removed: removed,
                                  formerEvents: Dictionary(former.map { ($0[0] as Int64, $0[1] as Int64) }, uniquingKeysWith: { a, _ in a }))
    }

    func rows(ids: [Int64]) throws -> [StoredIncident] {
        Array(try IncidentRowLayout.fetch(db, ids: ids).values)
    }

    func places(ids: [Int64]) throws -> [ReportPlace] {
        var found: [ReportPlace] = []
        var start = 0
        while start < ids.count {
            let chunk = ids[start ..< min(ids.count, start + 500)]
            found += try places(where: "i.id IN (\(String(repeating: "?,", count: chunk.count - 1))?)", arguments: StatementArguments(Array(chunk)))
            start += chunk.count
        }
        return found
    }

    func eventPlaces(road: String, latitudes: ClosedRange<Double>, excluding excluded: String?) throws -> [ReportPlace] {
        let excludedID = try excluded.flatMap { try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [$0]) } ?? 0
        // Through the index of (road, latitude).
        return try places(where: "i.road = ? AND i.latitude BETWEEN ? AND ? AND i.role <> 1 AND NOT (i.role = 0 AND i.source_id = ?)",
                          arguments: [road, latitudes.lowerBound, latitudes.upperBound, excludedID])
    }

    func hasEvents(besides source: String?) throws -> Bool {
        // Source by source (few), each through the identity index: no scan of the source's own rows.
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM sources s WHERE s.name IS NOT ? AND EXISTS (
                SELECT 1 FROM incidents i WHERE i.source_id = s.id AND i.latitude IS NOT NULL AND i.role <> 1))
            """, arguments: [source]) ?? false
    }

    private func places(where condition: String, arguments: StatementArguments) throws -> [ReportPlace] {
        let rows = try Row.fetchCursor(db, sql: """
            SELECT i.id, i.source_id, i.role, i.event_id, i.road, i.latitude, i.longitude, i.segment,
                   json_extract(i.properties, '$.valid_from'), i.updated, i.expires, i.ended, i.first_seen, i.category
            FROM incidents i WHERE \(condition)
            """, arguments: arguments)
        var found: [ReportPlace] = []
        while let row = try rows.next() {
            var shape: [Coordinate] = []
            if let segment = (row[7] as String?).flatMap(ColumnJSON.parseCoordinates), segment.count >= 2 {
                shape = segment
            } else if let lat = row[5] as Double?, let lon = row[6] as Double? {
                shape = [Coordinate(latitude: lat, longitude: lon)]
            }
            let times = ReportPlace.Times(validFrom: (row[8] as String?).flatMap(TimestampParser.parse)?.timeIntervalSince1970,
                                          updated: row[9], expires: row[10], ended: row[11], firstSeen: row[12],
                                          category: (row[13] as String?).flatMap(IncidentCategory.init(rawValue:)))
            found.append(ReportPlace(storeID: row[0], source: try sourceName(row[1]), role: EventRole(rawValue: row[2]) ?? .report,
                                     memberOf: row[3], road: row[4], shape: shape, times: times))
        }
        return found
    }

    private func sourceName(_ id: Int64) throws -> String {
        if let name = sourceNames[id] { return name }
        let name = try String.fetchOne(db, sql: "SELECT name FROM sources WHERE id = ?", arguments: [id]) ?? ""
        sourceNames[id] = name
        return name
    }

    func members(ofEvents ids: [Int64]) throws -> [Int64: EventMembers] {
        var members: [Int64: EventMembers] = [:]
        let statement = try db.cachedStatement(sql: "SELECT id FROM incidents WHERE event_id = ?")
        let listed = try db.cachedStatement(sql: "SELECT reports FROM incidents WHERE id = ? AND role = 2")
        for id in ids {
            let reports = try Int64.fetchAll(statement, arguments: [id])
            guard !reports.isEmpty else { continue }
            members[id] = EventMembers(ids: reports, listed: (try String.fetchOne(listed, arguments: [id])).map(ReportReference.parse) ?? [])
        }
        return members
    }

    func promote(_ id: Int64, as eventID: Int64?) throws -> Promotion {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT source_id, external_id, latitude, longitude FROM incidents WHERE id = ?"),
                                         arguments: [id]) else {
            throw StoreError.writeFailed("", reason: "report \(id) to merge is missing")
        }
        let events = try eventSourceID()
        let copied = try copiedColumns().joined(separator: ", ")
        let position = (row[2] as Double?).flatMap { lat in (row[3] as Double?).map { Coordinate(latitude: lat, longitude: $0) } }
        if let eventID {
            // The event's row, a copy of the report's under the events' source, at the id given.
            try db.cachedStatement(sql: """
                INSERT INTO incidents (id, source_id, external_id, role, event_id, reports, \(copied))
                SELECT ?, ?, CAST(? AS TEXT), \(EventRole.event.rawValue), NULL, NULL, \(copied) FROM incidents WHERE id = ?
                """).execute(arguments: [eventID, events, eventID, id])
            try setEvent(ofReport: id, to: eventID)
            if let position { try index.positionChanged(id: eventID, to: position) }
            return Promotion(event: eventID, report: id)
        }
        let newID = try nextID()
        // The row becomes the event's (under the events' source, by its id), then the report
        // moves, as it was, to a row of its own: the identity (source, feed id) is unique.
        try db.cachedStatement(sql: "UPDATE incidents SET source_id = ?, external_id = CAST(id AS TEXT), role = 2, event_id = NULL WHERE id = ?")
            .execute(arguments: [events, id])
        try db.cachedStatement(sql: """
            INSERT INTO incidents (id, source_id, external_id, role, event_id, reports, \(copied))
            SELECT ?, ?, ?, \(EventRole.member.rawValue), ?, NULL, \(copied) FROM incidents WHERE id = ?
            """).execute(arguments: [newID, row[0], row[1], id, id])
        if let position { try index.positionChanged(id: newID, to: position) }
        return Promotion(event: id, report: newID)
    }

    /// The columns a promoted report takes over as they are (all but its id, identity and role).
    private var copied: [String]?
    private func copiedColumns() throws -> [String] {
        if let copied { return copied }
        let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('incidents') ORDER BY cid")
            .filter { !["id", "source_id", "external_id", "role", "event_id", "reports"].contains($0) }
        copied = columns
        return columns
    }

    /// The next free store id: counted on from the first asked (this run holds the write lock).
    var next: Int64?
    private func nextID() throws -> Int64 {
        let id = try next ?? index.nextFreeID()
        next = id + 1
        return id
    }

    private var events: Int64?
    private func eventSourceID() throws -> Int64 {
        if let events { return events }
        try db.execute(sql: "INSERT OR IGNORE INTO sources (name) VALUES (?)", arguments: [EventRole.eventSourceName])
        let id = try Int64.fetchOne(db, sql: "SELECT id FROM sources WHERE name = ?", arguments: [EventRole.eventSourceName])!
        events = id
        return id
    }

    func setEvent(ofReport id: Int64, to event: Int64?) throws {
        try db.cachedStatement(sql: "UPDATE incidents SET role = ?, event_id = ? WHERE id = ?")
            .execute(arguments: [(event == nil ? EventRole.report : .member).rawValue, event, id])
    }

    func writeEvent(_ id: Int64, _ composed: EventComposition.Composed) throws -> Bool {
        let list = IncidentRowLayout.values(of: composed.incident)
        let assignments = IncidentRowLayout.fieldColumns.map { "\($0) = ?" }.joined(separator: ", ")
        let hash = IncidentWriter.hash(list + [ReportReference.text(composed.reports).databaseValue])
        let changed = try Bool.fetchOne(db.cachedStatement(sql: "SELECT content_hash IS NOT ? OR ended IS NOT ? FROM incidents WHERE id = ?"),
                                        arguments: [hash, composed.ended?.timeIntervalSince1970, id]) ?? true
        guard changed else { return false }
        try db.cachedStatement(sql: """
            UPDATE incidents SET \(assignments), content_hash = ?, last_changed = ?, ended = ?, reports = ?,
                geocode_status = NULL, geocode_error = NULL WHERE id = ?
            """).execute(arguments: StatementArguments(list + [hash.databaseValue, now.databaseValue,
                                                                composed.ended?.timeIntervalSince1970.databaseValue ?? .null,
                                                                ReportReference.text(composed.reports).databaseValue, id.databaseValue]))
        try index.positionChanged(id: id, to: composed.incident.position)
        return true
    }

    func deleteEvent(_ id: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM incidents WHERE id = ? AND role = 2").execute(arguments: [id])
    }
}
