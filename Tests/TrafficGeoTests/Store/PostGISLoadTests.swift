import Foundation
import PostgresNIO
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

/// What only the PostGIS store has: the bulk load into an empty table (indexes and keys dropped,
/// then built again) and the upgrade of a store made by an older trafficgeo.
@Suite("PostGIS: bulk load and schema upgrade", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct PostGISLoadTests {
    /// The incidents table's indexes and constraints, by name.
    static func layout(_ url: String) throws -> (indexes: [String], constraints: [String]) {
        let session = try PostgresSession(location: PostgresLocation(url: url))
        defer { session.close() }
        return try session.withConnection { c in
            let indexes = try c.rows("SELECT indexname FROM pg_indexes WHERE tablename = 'incidents' ORDER BY 1", logger: session.logger)
                .map { try $0.decode(String.self) }
            let constraints = try c.rows("SELECT conname FROM pg_constraint WHERE conrelid = 'incidents'::regclass AND convalidated ORDER BY 1",
                                         logger: session.logger).map { try $0.decode(String.self) }
            return (indexes, constraints)
        }
    }

    /// Rows whose stored position is not their latitude and longitude.
    static func positionsAstray(_ url: String) throws -> Int {
        let session = try PostgresSession(location: PostgresLocation(url: url))
        defer { session.close() }
        return try session.withConnection { c in
            try c.rows("""
                SELECT count(*) FROM incidents WHERE (position IS NULL) <> (latitude IS NULL)
                   OR ST_Y(position::geometry) <> latitude OR ST_X(position::geometry) <> longitude
                """, logger: session.logger).first?.decode(Int.self) ?? -1
        }
    }

    static func incidents(_ n: Int, titled title: String = "A4 : Köln - Olpe") -> [Incident] {
        (0..<n).map { (i: Int) -> Incident in
            // Every twentieth has a road (a partial index few enough enter to be kept), every one an
            // update time (one that is dropped and built again); a few have no position.
            let updated = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
            let latitude = 50 + Double(i % 1000) / 1000, longitude = 7 + Double(i / 1000) / 100
            let position: Coordinate? = i % 97 == 0 ? nil : Coordinate(latitude: latitude, longitude: longitude)
            return Incident(source: "desk", id: "n\(i)", title: "\(title) \(i)", updated: updated, road: i % 20 == 0 ? "A4" : nil, position: position)
        }
    }

    @Test func aBulkLoadEndsWithEveryIndexAndKeyAsBefore() throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let store = try PostGISIncidentStore(url: url)
        let before = try Self.layout(url)
        #expect(before.indexes.contains("incidents_pkey") && before.indexes.contains("incidents_position") && before.indexes.count == 10)
        #expect(before.constraints.contains("incidents_source_id_fkey") && before.constraints.contains("incidents_position_known"))
        // 12,000 rows: two full batches and a rest; a repeated id in the last batch, changed,
        // makes the writer look up a row of the first batch, in the middle of the load.
        var all = Self.incidents(12_000)
        all.append(Incident(source: "desk", id: "n10", title: "A4 : Köln - Olpe 10, changed", road: "A4",
                            position: Coordinate(latitude: 51, longitude: 8)))
        let summary = try StoreContract.ingest(store, all, source: "desk")
        #expect(summary.new == 12_000 && summary.updated == 1)
        #expect(try Self.layout(url) == before)
        #expect(try Self.positionsAstray(url) == 0)
        let changed = try store.allIncidents().filter { $0.incident.id == "n10" }
        #expect(changed.map(\.incident.title) == ["A4 : Köln - Olpe 10, changed"])
        #expect(changed.first?.incident.position == Coordinate(latitude: 51, longitude: 8))
        // The nearest search uses the rebuilt GiST index and the keys hold again.
        let nearest = try store.nearest(to: Coordinate(latitude: 51, longitude: 8), limit: 1, maxDistance: nil, filter: IncidentFilter())
        #expect(nearest.first?.incident.id == "n10")
        // Read again as stored (n10 once, changed): nothing new, nothing changed (the hashes
        // were stored by the bulk load).
        let stored = all.enumerated().filter { $0.offset != 10 }.map(\.element)
        let again = try StoreContract.ingest(store, stored, source: "desk")
        #expect(again.new == 0 && again.updated == 0 && again.unchanged == stored.count)
    }

    @Test func aStoreOfSchemaVersionOneIsUpgradedKeepingItsPositions() throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let session = try PostgresSession(location: PostgresLocation(url: url))
        try PostGISSchema.migrate(session, upTo: 1)
        // A version-1 store with rows in it: the position is generated there.
        try session.withConnection { c in
            try c.run("INSERT INTO sources (name) VALUES ('desk')", logger: session.logger)
            try c.run("""
                INSERT INTO incidents (id, source_id, external_id, title, latitude, longitude, content_hash, first_seen, last_changed, search_folded)
                VALUES (1, 1, 'a', 'A1 : here', 50.5, 7.25, 0, 0, 0, 'a1 here'), (2, 1, 'b', 'A1 : nowhere', NULL, NULL, 0, 0, 0, 'a1 nowhere')
                """, logger: session.logger)
            try c.run("UPDATE store_info SET value = '3' WHERE key = 'next_incident_id'", logger: session.logger)
        }
        session.close()
        #expect(throws: StoreError.self, "a reader refuses a store that must be upgraded") { try PostGISIncidentStore(url: url, readOnly: true) }
        let store = try PostGISIncidentStore(url: url)
        #expect(try Self.positionsAstray(url) == 0)
        let found = try store.nearest(to: Coordinate(latitude: 50.5, longitude: 7.25), limit: 5, maxDistance: nil, filter: IncidentFilter())
        #expect(found.map(\.incident.id) == ["a"])
        // Written by this version: a position found later goes with its coordinates.
        _ = try StoreContract.ingest(store, [Incident(source: "desk", id: "b", title: "A1 : nowhere", position: Coordinate(latitude: -10, longitude: 179.5))],
                                     source: "desk")
        #expect(try Self.positionsAstray(url) == 0)
        #expect(try store.nearest(to: Coordinate(latitude: -10, longitude: -179.9), limit: 1, maxDistance: nil, filter: IncidentFilter()).first?.incident.id == "b")
        #expect(try Self.layout(url).constraints.contains("incidents_position_known"))
    }

    /// A batch's column writes its NULLs only once a value follows them (or when bound): the
    /// server must read back exactly the elements appended, in any arrangement.
    @Test(arguments: [[], [nil], [nil, nil, nil], [nil, "a", nil, "b"], ["a", nil, nil], ["ä", "b"]] as [[String?]])
    func aBatchColumnReadsBackAsAppended(_ values: [String?]) throws {
        var text = ColumnArray<String>(rows: values.count, bytesEach: 4)
        var utf8 = ColumnArray<String>()
        var numbers = ColumnArray<Double>()
        for (n, value) in values.enumerated() {
            text.append(value)
            if let value { utf8.append(utf8: Array(value.utf8)) } else { utf8.appendNull() }
            numbers.append(value.map { _ in Double(n) + 0.5 })
        }
        #expect(text.count == values.count && text.allNull == !values.contains { $0 != nil })
        let session = try PostgresSession(location: PostgresLocation(url: PostgresTestServer.url!))
        defer { session.close() }
        let read = try session.withConnection { c in
            var bindings = PostgresBindings()
            let columns: [any BoundColumn] = [text, utf8, numbers]
            for column in columns { column.bind(into: &bindings) }
            return try c.rows(PostgresQuery(unsafeSQL: "SELECT a, b, c FROM unnest($1::text[], $2::text[], $3::float8[]) AS u(a, b, c)", binds: bindings),
                              logger: session.logger)
                .map { try $0.decode((String?, String?, Double?).self) }
        }
        #expect(read.map(\.0) == values && read.map(\.1) == values)
        #expect(read.map(\.2) == values.enumerated().map { n, value in value.map { _ in Double(n) + 0.5 } })
    }
}

/// `serve`'s time limit reaches PostgreSQL: a statement the client no longer waits for is
/// stopped by the server itself (`statement_timeout`), freeing the query thread (issue 39).
@Suite("PostGIS: statements stop at serve's time limit", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct PostGISStatementLimitTests {
    @Test func aStatementPastTheLimitIsStopped() throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let store = try PostGISIncidentStore(url: url)
        store.limitStatements(to: .milliseconds(300))
        let setting = try store.read { try $0.rows("SHOW statement_timeout", logger: store.session.logger).first?.decode(String.self) }
        #expect(setting == "300ms")
        let started = ContinuousClock.now
        #expect(throws: (any Error).self) { try store.read { try $0.rows("SELECT pg_sleep(5)", logger: store.session.logger) } }
        #expect(ContinuousClock.now - started < .seconds(3))
        // The connection is still good for the next read.
        #expect(try store.statistics().total == 0)
    }
}
