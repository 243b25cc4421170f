import Foundation
import GRDB
import NIOConcurrencyHelpers
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
@testable import TrafficGeoSupport

/// The row layout, the R*Tree node format and the index's upkeep, each defined once: every field
/// survives every path in and out of the table, and the index stays sound after prunes and in
/// SQLite's defensive mode.
@Suite("Store layout and index upkeep")
struct StoreLayoutTests {
    /// An incident with every field set, none to its default.
    static func fullIncident(id: String, latitude: Double = 50.5, title: String = "A4 : Köln - Olpe, Unfall") -> Incident {
        var i = Incident(source: "layout", id: id, title: title)
        i.summary = "zwischen AS Wenden und AS Krombach, \"quoted\" ümlaut"
        i.weblink = "https://example.org/\(id)?a=1&b=2"
        i.iconURL = "https://example.org/icon.png"
        i.updated = Date(timeIntervalSince1970: 1_747_627_200.5)
        i.expires = Date(timeIntervalSince1970: 4_102_444_800)
        i.road = "A4"
        i.category = .accident
        i.position = Coordinate(latitude: latitude, longitude: 7.123456789012345)
        i.segment = [Coordinate(latitude: latitude, longitude: 7.1), Coordinate(latitude: latitude + 0.01, longitude: 7.2)]
        i.positionSource = PositionSource(kind: .geocoder, geocoder: "nominatim", query: "Wenden | Krombach",
                                          precision: .junction, confidence: 0.75)
        i.properties = ["delay": "15", "note": "ä \"x\""]
        return i
    }

    static func store(_ folder: URL) throws -> SQLiteIncidentStore {
        try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
    }

    /// A store in `folder` with 50 incidents northwards from (50, 7), its query engine, and a
    /// point among them.
    static func fiftyIncidents(_ folder: URL) throws -> (SQLiteIncidentStore, QueryEngine, Coordinate) {
        let store = try Self.store(folder)
        _ = try Self.ingest(store, (0..<50).map { Self.fullIncident(id: "n\($0)", latitude: 50 + Double($0) * 0.01) })
        return (store, QueryEngine(store: store), Coordinate(latitude: 50.2, longitude: 7))
    }

    static func ingest(_ store: SQLiteIncidentStore, _ incidents: [Incident]) throws -> IngestSummary {
        try store.ingest(source: "layout") { emit in for i in incidents { try emit(.incident(i)) } }
    }

    @Test func everyFieldRoundTripsThroughInsertUpdateAndEveryRead() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(folder)
        let first = Self.fullIncident(id: "x")
        // Bulk path (empty table), then the one-row path (table not empty), then an update.
        _ = try Self.ingest(store, [first])
        let second = Self.fullIncident(id: "y", latitude: 50.6)
        _ = try Self.ingest(store, [first, second])
        var changed = second
        changed.title = "A4 : Olpe - Köln, Baustelle"
        changed.category = .roadworks
        changed.properties = ["delay": "20"]
        let summary = try Self.ingest(store, [first, changed])
        #expect((summary.new, summary.updated, summary.unchanged) == (0, 1, 1))

        let stored = try store.allIncidents()
        #expect(stored.map(\.incident) == [first, changed])
        #expect(try store.incident(id: stored[0].storeID)?.incident == first)
        // The query paths decode rows their own way (by position after the candidate columns).
        let engine = QueryEngine(store: store)
        let center = Coordinate(latitude: 50.55, longitude: 7.1)
        #expect(try engine.nearest(to: center, limit: 2).map(\.incident).sorted { $0.id < $1.id } == [first, changed])
        #expect(try engine.within(radius: 50_000, of: center).map(\.incident).sorted { $0.id < $1.id } == [first, changed])
        var boxed: [Incident] = []
        try engine.inBoundingBox(west: 7, south: 50, east: 8, north: 51) { boxed.append($0.incident) }
        #expect(boxed == [first, changed])
    }

    @Test func theLayoutNamesEveryColumnOfTheTableOnce() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(folder)
        let columns = Set(try store.read { db in try Row.fetchAll(db, sql: "PRAGMA table_info(incidents)").map { $0["name"] as String } })
        let written = IncidentRowLayout.NewRow.columns
        #expect(Set(written).count == written.count)
        #expect(Set(written).isSubset(of: columns), "\(Set(written).subtracting(columns))")
        // What a new row leaves to the table's defaults: the change and end times, the geocoding
        // bookkeeping, and its place among events (a new report is an event of its own).
        #expect(columns.subtracting(written) == ["last_changed", "ended", "geocode_status", "geocode_error", "geocode_attempts",
                                                 "role", "event_id", "reports"])
        let selected = try store.read { db in
            try Row.fetchOne(db, sql: "SELECT \(IncidentRowLayout.selection) FROM incidents i LIMIT 1") ?? Row()
        }
        #expect(selected.count == 0 || selected.count == IncidentRowLayout.selectionCount)
        _ = try Self.ingest(store, [Self.fullIncident(id: "x")])
        #expect(try store.read { db in try Row.fetchOne(db, sql: "SELECT \(IncidentRowLayout.selection) FROM incidents i")!.count }
                == IncidentRowLayout.selectionCount)
    }

    /// Stored change hashes must not change between versions (a re-read feed would count every
    /// entry as updated): FNV-1a over each column's bytes and a kind tag, as computed by hand.
    @Test func columnHashesStayAsStored() {
        var hash = StableHash()
        for value: DatabaseValue in [.null, "Köln".databaseValue, 50.5.databaseValue, Int64(-3).databaseValue, Data([1, 2]).databaseValue] {
            hash.combine(column: value)
        }
        #expect(hash.value == 0x1066_9e24_efc5_b4e4)
    }

    @Test func nodeFormatReadsWhatItWrites() {
        var node = [UInt8](repeating: 0xAB, count: RTreeNodeFormat.headerSize + 3 * RTreeNodeFormat.cellSize + 7)
        let boxes = [BlockIndex.Box(minX: -1.5, maxX: 2.25, minY: 3, maxY: 4, minZ: -6_378_137, maxZ: 6_378_137),
                     BlockIndex.Box(minX: 0.1, maxX: 0.2, minY: 0.3, maxY: 0.4, minZ: 0.5, maxZ: 0.6),
                     BlockIndex.Box(minX: 1e6, maxX: 1e6, minY: -1e6, maxY: -1e6, minZ: 0, maxZ: 0)]
        let refs: [Int64] = [1, -123_456_789_012, Int64.max]
        RTreeNodeFormat.writeHeader(depth: 3, cellCount: 3, into: &node)
        for (c, box) in boxes.enumerated() { RTreeNodeFormat.writeCell(c, ref: refs[c], box: RTreeNodeFormat.storedBox(box), into: &node) }
        node.withUnsafeBytes { bytes in
            #expect(RTreeNodeFormat.depth(bytes) == 3)
            #expect(RTreeNodeFormat.cellCount(bytes) == 3)
            for c in 0..<3 {
                let (ref, box) = RTreeNodeFormat.cell(bytes, c)
                #expect(ref == refs[c])
                // float32, rounded outward: the stored box holds the exact one, within a float32 step.
                #expect(box.minX <= boxes[c].minX && box.maxX >= boxes[c].maxX && box.minZ <= boxes[c].minZ && box.maxZ >= boxes[c].maxZ)
                #expect(abs(box.minY - boxes[c].minY) <= max(1e-7, abs(boxes[c].minY) * 1.2e-7))
            }
        }
        // A count the blob cannot hold is refused, not read past the end.
        RTreeNodeFormat.writeHeader(depth: nil, cellCount: 9, into: &node)
        node.withUnsafeBytes { #expect(RTreeNodeFormat.cellCount($0) == nil) }
    }

    /// Expired incidents that filled whole blocks: after the prune no block entry is left without
    /// an incident, the index is sound and queries answer as before for the rest.
    @Test func pruneDropsTheBlocksItEmptied() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(folder)
        var incidents: [Incident] = []
        for k in 0..<400 {
            var i = Incident(source: "layout", id: "e\(k)", title: "A\(k % 7 + 1) : X")
            // Two clusters far apart: the expired one fills its own blocks.
            let expired = k < 200
            i.position = expired ? Coordinate(latitude: 48 + Double(k) * 1e-4, longitude: 11) : Coordinate(latitude: 53 + Double(k) * 1e-4, longitude: 10)
            i.expires = expired ? Date(timeIntervalSince1970: 1_000_000) : nil
            incidents.append(i)
        }
        _ = try Self.ingest(store, incidents)
        func emptyBlocks() throws -> Int {
            try store.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM incident_blocks WHERE id > 0").filter { id in
                    let (first, last) = BlockIndex.range(ofEntry: id)
                    return try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM incidents WHERE id BETWEEN ? AND ?)", arguments: [first, last])!
                }.count
            }
        }
        let blocksBefore = try store.statistics().indexBlocks
        #expect(try store.pruneExpired(before: Date()) == 200)
        #expect(try emptyBlocks() == 0)
        #expect(try store.checkIntegrity().isEmpty)
        #expect(try store.statistics().indexBlocks == blocksBefore - 200 / BlockIndex.blockSize)
        let engine = QueryEngine(store: store)
        #expect(try engine.nearest(to: Coordinate(latitude: 48, longitude: 11), limit: 3).map(\.incident.id) == ["e200", "e201", "e202"])
        // New incidents after the prune are indexed soundly too.
        _ = try Self.ingest(store, [Self.fullIncident(id: "late", latitude: 48)])
        #expect(try store.checkIntegrity().isEmpty)
        #expect(try engine.nearest(to: Coordinate(latitude: 48, longitude: 7.1), limit: 1).map(\.incident.id) == ["late"])
    }

    /// One-shot queries on an unchanged store reuse the index nodes an earlier query read (they
    /// are a fifth of a 10-NN query); a commit by anyone makes the next query read them again.
    @Test func queriesReuseTheIndexNodesUntilTheStoreChanges() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, engine, point) = try Self.fiftyIncidents(folder)
        let first = try engine.nearest(to: point, limit: 3)
        for _ in 0..<20 {
            #expect(try engine.nearest(to: point, limit: 3) == first)
            _ = try engine.withinNeighbours(radius: 5_000, of: point)
        }
        #expect(store.nodeCache.reads.withLockedValue { $0 } == 1)
        // Another connection (another process, in life) commits: the next query reads afresh.
        let other = try Self.store(folder)
        _ = try Self.ingest(other, [Self.fullIncident(id: "new", latitude: 50.205)])
        #expect(try engine.nearest(to: Coordinate(latitude: 50.205, longitude: 7.1234), limit: 1).first?.incident.id == "new")
        #expect(store.nodeCache.reads.withLockedValue { $0 } == 2)
    }

    /// Best-first rows from the nodes' row cache (a search with no filter that reads only ids and
    /// positions) are the rows the scan of each entry gives, in the same order: read into the
    /// cache, taken from it on the next search, and when the cache is full and drops what it
    /// holds (a capacity of 3 rows). An incident that moved out of its block's box (a single
    /// entry of its own) comes once.
    @Test func cachedEntryRowsAreTheScannedRows() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, _, point) = try Self.fiftyIncidents(folder)
        _ = try Self.ingest(store, [Self.fullIncident(id: "n7", latitude: 50.455)])
        try store.read { db in
            func rows(_ nodes: RTreeNodes, positionsOnly: Bool) throws -> [String] {
                var candidates = try SQLiteCandidates(db, nodes: nodes, around: point, maxDistance: .greatestFiniteMagnitude,
                                                      filter: IncidentFilter(), positionsOnly: positionsOnly)
                defer { candidates.close() }
                var seen: [String] = []
                while let (_, position) = try candidates.next() {
                    seen.append("\(candidates.storeID) \(position.latitude) \(position.longitude)")
                }
                return seen
            }
            let scanned = try rows(RTreeNodes(RTreeNodeReader(db)), positionsOnly: false)
            #expect(scanned.count == 50)
            #expect(Set(scanned).count == 50)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \(BlockIndex.table) WHERE id < 0") == 1)
            let kept = try RTreeNodes(RTreeNodeReader(db))
            #expect(try rows(kept, positionsOnly: true) == scanned)
            #expect(try rows(kept, positionsOnly: true) == scanned)
            #expect(try rows(RTreeNodes(RTreeNodeReader(db), rowCapacity: 3), positionsOnly: true) == scanned)
            // With a filter the rows are scanned (the cache holds no fields to filter by).
            var filter = IncidentFilter()
            filter.roads = ["A4"]
            var filtered = try SQLiteCandidates(db, nodes: kept, around: point, maxDistance: .greatestFiniteMagnitude, filter: filter,
                                                positionsOnly: true)
            defer { filtered.close() }
            var count = 0
            while try filtered.next() != nil { count += 1 }
            #expect(count == 50)
        }
    }

    /// A long-lived reader thread (`ReaderThread`, serve's query threads) reads on a connection
    /// of its own: the same one each time, answering as the pool does, seeing what another
    /// connection commits, and a schema another connection changed (GRDB's schema cache is
    /// cleared, as the pool does for its readers).
    @Test func aReaderThreadKeepsItsOwnConnectionAndSeesEveryCommit() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, engine, point) = try Self.fiftyIncidents(folder)
        let fromPool = try engine.nearest(to: point, limit: 5)
        #expect(!ReaderThread.isCurrentMarked)

        let outcome = try Self.onReaderThread { () throws -> [String] in
            var seen: [String] = []
            let connection = try store.read { ObjectIdentifier($0) }
            if try engine.nearest(to: point, limit: 5) == fromPool { seen.append("same answer") }
            if try !store.read({ try $0.tableExists("extra") }) { seen.append("no table yet") }
            let other = try Self.store(folder)
            _ = try Self.ingest(other, [Self.fullIncident(id: "new", latitude: 50.205)])
            try other.pool.write { try $0.execute(sql: "CREATE TABLE extra (x)") }
            if try engine.nearest(to: Coordinate(latitude: 50.205, longitude: 7.1234), limit: 1).first?.incident.id == "new" { seen.append("new incident") }
            if try store.read({ try $0.tableExists("extra") }) { seen.append("new table") }
            if try store.read({ ObjectIdentifier($0) }) == connection { seen.append("one connection") }
            return seen
        }
        #expect(outcome == ["same answer", "no table yet", "new incident", "new table", "one connection"])
    }

    /// Runs `body` on a new thread marked as a long-lived reader, and waits for it.
    static func onReaderThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let thread = Thread {
            ReaderThread.markCurrent()
            result.withLockedValue { $0 = Result { try body() } }
            done.signal()
        }
        thread.start()
        done.wait()
        return try result.withLockedValue { $0! }.get()
    }

    /// In defensive mode SQLite refuses writes to the R*Tree's shadow tables, which the bulk loader
    /// makes: the index is then written through the R*Tree, and nothing else changes.
    @Test func defensiveModeStillIndexesEveryIncident() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(folder)
        // The pool has one writer connection: defensive from here on.
        try store.pool.write { db in SQLiteConnectionMode.setDefensive(db, true) }
        #expect(try store.pool.write { db in SQLiteConnectionMode.isDefensive(db) })
        // The condition is real: the shadow tables cannot be written on this connection.
        #expect(throws: DatabaseError.self) { try store.pool.write { db in try db.execute(sql: "DELETE FROM incident_blocks_node") } }
        var incidents: [Incident] = []
        for k in 0..<300 {
            var i = Incident(source: "layout", id: "d\(k)", title: "A1 : X")
            i.position = Coordinate(latitude: 50 + Double(k % 17) * 0.01, longitude: 7 + Double(k / 17) * 0.01)
            incidents.append(i)
        }
        let summary = try Self.ingest(store, incidents)
        #expect(summary.new == 300)
        #expect(try store.checkIntegrity().isEmpty)
        #expect(try store.statistics().indexBlocks == (300 + BlockIndex.blockSize - 1) / BlockIndex.blockSize)
        let engine = QueryEngine(store: store)
        let center = Coordinate(latitude: 50.05, longitude: 7.05)
        let truth = incidents.map { (id: $0.id, d: Geodesic.distance(from: center, to: $0.position!)) }.sorted { ($0.d, $0.id) < ($1.d, $1.id) }
        #expect(try engine.nearest(to: center, limit: 10).map(\.distance!) == truth.prefix(10).map(\.d))
    }
}
