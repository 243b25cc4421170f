import Foundation
import GRDB
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
import TrafficGeoTestSupport
import TrafficGeoPROJ

@Suite("Block index: blocks of consecutive incidents in a packed R*Tree")
struct BlockIndexTests {
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

    /// A fresh store is bulk-loaded with blocks; later ingests add blocks and single entries for
    /// incidents that moved out of their block's box, deletes go through SQLite's own R*Tree code
    /// on the packed tree. After each step the index check passes (every located incident found
    /// once) and nearest/within agree with a brute-force scan.
    @Test func packedTreeStaysCorrectUnderLaterInsertsUpdatesAndDeletes() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
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
            let engine = QueryEngine(store: store)
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

        func counts() throws -> (nodes: Int, blocks: Int, singles: Int) {
            try store.read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks_node")!,
                 try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks WHERE id > 0")!,
                 try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks WHERE id < 0")!)
            }
        }

        // 1. Bulk load into the empty tree: blocks of 32, packed nodes.
        let first = try TestSupport.write(csv(0..<5000), name: "a.csv", in: folder)
        _ = try ingestor.ingest(FeedInput(localFile: first.path))
        let loaded = try counts()
        #expect(loaded.blocks == (5000 + BlockIndex.blockSize - 1) / BlockIndex.blockSize && loaded.singles == 0)
        #expect(loaded.nodes <= loaded.blocks / 51 + 3, "packed: \(loaded.nodes) nodes for \(loaded.blocks) blocks")
        try check("bulk load")

        // 2. An ingest into the non-empty tree: 2,000 new points, every 10th old one moved
        //    (across Germany: out of its block's box, so it gets an entry of its own).
        let second = try TestSupport.write(csv(0..<7000, moveEvery: 10), name: "b.csv", in: folder)
        let s2 = try ingestor.ingest(FeedInput(localFile: second.path))
        #expect(s2.new == 2000 && s2.updated == 500)
        let grown = try counts()
        #expect(grown.blocks == loaded.blocks + (2000 + BlockIndex.blockSize - 1) / BlockIndex.blockSize)
        #expect(grown.singles > 400 && grown.singles <= 500, "\(grown.singles) single entries")
        try check("incremental ingest")

        // 2b. The moved ones go back: inside their block's box again, their own entries go.
        for i in stride(from: 0, to: 5000, by: 10) { points["p\(i)"] = nil }
        var back = SplitMix64(seed: 7)
        var text = "id,title,lat,lon\n"
        for i in 0..<5000 {
            let p = Coordinate(latitude: Double.random(in: 47...55, using: &back), longitude: Double.random(in: 6...15, using: &back))
            if i % 10 == 0 { points["p\(i)"] = p; text += "p\(i),A\(i % 9 + 1) : P\(i),\(p.latitude),\(p.longitude)\n" }
        }
        _ = try ingestor.ingest(FeedInput(localFile: try TestSupport.write(text, name: "c.csv", in: folder).path))
        #expect(try counts().singles == 0)
        try check("moved back")

        // 3. Deletes through the table's trigger shrink nodes until SQLite dissolves them.
        try store.write { db in
            try db.execute(sql: "DELETE FROM incidents WHERE external_id IN (\((0..<3000).map { "'p\($0 * 2)'" }.joined(separator: ",")))")
        }
        for i in 0..<3000 { points["p\(i * 2)"] = nil }
        try check("deletes")
    }

    /// One engine answering one-shot queries keeps the tree's nodes between them only while the
    /// database is unchanged: after another connection's ingest and delete, the answers follow.
    @Test func oneEngineSeesLaterChanges() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let ingestor = FeedIngestor(store: store, sourceName: "csv")
        var generator = SplitMix64(seed: 13)
        var points: [String: Coordinate] = [:]
        func add(_ ids: Range<Int>) throws {
            var text = "id,title,lat,lon\n"
            for i in ids {
                let c = Coordinate(latitude: Double.random(in: 50...51, using: &generator), longitude: Double.random(in: 7...8, using: &generator))
                points["p\(i)"] = c
                text += "p\(i),A1 : X,\(c.latitude),\(c.longitude)\n"
            }
            _ = try ingestor.ingest(FeedInput(localFile: try TestSupport.write(text, name: "f\(ids.lowerBound).csv", in: folder).path))
        }
        let engine = QueryEngine(store: store)
        let c = Coordinate(latitude: 50.5, longitude: 7.5)
        func check(_ step: String) throws {
            let truth = points.map { (id: $0.key, d: Geodesic.distance(from: c, to: $0.value)) }.sorted { $0.d < $1.d }
            for _ in 0..<2 {  // the second time from the kept nodes
                #expect(try engine.nearestNeighbours(to: c, limit: 20).map(\.id) == truth.prefix(20).map(\.id), "\(step)")
                #expect(Set(try engine.withinNeighbours(radius: truth[30].d, of: c).map(\.id)) == Set(truth.prefix(31).map(\.id)), "\(step)")
            }
        }
        try add(0..<400)
        try check("first ingest")
        try add(400..<2000)
        try check("second ingest")
        try store.write { db in try db.execute(sql: "DELETE FROM incidents WHERE external_id IN (\((0..<2000).filter { $0 % 3 == 0 }.map { "'p\($0)'" }.joined(separator: ",")))") }
        for i in stride(from: 0, to: 2000, by: 3) { points["p\(i)"] = nil }
        try check("delete")
    }

    /// A database made before the block index (one R*Tree entry per incident) is migrated: its
    /// entries become single entries, and it answers as before; new incidents get blocks.
    @Test func storeFromBeforeTheBlockIndexIsMigrated() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("db.sqlite").path
        var generator = SplitMix64(seed: 5)
        var points: [String: Coordinate] = [:]
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreSchema.migrator.migrate(queue, upTo: "v3: partial indexes")
            let projector = try Projector(target: "EPSG:4978")
            try queue.write { db in
                for i in 0..<300 {
                    let c = Coordinate(latitude: Double.random(in: 47...55, using: &generator), longitude: Double.random(in: 6...15, using: &generator))
                    points["old\(i)"] = c
                    try db.execute(sql: """
                        INSERT INTO incidents (source, external_id, title, latitude, longitude, position_source, content_hash, first_seen, last_changed)
                        VALUES ('s', ?, 'A1 : X', ?, ?, 'weblink', 0, 0, ?)
                        """, arguments: ["old\(i)", c.latitude, c.longitude, i % 2])
                    let p = try projector.forward(c)
                    try db.execute(sql: "INSERT INTO incident_index VALUES (?, ?, ?, ?, ?, ?, ?)", arguments: [db.lastInsertedRowID, p.x, p.x, p.y, p.y, p.z, p.z])
                }
            }
        }
        // A read-only command (near, within, export) upgrades the file first.
        let reader = try SQLiteIncidentStore(path: path, readOnly: true)
        #expect(try QueryEngine(store: reader).nearest(to: Coordinate(latitude: 50, longitude: 8), limit: 7).count == 7)
        let store = try SQLiteIncidentStore(path: path)
        #expect(try store.checkIntegrity().isEmpty)
        // The rows came over whole: source, how the position was found, when it last changed.
        let old = try store.allIncidents()
        #expect(old.count == 300 && old.allSatisfy { $0.incident.source == "s" && $0.incident.positionSource?.kind == .weblink })
        #expect(old.filter { $0.lastChanged == Date(timeIntervalSince1970: 1) }.count == 150)
        var text = "id,title,lat,lon\n"
        for i in 0..<200 {
            let c = Coordinate(latitude: Double.random(in: 47...55, using: &generator), longitude: Double.random(in: 6...15, using: &generator))
            points["new\(i)"] = c
            text += "new\(i),A2 : Y,\(c.latitude),\(c.longitude)\n"
        }
        _ = try FeedIngestor(store: store, sourceName: "csv").ingest(FeedInput(localFile: try TestSupport.write(text, name: "n.csv", in: folder).path))
        #expect(try store.checkIntegrity().isEmpty)
        let (blocks, singles) = try store.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks WHERE id > 0")!, try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks WHERE id < 0")!)
        }
        #expect(singles == 300 && blocks == (200 + BlockIndex.blockSize - 1) / BlockIndex.blockSize)
        let engine = QueryEngine(store: store)
        let c = Coordinate(latitude: 51, longitude: 10)
        let truth = points.map { (id: $0.key, d: Geodesic.distance(from: c, to: $0.value)) }.sorted { $0.d < $1.d }
        #expect(try engine.nearest(to: c, limit: 25).map(\.incident.id) == truth.prefix(25).map(\.id))
    }

    /// A big first feed (here: more than 7 new incidents) is sorted in runs written to files and
    /// merged: the table gets one curve-ordered run, indexed as blocks only, exactly as if it had
    /// been sorted in memory, and no sort file is left in the folder.
    @Test func aBigFirstFeedIsSortedInRunsAndStoredAsOne() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SplitMix64(seed: 12)
        var incidents: [Incident] = []
        for i in 0..<403 {
            let c = Coordinate(latitude: Double.random(in: 47...55, using: &generator), longitude: Double.random(in: 6...15, using: &generator))
            var incident = Incident(source: i % 3 == 0 ? "t" : "s", id: "p\(i)", title: "A\(i % 9) : \(i)")
            incident.position = i % 13 == 0 ? nil : c
            incidents.append(incident)
        }
        func stored(threshold: Int, in name: String) throws -> (store: SQLiteIncidentStore, counts: IncidentWriter.Counts) {
            let store = try SQLiteIncidentStore(path: folder.appendingPathComponent(name).path)
            let counts = try store.write { db in
                let writer = try IncidentWriter(db: db, now: Date(timeIntervalSince1970: 1_700_000_000), flushThreshold: threshold)
                for incident in incidents { try writer.upsert(incident) }
                try writer.finish()
                return writer.counts
            }
            return (store, counts)
        }
        let (merged, counts) = try stored(threshold: 7, in: "merged.sqlite")
        let (inMemory, _) = try stored(threshold: 1000, in: "memory.sqlite")
        #expect((counts.inserted, counts.updated, counts.unchanged) == (403, 0, 0))
        #expect(try merged.checkIntegrity().isEmpty)
        let located = incidents.filter { $0.position != nil }.count
        let rows = "SELECT id, source_id, external_id, latitude, longitude FROM incidents ORDER BY id"
        let entries = "SELECT id, min_x, max_x FROM incident_blocks ORDER BY id"
        #expect(try merged.read { try Row.fetchAll($0, sql: rows) } == inMemory.read { try Row.fetchAll($0, sql: rows) })
        #expect(try merged.read { try Row.fetchAll($0, sql: entries) } == inMemory.read { try Row.fetchAll($0, sql: entries) })
        #expect(try merged.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM incident_blocks WHERE id > 0") }
                == (located + BlockIndex.blockSize - 1) / BlockIndex.blockSize)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasPrefix(".trafficgeo-sort") })
        let c = Coordinate(latitude: 51, longitude: 10)
        let truth = incidents.compactMap { i in i.position.map { (id: i.id, d: Geodesic.distance(from: c, to: $0)) } }.sorted { $0.d < $1.d }
        #expect(try QueryEngine(store: merged).nearest(to: c, limit: 25).map(\.incident.id) == truth.prefix(25).map(\.id))
    }

    /// Big feeds are stored in several runs (here: every 7 new incidents), an id repeated after
    /// its first run was stored becomes an update, and every run is indexed as blocks.
    @Test func severalFlushesAndIdsRepeatedAcrossThem() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        var generator = SplitMix64(seed: 11)
        var points: [String: Coordinate] = [:]
        let counts = try store.write { db in
            let writer = try IncidentWriter(db: db, now: Date(), flushThreshold: 7)
            for i in 0..<400 {
                let id = "p\(i % 250)"   // ids 0..<150 come twice, the second time far later
                let c = Coordinate(latitude: Double.random(in: 47...55, using: &generator), longitude: Double.random(in: 6...15, using: &generator))
                var incident = Incident(source: "s", id: id, title: "A1 : \(i)")
                incident.position = i % 13 == 0 ? nil : c
                points[id] = incident.position
                try writer.upsert(incident)
            }
            try writer.finish()
            return writer.counts
        }
        #expect((counts.inserted, counts.updated, counts.unchanged) == (250, 150, 0))
        #expect(try store.checkIntegrity().isEmpty)
        let located = points.compactMapValues { $0 }
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents WHERE latitude IS NOT NULL") } == located.count)
        let engine = QueryEngine(store: store)
        for c in [Coordinate(latitude: 48, longitude: 7), Coordinate(latitude: 53, longitude: 14)] {
            let truth = located.map { (id: $0.key, d: Geodesic.distance(from: c, to: $0.value)) }.sorted { $0.d < $1.d }
            #expect(try engine.nearest(to: c, limit: 30).map(\.incident.id) == truth.prefix(30).map(\.id))
            let within = try engine.withinNeighbours(radius: truth[60].d, of: c)
            #expect(Set(within.map(\.id)) == Set(truth.prefix(61).map(\.id)))
        }
    }

    /// An id repeated within one feed: the last entry wins, also before it is stored.
    @Test func repeatedIdsInOneBulkFeedKeepTheLastPosition() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let url = try TestSupport.write("""
            id,title,lat,lon,updated
            a,A1 : X,50.0,7.0,
            b,A1 : Y,51.0,8.0,
            a,A1 : X moved,52.0,9.0,
            b,A1 : Y lost,,,
            c,A1 : Z,53.0,10.0,
            d,A1 : W,52.0,9.001,
            d,A1 : W,,,2025-05-19T04:00:00Z

            """, name: "f.csv", in: folder)
        let summary = try FeedIngestor(store: store, sourceName: "csv").ingest(FeedInput(localFile: url.path))
        // d's second entry has the same words, no position and a time: an update that keeps d's position.
        #expect((summary.new, summary.updated, summary.unchanged) == (4, 3, 0))
        #expect(try store.checkIntegrity().isEmpty)
        let engine = QueryEngine(store: store)
        let near = try engine.nearest(to: Coordinate(latitude: 52, longitude: 9), limit: 5)
        #expect(near.map(\.incident.id) == ["a", "d", "c"])
        #expect(near[0].distance! < 0.001)
    }
}
