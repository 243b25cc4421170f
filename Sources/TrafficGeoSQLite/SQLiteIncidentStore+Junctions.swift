import Foundation
import GRDB
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoStore

/// The store's junction knowledge: where each road's junctions are, learned from every message
/// that arrives with a position and names its junctions, from geocoders' junction answers and
/// from imports. Geocoding asks it first (`RoadResolver`).
///
/// Observations are kept one per (road, junction, observer) — a re-read message replaces its own
/// estimate instead of adding another — and `junctions` holds their robust aggregate
/// (`JunctionLearner.aggregate`), refreshed for the junctions an ingest touched.
extension SQLiteIncidentStore {
    // MARK: - Learning

    /// Learns from every positioned incident of the store (`trafficgeo junctions learn`).
    public func relearnJunctions() throws -> JunctionLearning {
        try write { db in
            let learner = try JunctionLearningRun(db)
            // A row at a time (a cursor), as PostGIS reads pages: a national store holds
            // millions of incidents, which fetched at once would all be in memory.
            let rows = try Row.fetchCursor(db, sql: """
                SELECT (SELECT name FROM sources WHERE id = i.source_id), i.external_id, i.title, i.summary, i.road, i.latitude, i.longitude, i.segment
                FROM incidents i WHERE i.road IS NOT NULL AND i.latitude IS NOT NULL AND i.position_source IN (0, 1) AND i.role <> 2
                """)
            while let row = try rows.next() {
                learner.add(JunctionLearningRun.Input(
                    source: row[0], externalID: row[1], title: row[2], summary: row[3], road: row[4],
                    position: Coordinate(latitude: row[5], longitude: row[6]),
                    segment: (row[7] as String?).flatMap(ColumnJSON.parseCoordinates)))
            }
            return try learner.finish(db, now: Date())
        }
    }

    /// Records observations that come from outside the incidents (a geocoder's junction answer,
    /// an import); `observer` names where they came from, so a re-import replaces its own rows.
    ///
    /// With `replacing`, the rows an earlier record under `observer` wrote are removed first (a
    /// file imported again), and each observation gets its own observer `observer#N`, so that
    /// several nodes of one junction (both carriageways in OSM) each count.
    public func recordJunctionObservations(_ observations: [JunctionObservation], observer: String, replacing: Bool) throws {
        guard !observations.isEmpty || replacing else { return }
        try write { db in
            var touched = Set<[String]>()
            if replacing {
                let old = try Row.fetchAll(db, sql: "SELECT DISTINCT road, name_key FROM junction_observations WHERE observer = ? OR observer LIKE ? ESCAPE '\\'",
                                           arguments: [observer, LikePattern.escape(observer) + "#%"])
                for row in old { touched.insert([row[0], row[1]]) }
                try db.execute(sql: "DELETE FROM junction_observations WHERE observer = ? OR observer LIKE ? ESCAPE '\\'",
                               arguments: [observer, LikePattern.escape(observer) + "#%"])
                try db.execute(sql: "DELETE FROM junctions WHERE NOT EXISTS (SELECT 1 FROM junction_observations o WHERE o.road = junctions.road AND o.name_key = junctions.name_key)")
            }
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO junction_observations(road, name_key, observer, name, kind, latitude, longitude, origin)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (n, o) in observations.enumerated() {
                let key = o.key
                guard !key.isEmpty else { continue }
                try insert.execute(arguments: [o.road, key, replacing ? "\(observer)#\(n + 1)" : observer, o.name, o.kind.rawValue,
                                               o.coordinate.latitude, o.coordinate.longitude, o.origin])
                touched.insert([o.road, key])
            }
            try Self.refreshJunctions(db, touched)
        }
    }

    /// Re-aggregates the junctions with these (road, key) pairs from their observations.
    static func refreshJunctions(_ db: Database, _ touched: Set<[String]>) throws {
        let select = try db.cachedStatement(sql: """
            SELECT name, kind, latitude, longitude, origin FROM junction_observations WHERE road = ? AND name_key = ? ORDER BY observer
            """)
        let upsert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO junctions(road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for pair in touched.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let road = pair[0], key = pair[1]
            let observations = try Row.fetchAll(select, arguments: [road, key]).map { row in
                JunctionObservation(road: road, name: row[0], kind: JunctionMention.Kind(rawValue: row[1]) ?? .unspecified,
                                    coordinate: Coordinate(latitude: row[2], longitude: row[3]), origin: row[4])
            }
            guard let j = JunctionLearner.aggregate(observations) else { continue }
            try upsert.execute(arguments: [road, key, j.name, j.kind.rawValue, j.coordinate.latitude, j.coordinate.longitude,
                                           j.support, j.spreadMeters, j.learnedFrom])
        }
    }

    // MARK: - Reading

    /// The known junctions of these roads (and those whose road is unknown, `""`); all when nil.
    public func knownJunctions(roads: Set<String>?) throws -> [KnownJunction] {
        try read { db in
            var sql = "SELECT road, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions"
            var arguments = StatementArguments()
            if let roads {
                let list = roads.union([""]).sorted()
                sql += " WHERE road IN (" + list.map { _ in "?" }.joined(separator: ",") + ")"
                for r in list { arguments += [r] }
            }
            sql += " ORDER BY road, name_key"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                KnownJunction(road: row[0], name: row[1], kind: JunctionMention.Kind(rawValue: row[2]) ?? .unspecified,
                              coordinate: Coordinate(latitude: row[3], longitude: row[4]), support: row[5],
                              spreadMeters: row[6], learnedFrom: row[7])
            }
        }
    }

    /// Positions the feeds gave for incidents of `road` (not geocoded ones): what the store knows
    /// of where the road runs. A sample of at most `limit`, spread over the table.
    public func roadPositions(road: String, limit: Int) throws -> [Coordinate] {
        try read { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents WHERE road = ? AND latitude IS NOT NULL AND position_source IN (0, 1) AND role <> 2",
                                         arguments: [road]) ?? 0
            let step = max(1, count / max(1, limit))
            return try Row.fetchAll(db, sql: """
                SELECT latitude, longitude FROM incidents WHERE road = ? AND latitude IS NOT NULL AND position_source IN (0, 1) AND role <> 2 AND id % ? = 0
                """, arguments: [road, step]).map { Coordinate(latitude: $0[0], longitude: $0[1]) }
        }
    }
}


/// The SQLite store's side of `JunctionLearningRun`: the junctions known before, and writing
/// what the run learned inside the ingest's transaction.
extension JunctionLearningRun {
    convenience init(_ db: Database) throws {
        let known = try Row.fetchAll(db, sql: "SELECT road, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions WHERE road <> ''").map { row in
            KnownJunction(road: row[0], name: row[1], kind: JunctionMention.Kind(rawValue: row[2]) ?? .unspecified,
                          coordinate: Coordinate(latitude: row[3], longitude: row[4]), support: row[5], spreadMeters: row[6], learnedFrom: row[7])
        }
        self.init(known: known)
    }

    /// Waits for the parsing, writes the estimates, swaps back positions that were given the
    /// wrong way round, and refreshes the junctions touched.
    func finish(_ db: Database, now: Date) throws -> JunctionLearning {
        var learning = JunctionLearning()
        var touched = Set<[String]>()
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO junction_observations(road, name_key, observer, name, kind, latitude, longitude, origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var swapper: IncidentWriter?
        for item in results() {
            let observer = Self.observer(source: item.input.source, externalID: item.input.externalID)
            for o in item.observations {
                let key = o.key
                try insert.execute(arguments: [o.road, key, observer, o.name, o.kind.rawValue, o.coordinate.latitude, o.coordinate.longitude, o.origin])
                touched.insert([o.road, key])
                learning.observations += 1
            }
            guard let conflict = item.conflict else { continue }
            learning.conflicts.append(conflict)
            guard conflict.swapped, let row = try Row.fetchOne(db, sql: """
                SELECT i.id FROM incidents i JOIN sources s ON s.id = i.source_id WHERE s.name = ? AND i.external_id = ?
                """, arguments: [item.input.source, item.input.externalID]), let id = row[0] as Int64?,
                let stored = try IncidentRowLayout.fetch(db, id: id), let incident = Self.swapped(stored.incident, conflict: conflict) else { continue }
            let writer = try swapper ?? IncidentWriter(db: db, now: now)
            swapper = writer
            try writer.replacePosition(storeID: id, with: incident)
        }
        try SQLiteIncidentStore.refreshJunctions(db, touched)
        learning.conflicts.sort { $0.id < $1.id }
        return learning
    }
}
