import Foundation
import GRDB

/// The store's junction knowledge: where each road's junctions are, learned from every message
/// that arrives with a position and names its junctions, from geocoders' junction answers and
/// from imports. Geocoding asks it first (`RoadResolver`).
///
/// Observations are kept one per (road, junction, observer) — a re-read message replaces its own
/// estimate instead of adding another — and `junctions` holds their robust aggregate
/// (`JunctionLearner.aggregate`), refreshed for the junctions an ingest touched.
extension IncidentStore {
    // MARK: - Learning

    /// Learns from the positioned incidents an ingest stored or changed at `now` (inside its
    /// transaction, so the knowledge and the incidents commit together). Returns the number of
    /// observations written.
    static func learnJunctions(_ db: Database, changedAt now: Date) throws -> JunctionLearning {
        let t = now.timeIntervalSince1970.rounded(.down)
        let rows = try Row.fetchAll(db, sql: """
            SELECT id, title, summary, road, latitude, longitude, segment, external_id FROM incidents
            WHERE road IS NOT NULL AND latitude IS NOT NULL AND position_source IN (0, 1) AND (first_seen = ? OR last_changed = ?)
            """, arguments: [t, t])
        return try learnJunctions(db, from: rows, now: now)
    }

    /// Learns from every positioned incident of the store (`trafficgeo junctions learn`).
    public func relearnJunctions() throws -> JunctionLearning {
        try write { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, title, summary, road, latitude, longitude, segment, external_id FROM incidents
                WHERE road IS NOT NULL AND latitude IS NOT NULL AND position_source IN (0, 1)
                """)
            return try Self.learnJunctions(db, from: rows, now: Date())
        }
    }

    /// A feed position that its own words contradict, found while learning.
    struct Check: Sendable {
        var observations: [JunctionObservation]
        var conflict: PositionConflict?
    }

    private static func learnJunctions(_ db: Database, from rows: [Row], now: Date) throws -> JunctionLearning {
        guard !rows.isEmpty else { return JunctionLearning() }
        struct Input: Sendable { var id: Int64; var externalID: String; var title: String; var summary: String?; var road: String?; var position: Coordinate; var segment: String? }
        let inputs = rows.map { row in
            Input(id: row[0], externalID: row[7], title: row[1], summary: row[2], road: row[3],
                  position: Coordinate(latitude: row[4], longitude: row[5]), segment: row[6])
        }
        // What the store knew before this ingest: a position far from its own well-attested
        // junction is checked, not learned.
        let roads = Set(inputs.compactMap(\.road))
        var known: [String: KnownJunction] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT road, name, kind, latitude, longitude, support, spread_m, learned_from FROM junctions WHERE road IN (SELECT value FROM json_each(?))",
                                    arguments: [String(decoding: try JSONEncoder().encode(roads.sorted()), as: UTF8.self)]) {
            let j = KnownJunction(road: row[0], name: row[1], kind: JunctionMention.Kind(rawValue: row[2]) ?? .unspecified,
                                  coordinate: Coordinate(latitude: row[3], longitude: row[4]), support: row[5], spreadMeters: row[6], learnedFrom: row[7])
            known[j.road + "\u{1F}" + j.key] = j
        }
        let knownNow = known
        // Parsing the texts is the cost (~20 µs a message): both cores take a share.
        let chunks = max(1, min(ProcessInfo.processInfo.activeProcessorCount, inputs.count / 500))
        let results = ConcurrentResults<[(Int64, Check)]>(count: chunks)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var out: [(Int64, Check)] = []
            for i in stride(from: chunk, to: inputs.count, by: chunks) {
                let input = inputs[i]
                let message = TrafficMessageParser.parse(title: input.title, text: input.summary)
                let segment = input.segment.flatMap(GeoJSONText.parseCoordinates)
                let observations = JunctionLearner.observations(message, road: input.road, position: input.position, segment: segment, origin: "feed")
                let check = PositionCheck.check(observations, message: message, road: input.road, position: input.position, segment: segment, known: knownNow)
                out.append((input.id, Check(observations: check == nil ? observations : [],
                                            conflict: check.map { var c = $0; c.id = input.externalID; return c })))
            }
            results.set(chunk, out)
        }
        var learning = JunctionLearning()
        var touched = Set<[String]>()
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO junction_observations(road, name_key, observer, name, kind, latitude, longitude, origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var swapper: IncidentWriter?
        for (id, check) in results.all.joined() {
            for o in check.observations {
                let key = JunctionName.key(o.name)
                try insert.execute(arguments: [o.road, key, "incident:\(id)", o.name, o.kind.rawValue,
                                               o.coordinate.latitude, o.coordinate.longitude, o.origin])
                touched.insert([o.road, key])
                learning.observations += 1
            }
            guard let conflict = check.conflict else { continue }
            learning.conflicts.append(conflict)
            if conflict.swapped, let stored = try StoredIncident.fetch(db, id: id), let p = stored.incident.position {
                var incident = stored.incident
                incident.position = Coordinate(latitude: p.longitude, longitude: p.latitude)
                incident.segment = incident.segment?.map { Coordinate(latitude: $0.longitude, longitude: $0.latitude) }
                incident.properties["position_note"] = "latitude and longitude swapped: the feed's reading lay \(Int(conflict.distanceKm)) km from \(conflict.junction)"
                let writer = try swapper ?? IncidentWriter(db: db, now: now)
                swapper = writer
                try writer.replacePosition(storeID: id, with: incident)
            }
        }
        try refreshJunctions(db, touched)
        return learning
    }

    /// Records observations that come from outside the incidents (a geocoder's junction answer,
    /// an import); `observer` names where they came from, so a re-import replaces its own rows.
    ///
    /// With `replacing`, the rows an earlier record under `observer` wrote are removed first (a
    /// file imported again), and each observation gets its own observer `observer#N`, so that
    /// several nodes of one junction (both carriageways in OSM) each count.
    public func recordJunctionObservations(_ observations: [JunctionObservation], observer: String, replacing: Bool = false) throws {
        guard !observations.isEmpty || replacing else { return }
        try write { db in
            var touched = Set<[String]>()
            if replacing {
                let old = try Row.fetchAll(db, sql: "SELECT DISTINCT road, name_key FROM junction_observations WHERE observer = ? OR observer LIKE ? ESCAPE '\\'",
                                           arguments: [observer, Self.likePattern(observer) + "#%"])
                for row in old { touched.insert([row[0], row[1]]) }
                try db.execute(sql: "DELETE FROM junction_observations WHERE observer = ? OR observer LIKE ? ESCAPE '\\'",
                               arguments: [observer, Self.likePattern(observer) + "#%"])
                try db.execute(sql: "DELETE FROM junctions WHERE NOT EXISTS (SELECT 1 FROM junction_observations o WHERE o.road = junctions.road AND o.name_key = junctions.name_key)")
            }
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO junction_observations(road, name_key, observer, name, kind, latitude, longitude, origin)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (n, o) in observations.enumerated() {
                let key = JunctionName.key(o.name)
                guard !key.isEmpty else { continue }
                try insert.execute(arguments: [o.road, key, replacing ? "\(observer)#\(n + 1)" : observer, o.name, o.kind.rawValue,
                                               o.coordinate.latitude, o.coordinate.longitude, o.origin])
                touched.insert([o.road, key])
            }
            try Self.refreshJunctions(db, touched)
        }
    }

    /// `text` with LIKE's wildcards escaped (escape character `\`).
    private static func likePattern(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// Re-aggregates the junctions with these (road, key) pairs from their observations.
    private static func refreshJunctions(_ db: Database, _ touched: Set<[String]>) throws {
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
    public func knownJunctions(roads: Set<String>? = nil) throws -> [KnownJunction] {
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
    public func roadPositions(road: String, limit: Int = 4000) throws -> [Coordinate] {
        try read { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents WHERE road = ? AND latitude IS NOT NULL AND position_source IN (0, 1)",
                                         arguments: [road]) ?? 0
            let step = max(1, count / max(1, limit))
            return try Row.fetchAll(db, sql: """
                SELECT latitude, longitude FROM incidents WHERE road = ? AND latitude IS NOT NULL AND position_source IN (0, 1) AND id % ? = 0
                """, arguments: [road, step]).map { Coordinate(latitude: $0[0], longitude: $0[1]) }
        }
    }
}

/// Results written by `concurrentPerform` iterations, one slot each.
private final class ConcurrentResults<T>: @unchecked Sendable {
    private var slots: [T?]
    private let lock = NSLock()
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ value: T) { lock.lock(); slots[i] = value; lock.unlock() }
    var all: [T] { lock.lock(); defer { lock.unlock() }; return slots.compactMap { $0 } }
}
