import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoTestSupport

/// The PostGIS store gives the same answers as the SQLite file: the same incidents at the same
/// distances (the same doubles: both compute Karney's geodesic in the same code), on the global
/// point set of `QueryEngineTests` (a third anywhere, a third across the antimeridian, a third at
/// the poles), and both equal a brute-force scan.
@Suite("SQLite and PostGIS answer alike", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct StoreParityTests {
    /// Both stores holding the same 3,000 points; their positions.
    static func makeStores(_ body: (SQLiteIncidentStore, PostGISIncidentStore, [Coordinate]) throws -> Void) throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let sqlite = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let points = try QueryEngineTests.fill(sqlite, count: 3000, seed: 11, in: folder)
        let postgis = try PostGISIncidentStore(url: url)
        #expect(try QueryEngineTests.fill(postgis, count: 3000, seed: 11, in: folder) == points)
        try body(sqlite, postgis, points)
    }

    /// Feed ids and distances, in answer order.
    static func answers(_ results: [QueryResult]) -> [String] {
        results.map { "\($0.incident.id)@\($0.distance.map { String($0.bitPattern, radix: 16) } ?? "-")" }
    }

    @Test func nearestAndWithinAreIdenticalAndExact() throws {
        try Self.makeStores { sqlite, postgis, points in
            let a = QueryEngine(store: sqlite), b = QueryEngine(store: postgis)
            for q in QueryEngineTests.queryPoints(seed: 12) {
                for k in [1, 10, 25] {
                    let fromFile = try a.nearest(to: q, limit: k), fromServer = try b.nearest(to: q, limit: k)
                    #expect(Self.answers(fromServer) == Self.answers(fromFile), "nearest \(k) to \(q)")
                    let truth = points.map { Geodesic.distance(from: q, to: $0) }.sorted().prefix(k)
                    #expect(zip(fromServer.map(\.distance!), truth).allSatisfy { abs($0 - $1) < 1e-6 } && fromServer.count == k,
                            "nearest \(k) to \(q) against a scan")
                    // With a maximum distance and a filter too.
                    let filter = IncidentFilter(categories: [.accident])
                    #expect(Self.answers(try b.nearest(to: q, limit: k, maxDistance: 800_000, filter: filter))
                            == Self.answers(try a.nearest(to: q, limit: k, maxDistance: 800_000, filter: filter)))
                }
                for radius in [50_000.0, 500_000, 2_000_000] {
                    let fromFile = try a.within(radius: radius, of: q), fromServer = try b.within(radius: radius, of: q)
                    #expect(Set(Self.answers(fromServer)) == Set(Self.answers(fromFile)), "within \(radius) of \(q)")
                    let truth = points.filter { Geodesic.distance(from: q, to: $0) <= radius }.count
                    #expect(fromServer.count == truth)
                    // The lean path of batch queries.
                    let lean = try postgis.withNeighbourSearch { try $0.withinNeighbours(radius: radius, of: q) }
                    #expect(lean.map(\.id) == fromServer.sorted { ($0.distance!, $0.stored.storeID) < ($1.distance!, $1.stored.storeID) }.map(\.incident.id))
                }
                // A radius of exactly the fifth distance includes the fifth; a micrometre less excludes it.
                let fifth = try b.nearest(to: q, limit: 5)[4]
                #expect(try b.within(radius: fifth.distance!, of: q).contains { $0.incident.id == fifth.incident.id })
                #expect(!(try b.within(radius: fifth.distance! - 1e-6, of: q).contains { $0.incident.id == fifth.incident.id }))
            }
        }
    }

    @Test func boundingBoxesAreIdentical() throws {
        try Self.makeStores { sqlite, postgis, points in
            for box in QueryEngineTests.testBoxes(seed: 32, corner: points[0]) {
                var fromFile: [String] = [], fromServer: [String] = []
                try sqlite.inBoundingBox(box, filter: IncidentFilter()) { fromFile.append($0.incident.id) }
                try postgis.inBoundingBox(box, filter: IncidentFilter()) { fromServer.append($0.incident.id) }
                #expect(Set(fromServer) == Set(fromFile) && fromServer.count == fromFile.count, "\(box)")
                #expect(fromServer.count == points.filter { box.contains($0) }.count)
            }
        }
    }
}
