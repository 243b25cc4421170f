import Foundation
import Logging
import PostgresNIO
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoStore

/// The store's junction knowledge, kept as in the SQLite store: one observation per (road,
/// junction, observer) and their robust aggregate (`JunctionLearner.aggregate`) per junction.
extension PostGISIncidentStore {
    public func relearnJunctions() throws -> JunctionLearning {
        try write { connection in
            let learner = JunctionLearningRun(known: try knownJunctions(connection, roads: nil))
            var after = Int64.min
            // A page at a time: a national store holds millions of incidents.
            while true {
                let rows = try connection.rows("""
                    SELECT i.id, (SELECT name FROM sources WHERE id = i.source_id), i.external_id, i.title, i.summary, i.road,
                           i.latitude, i.longitude, ST_AsBinary(i.segment)
                    FROM incidents i WHERE i.road IS NOT NULL AND i.latitude IS NOT NULL AND i.position_source IN (0, 1) AND i.role <> 2 AND i.id > \(after)
                    ORDER BY i.id LIMIT 5000
                    """, logger: logger)
                for row in rows {
                    let (id, source, externalID, title, summary, road, lat, lon, segment) =
                        try row.decode((Int64, String, String, String, String?, String, Double, Double, ByteBuffer?).self)
                    after = id
                    learner.add(JunctionLearningRun.Input(source: source, externalID: externalID, title: title, summary: summary, road: road,
                                                          position: Coordinate(latitude: lat, longitude: lon), segment: segment.flatMap(SegmentWKB.decode)))
                }
                if rows.count < 5000 { break }
            }
            return try finishLearning(learner, connection, now: Date())
        }
    }

    /// Writes what a learning run found, swaps back positions given the wrong way round, and
    /// refreshes the junctions touched (inside the caller's transaction).
    func finishLearning(_ learner: JunctionLearningRun, _ connection: PostgresConnection, now: Date) throws -> JunctionLearning {
        var learning = JunctionLearning()
        var touched = Set<[String]>()
        var observations: [(observer: String, observation: JunctionObservation)] = []
        for item in learner.results() {
            let observer = JunctionLearningRun.observer(source: item.input.source, externalID: item.input.externalID)
            for o in item.observations where !o.key.isEmpty {
                observations.append((observer, o))
                touched.insert([o.road, o.key])
                learning.observations += 1
            }
            guard let conflict = item.conflict else { continue }
            learning.conflicts.append(conflict)
            guard conflict.swapped, let row = try connection.rows("""
                SELECT \(unescaped: PostGISRows.selection) FROM incidents i JOIN sources s ON s.id = i.source_id
                WHERE s.name = \(PostgresText.storable(item.input.source)) AND i.external_id = \(PostgresText.storable(item.input.externalID))
                """, logger: logger).first else { continue }
            let stored = try PostGISRows.decode(row)
            guard let incident = JunctionLearningRun.swapped(stored.incident, conflict: conflict) else { continue }
            try PostGISIncidentWriter.replace(connection, logger: logger, storeID: stored.storeID, with: incident, now: now)
        }
        try insertObservations(connection, observations)
        try refreshJunctions(connection, touched)
        learning.conflicts.sort { $0.id < $1.id }
        return learning
    }

    /// Inserts (or replaces) observations, a batch per statement.
    private func insertObservations(_ connection: PostgresConnection, _ list: [(observer: String, observation: JunctionObservation)]) throws {
        var start = 0
        while start < list.count {
            // One row per key in a statement: ON CONFLICT cannot change a row twice.
            var seen = Set<[String]>()
            var chunk: [(observer: String, observation: JunctionObservation)] = []
            var end = start
            while end < list.count, chunk.count < 5000 {
                let item = list[end]
                if !seen.insert([item.observation.road, item.observation.key, item.observer]).inserted {
                    break
                }
                chunk.append(item)
                end += 1
            }
            let o = chunk.map(\.observation)
            try connection.run("""
                INSERT INTO junction_observations (road, name_key, observer, name, kind, latitude, longitude, origin)
                SELECT * FROM unnest(\(o.map { PostgresText.storable($0.road) })::text[], \(o.map { PostgresText.storable($0.key) })::text[],
                                     \(chunk.map { PostgresText.storable($0.observer) })::text[], \(o.map { PostgresText.storable($0.name) })::text[],
                                     \(o.map(\.kind.rawValue))::text[], \(o.map(\.coordinate.latitude))::float8[], \(o.map(\.coordinate.longitude))::float8[],
                                     \(o.map { PostgresText.storable($0.origin) })::text[])
                ON CONFLICT (road, name_key, observer) DO UPDATE SET name = excluded.name, kind = excluded.kind,
                    latitude = excluded.latitude, longitude = excluded.longitude, origin = excluded.origin
                """, logger: logger)
            start = end
        }
    }

    public func recordJunctionObservations(_ observations: [JunctionObservation], observer: String, replacing: Bool) throws {
        guard !observations.isEmpty || replacing else { return }
        try write { connection in
            var touched = Set<[String]>()
            let observer = PostgresText.storable(observer)
            if replacing {
                let pattern = LikePattern.escape(observer) + "#%"
                let old = try connection.rows("""
                    DELETE FROM junction_observations WHERE observer = \(observer) OR observer LIKE \(pattern) ESCAPE '\\' RETURNING road, name_key
                    """, logger: logger)
                for row in old {
                    let (road, key) = try row.decode((String, String).self)
                    touched.insert([road, key])
                }
                try connection.run("""
                    DELETE FROM junctions j WHERE NOT EXISTS (SELECT 1 FROM junction_observations o WHERE o.road = j.road AND o.name_key = j.name_key)
                    """, logger: logger)
            }
            var list: [(observer: String, observation: JunctionObservation)] = []
            for (n, o) in observations.enumerated() where !o.key.isEmpty {
                list.append((replacing ? "\(observer)#\(n + 1)" : observer, o))
                touched.insert([o.road, o.key])
            }
            try insertObservations(connection, list)
            try refreshJunctions(connection, touched)
        }
    }

    /// A source merge's junction observations (`SourceMergePlan`): the losers' go, the rest are
    /// filed under the new name; the junctions whose support changed are re-aggregated.
    func applyObservers(_ connection: PostgresConnection, _ plan: SourceMergePlan) throws {
        var touched = Set<[String]>()
        if !plan.droppedObservers.isEmpty {
            for row in try connection.rows("""
                DELETE FROM junction_observations WHERE observer = ANY(\(plan.droppedObservers)) RETURNING road, name_key
                """, logger: logger) {
                let (road, key) = try row.decode((String, String).self)
                touched.insert([road, key])
            }
        }
        if !plan.renamedObservers.isEmpty {
            try connection.run("""
                UPDATE junction_observations o SET observer = t.new FROM unnest(\(plan.renamedObservers.map(\.from))::text[], \(plan.renamedObservers.map(\.to))::text[]) AS t(old, new)
                WHERE o.observer = t.old
                """, logger: logger)
        }
        guard !touched.isEmpty else { return }
        try connection.run("""
            DELETE FROM junctions j WHERE NOT EXISTS (SELECT 1 FROM junction_observations o WHERE o.road = j.road AND o.name_key = j.name_key)
            """, logger: logger)
        try refreshJunctions(connection, touched)
    }

    /// Re-aggregates the junctions with these (road, key) pairs from their observations.
    private func refreshJunctions(_ connection: PostgresConnection, _ touched: Set<[String]>) throws {
        guard !touched.isEmpty else { return }
        let pairs = touched.sorted { $0.lexicographicallyPrecedes($1) }
        var byPair: [[String]: [JunctionObservation]] = [:]
        let rows = try connection.rows("""
            SELECT o.road, o.name_key, o.name, o.kind, o.latitude, o.longitude, o.origin FROM junction_observations o
            JOIN unnest(\(pairs.map { PostgresText.storable($0[0]) })::text[], \(pairs.map { PostgresText.storable($0[1]) })::text[]) AS t(road, name_key)
              ON o.road = t.road AND o.name_key = t.name_key
            ORDER BY o.road, o.name_key, o.observer COLLATE "C"
            """, logger: logger)
        for row in rows {
            let (road, key, name, kind, lat, lon, origin) = try row.decode((String, String, String, String, Double, Double, String).self)
            byPair[[road, key], default: []].append(JunctionObservation(road: road, name: name, kind: JunctionMention.Kind(rawValue: kind) ?? .unspecified,
                                                                        coordinate: Coordinate(latitude: lat, longitude: lon), origin: origin))
        }
        var aggregated: [(road: String, key: String, junction: KnownJunction)] = []
        for pair in pairs {
            guard let observations = byPair[pair], let j = JunctionLearner.aggregate(observations) else { continue }
            aggregated.append((pair[0], pair[1], j))
        }
        guard !aggregated.isEmpty else { return }
        let j = aggregated.map(\.junction)
        try connection.run("""
            INSERT INTO junctions (road, name_key, name, kind, latitude, longitude, support, spread_m, learned_from)
            SELECT * FROM unnest(\(aggregated.map(\.road))::text[], \(aggregated.map(\.key))::text[], \(j.map { PostgresText.storable($0.name) })::text[],
                                 \(j.map(\.kind.rawValue))::text[], \(j.map(\.coordinate.latitude))::float8[], \(j.map(\.coordinate.longitude))::float8[],
                                 \(j.map { Int32($0.support) })::integer[], \(j.map(\.spreadMeters))::float8[], \(j.map { PostgresText.storable($0.learnedFrom) })::text[])
            ON CONFLICT (road, name_key) DO UPDATE SET name = excluded.name, kind = excluded.kind, latitude = excluded.latitude,
                longitude = excluded.longitude, support = excluded.support, spread_m = excluded.spread_m, learned_from = excluded.learned_from
            """, logger: logger)
    }

    public func knownJunctions(roads: Set<String>?) throws -> [KnownJunction] {
        try readOne { try knownJunctions($0, roads: roads) }
    }

    /// The known junctions of these roads (and those whose road is unknown, `""`); all when nil.
    func knownJunctions(_ connection: PostgresConnection, roads: Set<String>?) throws -> [KnownJunction] {
        var query = BoundSQL("SELECT road, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions")
        if let roads {
            let list = roads.union([""]).sorted().map(PostgresText.storable)
            query.sql += " WHERE road = ANY(\(query.bind(list))::text[])"
        }
        // Byte order, as SQLite sorts.
        query.sql += " ORDER BY road COLLATE \"C\", name_key COLLATE \"C\""
        return try connection.rows(query.query, logger: logger).map { row in
            let (road, name, kind, lat, lon, support, spread, learnedFrom) = try row.decode((String, String, String, Double, Double, Int32, Double, String).self)
            return KnownJunction(road: road, name: name, kind: JunctionMention.Kind(rawValue: kind) ?? .unspecified,
                                 coordinate: Coordinate(latitude: lat, longitude: lon), support: Int(support), spreadMeters: spread, learnedFrom: learnedFrom)
        }
    }

    /// Positions the feeds gave for incidents of `road` (not geocoded ones), a sample of at most
    /// `limit` spread over the table.
    public func roadPositions(road: String, limit: Int) throws -> [Coordinate] {
        try readOne { connection in
            let road = PostgresText.storable(road)
            let count = try connection.rows("""
                SELECT count(*) FROM incidents WHERE road = \(road) AND latitude IS NOT NULL AND position_source IN (0, 1) AND role <> 2
                """, logger: logger).first?.decode(Int.self) ?? 0
            let step = Int64(max(1, count / max(1, limit)))
            return try connection.rows("""
                SELECT latitude, longitude FROM incidents
                WHERE road = \(road) AND latitude IS NOT NULL AND position_source IN (0, 1) AND role <> 2 AND id % \(step) = 0
                """, logger: logger).map { row in
                let (lat, lon) = try row.decode((Double, Double).self)
                return Coordinate(latitude: lat, longitude: lon)
            }
        }
    }
}
