import Foundation
import GRDB
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoStore

/// Handing over everything the file holds, and filling an empty file (`trafficgeo copy`).
extension SQLiteIncidentStore: TransferableStore {
    public func exportRecords(_ handle: (StoreRecord) throws -> Void) throws {
        try read { db in
            for row in try Row.fetchAll(db, sql: """
                SELECT name, renamed_from, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries, last_snapshot
                FROM sources ORDER BY id
                """) {
                func date(_ k: Int) -> Date? { (row[k] as Double?).map(Date.init(timeIntervalSince1970:)) }
                let name: String = row[0]
                try handle(.source(SourceRecord(name: name, renamedFrom: row[1], health: FeedHealth(
                    source: name, lastAttempt: date(2), lastSuccess: date(3), lastError: row[4], lastErrorAt: date(5),
                    emptyStreak: row[6], failureStreak: row[7], lastEntries: row[8], lastSnapshot: date(9)))))
            }
            let n = IncidentRowLayout.selectionCount
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT \(IncidentRowLayout.selection), i.geocode_status, i.geocode_error, i.geocode_attempts FROM incidents i ORDER BY i.id
                """)
            while let row = try cursor.next() {
                try handle(.incident(IncidentRecord(stored: IncidentRowLayout.decode(row), geocodeStatus: row[n], geocodeError: row[n + 1],
                                                    geocodeAttempts: row[n + 2])))
            }
            for row in try Row.fetchAll(db, sql: "SELECT seq, count, at, kind, first_id FROM changes ORDER BY seq") {
                guard let kind = ChangeKind(storeCode: row[3]) else { continue }
                try handle(.changes(ChangeRun(sequence: row[0], count: row[1], at: row[2], kind: kind, firstID: row[4])))
            }
            try handle(.changeSequence(try ChangeLog.latest(db)))
            for row in try Row.fetchAll(db, sql: "SELECT request, status, response, fetched FROM geocode_cache ORDER BY request") {
                try handle(.geocodeAnswer(CachedGeocodeAnswer(request: row[0], status: row[1], response: row[2], fetched: row[3])))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT road, name_key, observer, name, kind, latitude, longitude, origin FROM junction_observations ORDER BY road, name_key, observer
                """) {
                try handle(.junctionObservation(JunctionObservationRecord(nameKey: row[1], observer: row[2], observation: JunctionObservation(
                    road: row[0], name: row[3], kind: JunctionMention.Kind(rawValue: row[4]) ?? .unspecified,
                    coordinate: Coordinate(latitude: row[5], longitude: row[6]), origin: row[7]))))
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions ORDER BY road, name_key
                """) {
                try handle(.junction(JunctionRecord(nameKey: row[1], junction: KnownJunction(
                    road: row[0], name: row[2], kind: JunctionMention.Kind(rawValue: row[3]) ?? .unspecified,
                    coordinate: Coordinate(latitude: row[4], longitude: row[5]), support: row[6], spreadMeters: row[7], learnedFrom: row[8]))))
            }
        }
    }

    public func importRecords(_ read: ((StoreRecord) throws -> Void) throws -> Void) throws -> TransferSummary {
        var summary = TransferSummary()
        try write { db in
            guard try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents) OR EXISTS (SELECT 1 FROM sources)")! else {
                throw StoreError.writeFailed(path, reason: "it already holds incidents or sources: copy into a new, empty store")
            }
            var sourceIDs: [String: Int64] = [:]
            let columns = IncidentRowLayout.NewRow.columns + ["last_changed", "ended", "geocode_status", "geocode_error", "geocode_attempts",
                                                              "role", "event_id", "reports"]
            let insert = try db.makeStatement(sql: "INSERT INTO incidents (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
            let index = try BlockIndexWriter(db: db)
            // Consecutive ids with positions are indexed as blocks, as an ingest stores them.
            var run: (first: Int64, points: [GeocentricPoint])?
            func flushRun() throws {
                if let r = run, !r.points.isEmpty { try index.addBlocks(firstID: r.first, points: r.points) }
                run = nil
            }
            try read { record in
                summary.count(record)
                switch record {
                case let .source(s):
                    func t(_ d: Date?) -> Double? { d?.timeIntervalSince1970 }
                    try db.execute(sql: """
                        INSERT INTO sources (name, renamed_from, last_attempt, last_success, last_error, last_error_at, empty_streak, failure_streak, last_entries, last_snapshot)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [s.name, s.renamedFrom, t(s.health.lastAttempt), t(s.health.lastSuccess), s.health.lastError,
                                         t(s.health.lastErrorAt), s.health.emptyStreak, s.health.failureStreak, s.health.lastEntries,
                                         t(s.health.lastSnapshot)])
                    sourceIDs[s.name] = db.lastInsertedRowID
                case let .incident(r):
                    let i = r.stored.incident
                    // An event's row is filed under the events' source by its own id (`SQLiteEventRows`).
                    let isEvent = r.stored.role == .event
                    let sourceName = isEvent ? EventRole.eventSourceName : i.source
                    guard let source = sourceIDs[sourceName] else {
                        throw StoreError.writeFailed(path, reason: "incident \(r.stored.storeID) names the source \(sourceName), which the copy did not list")
                    }
                    let values = IncidentRowLayout.values(of: i)
                    let reports = isEvent ? ReportReference.text(r.stored.memberReports) : nil
                    let first = r.stored.firstSeen.timeIntervalSince1970, last = r.stored.lastChanged.timeIntervalSince1970
                    var arguments: [DatabaseValue] = [r.stored.storeID.databaseValue, source.databaseValue,
                                                      (isEvent ? String(r.stored.storeID) : i.id).databaseValue] + values
                    arguments += [IncidentWriter.hash(values + (reports.map { [$0.databaseValue] } ?? [])).databaseValue, first.databaseValue,
                                  (last == first ? nil : last).databaseValue,
                                  r.stored.ended?.timeIntervalSince1970.databaseValue ?? .null, r.geocodeStatus.databaseValue,
                                  r.geocodeError.databaseValue, r.geocodeAttempts.databaseValue,
                                  r.stored.role.rawValue.databaseValue, r.stored.memberOf.databaseValue, reports.databaseValue]
                    try insert.execute(arguments: StatementArguments(arguments))
                    let id = r.stored.storeID
                    if let p = i.position {
                        if let current = run, current.first + Int64(current.points.count) == id {
                            run?.points.append(GeocentricPoint(p))
                        } else {
                            try flushRun()
                            run = (id, [GeocentricPoint(p)])
                        }
                    } else {
                        try flushRun()
                    }
                case let .changes(c):
                    try db.execute(sql: "INSERT INTO changes (seq, count, at, kind, first_id) VALUES (?, ?, ?, ?, ?)",
                                   arguments: [c.sequence, c.count, c.at, c.kind.storeCode, c.firstID])
                case let .changeSequence(latest):
                    try db.execute(sql: "UPDATE store_info SET value = ? WHERE key = ?", arguments: [String(latest), ChangeLog.sequenceKey])
                case let .geocodeAnswer(a):
                    try db.execute(sql: "INSERT OR REPLACE INTO geocode_cache (request, status, response, fetched) VALUES (?, ?, ?, ?)",
                                   arguments: [a.request, a.status, a.response, a.fetched])
                case let .junctionObservation(o):
                    let x = o.observation
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO junction_observations (road, name_key, observer, name, kind, latitude, longitude, origin)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [x.road, o.nameKey, o.observer, x.name, x.kind.rawValue, x.coordinate.latitude, x.coordinate.longitude, x.origin])
                case let .junction(j):
                    let x = j.junction
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO junctions (road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [x.road, j.nameKey, x.name, x.kind.rawValue, x.coordinate.latitude, x.coordinate.longitude,
                                         x.support, x.spreadMeters, x.learnedFrom])
                }
            }
            try flushRun()
        }
        return summary
    }
}
