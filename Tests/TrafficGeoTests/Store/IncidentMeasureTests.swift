import Foundation
import GRDB
import PostgresNIO
import Testing
@testable import TrafficGeo
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
import TrafficGeoProjection
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

/// Typed details: a measure (`IncidentMeasure`) is read from a detail's text one way, kept as a
/// number by both stores, and compared alike by SQLite, PostGIS and the in-memory test; a store
/// made before the measure gets its column filled from the details it holds.
@Suite("Measures: typed details on both stores")
struct IncidentMeasureTests {
    @Test(arguments: [
        ("15", 15.0), ("15.5", 15.5), (" 7 ", 7), ("15 min", 15), ("15min", 15), ("15-20", 20), ("15 – 20", 20), ("15 to 20", 20),
        ("20-15", 20), ("0", 0), ("20 Minuten", 20), ("15 min.", 15), ("1 h", 60), ("1h", 60), ("2 hours", 120), ("1 Std.", 60),
        ("1 h 15 min", 75), ("1 hour 15 mins", 75), ("1h15", 75), ("90 s", 1.5), ("15-20 min", 20), ("1-2 h", 120), ("1 to 2 hours", 120),
    ] as [(String, Double)])
    func aDelaysTextIsItsMinutes(_ text: String, _ minutes: Double) {
        #expect(IncidentMeasure.delayMinutes.number(text) == minutes, "\(text)")
    }

    /// A word that is no unit of time is no delay: never the number before it read as minutes.
    @Test(arguments: ["", "about 15", "unknown", "-5", "15-", "1e3", "inf", "nan", "0x10", "15;DROP", "1-2-3", "1:30", "15 km", "2 lanes",
                      "abc", "15 min 20 km", "1 h 15 km"])
    func aTextThatIsNoDelayIsNone(_ text: String) {
        #expect(IncidentMeasure.delayMinutes.number(text) == nil, "\(text)")
    }

    @Test(arguments: [("2", 2.0), ("2 lanes", 2), ("1-2", 2), ("3 Fahrstreifen", 3)] as [(String, Double)])
    func aCountsTextIsItsNumber(_ text: String, _ count: Double) {
        #expect(IncidentMeasure.lanesRestricted.number(text) == count)
    }

    @Test(arguments: ["1 of 3", "-1", "two", "1e3"])
    func aTextThatIsNoCountIsNone(_ text: String) {
        #expect(IncidentMeasure.lanesRestricted.number(text) == nil)
    }

    /// Delays as feeds write them, and what "at least 18 minutes" keeps.
    static let delays: [String?] = ["15-20", "10", "18", "5 min", "about 15", nil, "45"]
    static let atLeast18: Set<String> = ["m0", "m2", "m6"]

    static func incidents() -> [Incident] {
        delays.enumerated().map { k, delay in
            var incident = Incident(source: "desk", id: "m\(k)", title: "A4 : Köln - Olpe \(k)", road: "A4",
                                    position: Coordinate(latitude: 50.9 + Double(k) * 0.01, longitude: 6.9))
            if let delay { incident.properties[IncidentMeasure.delayMinutes.property] = delay }
            return incident
        }
    }

    static func atLeast(_ minutes: Double) -> IncidentFilter {
        var filter = IncidentFilter()
        filter.minimums[.delayMinutes] = minutes
        return filter
    }

    static let world = LonLatBox(west: -180, south: -90, east: 180, north: 90)

    static func ids(_ store: any IncidentStore, _ filter: IncidentFilter) async throws -> Set<String> {
        Set(try await store.inBoundingBox(world, filter: filter).map { (r: QueryResult) in r.incident.id })
    }

    @Test func sqliteAndTheInMemoryTestCompareTheNumber() async throws { try await Self.compare(on: .sqlite) }

    @Test(.enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
    func postGISAndTheInMemoryTestCompareTheNumber() async throws { try await Self.compare(on: .postgis) }

    static func compare(on backend: StoreBackend) async throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        _ = try await store.ingest(source: "desk", snapshot: .wholeSource, now: Date()) { emit in
            for incident in incidents() { try emit(.incident(incident)) }
        }
        #expect(try await ids(store, atLeast(18)) == atLeast18)
        let all = try await store.inBoundingBox(world, filter: IncidentFilter())
        #expect(Set(all.filter { atLeast(18).matches($0.stored) }.map(\.incident.id)) == atLeast18)
        // The detail is shown as the feed wrote it.
        #expect(all.first { $0.incident.id == "m0" }?.incident.properties["delay_minutes"] == "15-20")
    }

    @Test func aSQLiteStoreMadeBeforeTheMeasureGetsItsColumnFilled() async throws {
        let folder = TestFolders.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("old.sqlite").path
        do {
            let store = try await StoreOpening.open(path)
            _ = try await store.ingest(source: "desk", snapshot: .wholeSource, now: Date()) { emit in
                for incident in Self.incidents() { try emit(.incident(incident)) }
            }
        }
        // As a store of the release before the measure: no column, no migration.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "ALTER TABLE incidents DROP COLUMN delay_minutes")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'measure: delay_minutes'")
        }
        try queue.close()
        let reopened = try await StoreOpening.open(path)
        #expect(try await Self.ids(reopened, Self.atLeast(18)) == Self.atLeast18)
    }

    @Test(.enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
    func aPostGISStoreMadeBeforeTheMeasureGetsItsColumnFilled() async throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        do {
            let store = try await StoreOpening.open(url)
            _ = try await store.ingest(source: "desk", snapshot: .wholeSource, now: Date()) { emit in
                for incident in Self.incidents() { try emit(.incident(incident)) }
            }
        }
        // As a store of the release before the measures (schema 5).
        try await StoreThreads.run {
            let session = try PostgresSession(location: PostgresLocation(url: url))
            defer { session.close() }
            try session.withConnection { c in
                for measure in IncidentMeasure.allCases {
                    try c.run(PostgresQuery(unsafeSQL: "ALTER TABLE incidents DROP COLUMN \(measure.column)"), logger: session.logger)
                }
                try c.run("DELETE FROM trafficgeo_migrations WHERE version > 5", logger: session.logger)
            }
        }
        let reopened = try await StoreOpening.open(url)
        #expect(try await Self.ids(reopened, Self.atLeast(18)) == Self.atLeast18)
    }
}
