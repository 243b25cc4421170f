import Foundation
import GRDB
import Testing
@testable import TrafficGeo

@Suite("Packed R*Tree bulk load")
struct RTreeBulkLoadTests {
    /// On a 2²¹ grid the first 512 curve positions fill the 8×8×8 corner cube, one unit step each.
    @Test func hilbertCurveVisitsACubeContiguously() {
        var byIndex: [UInt64: (Int, Int, Int)] = [:]
        for x in 0..<8 {
            for y in 0..<8 {
                for z in 0..<8 {
                    byIndex[HilbertCurve3D.index(UInt32(x), UInt32(y), UInt32(z))] = (x, y, z)
                }
            }
        }
        #expect(byIndex.count == 512)
        #expect(Set(byIndex.keys) == Set((0..<512).map(UInt64.init)))
        for i in 1..<512 {
            let a = byIndex[UInt64(i - 1)]!, b = byIndex[UInt64(i)]!
            #expect(abs(a.0 - b.0) + abs(a.1 - b.1) + abs(a.2 - b.2) == 1, "step \(i)")
        }
    }

    /// A fresh store is bulk-loaded; later ingests and deletes go through SQLite's own R*Tree
    /// code on the packed tree. After each step rtreecheck passes, each located incident has
    /// its box, and nearest/within agree with a brute-force scan.
    @Test func packedTreeStaysCorrectUnderLaterInsertsUpdatesAndDeletes() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try IncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let ingestor = FeedIngestor(store: store, sourceName: "csv")
        var generator = SplitMix64(seed: 7)
        var points: [String: Coordinate] = [:]
        func csv(_ ids: Range<Int>, moveEvery: Int = 0) -> String {
            var text = "id,title,lat,lon\n"
            for i in ids {
                var p = Coordinate(latitude: Double.random(in: 47...55, using: &generator), longitude: Double.random(in: 6...15, using: &generator))
                if let old = points["p\(i)"], moveEvery == 0 || i % moveEvery != 0 { p = old }
                points["p\(i)"] = p
                text += "p\(i),A\(i % 9 + 1) : P\(i),\(p.latitude),\(p.longitude)\n"
            }
            return text
        }
        func check(_ step: String) throws {
            #expect(try store.checkIntegrity().isEmpty, "\(step)")
            let engine = try QueryEngine(store: store)
            var q = SplitMix64(seed: 99)
            for _ in 0..<15 {
                let c = Coordinate(latitude: Double.random(in: 46...56, using: &q), longitude: Double.random(in: 5...16, using: &q))
                let truth = points.map { (id: $0.key, d: Geodesic.distance(from: c, to: $0.value)) }.sorted { $0.d < $1.d }
                let got = try engine.nearest(to: c, limit: 12)
                #expect(got.map(\.incident.id) == truth.prefix(12).map(\.id), "\(step): nearest to \(c)")
                let radius = truth[40].d
                let within = try engine.within(radius: radius, of: c)
                #expect(Set(within.map(\.incident.id)) == Set(truth.filter { $0.d <= radius }.map(\.id)), "\(step): within")
            }
        }

        // 1. Bulk load into the empty tree: the packed nodes are (nearly) full.
        let first = try TestSupport.write(csv(0..<5000), name: "a.csv", in: folder)
        _ = try ingestor.ingest(FeedInput(localFile: first.path))
        let (nodes, entries) = try store.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_index_node")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_index")!)
        }
        #expect(entries == 5000)
        #expect(nodes <= 5000 / 51 + 5000 / (51 * 51) + 3, "packed: \(nodes) nodes for \(entries) entries")
        try check("bulk load")

        // 2. An ingest into the non-empty tree: 2,000 new points, every 10th old one moved.
        let second = try TestSupport.write(csv(0..<7000, moveEvery: 10), name: "b.csv", in: folder)
        let s2 = try ingestor.ingest(FeedInput(localFile: second.path))
        #expect(s2.new == 2000 && s2.updated == 500)
        try check("incremental ingest")

        // 3. Deletes through the table's trigger shrink nodes until SQLite dissolves them.
        try store.write { db in
            try db.execute(sql: "DELETE FROM incidents WHERE external_id IN (\((0..<3000).map { "'p\($0 * 2)'" }.joined(separator: ",")))")
        }
        for i in 0..<3000 { points["p\(i * 2)"] = nil }
        try check("deletes")
    }

    /// An id repeated within one feed: the last entry wins, also in the deferred index.
    @Test func repeatedIdsInOneBulkFeedKeepTheLastPosition() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try IncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let url = try TestSupport.write("""
            id,title,lat,lon
            a,A1 : X,50.0,7.0
            b,A1 : Y,51.0,8.0
            a,A1 : X moved,52.0,9.0
            b,A1 : Y lost,,
            c,A1 : Z,53.0,10.0

            """, name: "f.csv", in: folder)
        let summary = try FeedIngestor(store: store, sourceName: "csv").ingest(FeedInput(localFile: url.path))
        #expect((summary.new, summary.updated) == (3, 2))
        #expect(try store.checkIntegrity().isEmpty)
        let engine = try QueryEngine(store: store)
        let near = try engine.nearest(to: Coordinate(latitude: 52, longitude: 9), limit: 5)
        #expect(near.map(\.incident.id) == ["a", "c"])
        #expect(near[0].distance! < 0.001)
    }
}
