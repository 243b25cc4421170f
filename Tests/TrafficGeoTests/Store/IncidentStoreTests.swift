import Foundation
import GRDB
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSQLite
import TrafficGeoStore
import TrafficGeoTestSupport
import TrafficGeoPROJ

@Suite("SQLite store with the geocentric block index")
struct IncidentStoreTests {
    static func feed(_ entries: [(id: String, title: String, lat: Double?, lon: Double?)]) -> String {
        var text = "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n"
        for e in entries {
            var link = "http://x/?id=\(e.id)"
            if let lat = e.lat, let lon = e.lon { link += "&amp;lat=\(lat)&amp;lon=\(lon)" }
            text += "<entry><id>\(e.id)</id><title>\(e.title)</title><link href=\"\(link)\"/><updated>2025-05-19T04:00:00Z</updated></entry>\n"
        }
        return text + "</feed>\n"
    }

    @Test func ingestIsIdempotentAndUpdatesInPlace() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let ingestor = FeedIngestor(store: store, sourceName: "feed")
        let first = try TestSupport.write(Self.feed([("a", "A1 : X", 50.0, 7.0), ("b", "A2 : Y", 51.0, 8.0), ("c", "A3 : Z", nil, nil)]), name: "f1.xml", in: folder)
        let s1 = try ingestor.ingest(FeedInput(localFile: first.path))
        #expect((s1.read, s1.new, s1.updated, s1.unchanged, s1.withoutPosition) == (3, 3, 0, 0, 1))
        let s2 = try ingestor.ingest(FeedInput(localFile: first.path))
        #expect((s2.new, s2.updated, s2.unchanged) == (0, 0, 3))
        // b moves and changes its title; c gets a position; a stays.
        let second = try TestSupport.write(Self.feed([("a", "A1 : X", 50.0, 7.0), ("b", "A2 : Y2", 52.0, 9.0), ("c", "A3 : Z", 49.0, 6.0)]), name: "f2.xml", in: folder)
        let s3 = try ingestor.ingest(FeedInput(localFile: second.path))
        #expect((s3.new, s3.updated, s3.unchanged) == (0, 2, 1))
        let all = try store.allIncidents()
        #expect(all.count == 3)
        #expect(all.first { $0.incident.id == "b" }?.incident.position == Coordinate(latitude: 52, longitude: 9))
        #expect(try store.checkIntegrity().isEmpty)
        try assertIndexMatchesTable(store)
    }

    @Test func indexFindsEveryLocatedIncidentOnce() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        var entries: [(id: String, title: String, lat: Double?, lon: Double?)] = []
        var generator = SplitMix64(seed: 7)
        for i in 0..<500 {
            let located = i % 10 != 0
            entries.append(("e\(i)", "A\(i % 9 + 1) : X", located ? Double.random(in: -90...90, using: &generator) : nil,
                            located ? Double.random(in: -180...180, using: &generator) : nil))
        }
        let url = try TestSupport.write(Self.feed(entries), name: "f.xml", in: folder)
        _ = try FeedIngestor(store: store).ingest(FeedInput(localFile: url.path))
        try assertIndexMatchesTable(store)
        #expect(try store.pruneExpired(before: Date()) == 0)
        #expect(try store.read { db in try String.fetchOne(db, sql: "SELECT value FROM store_info WHERE key='index_crs'") } == "EPSG:4978")
    }

    @Test func pruneRemovesExpiredIncidentsAndTheirIndexEntries() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>old</id><expires>2020-01-01T00:00:00Z</expires><link href="http://x/?lat=50&amp;lon=7"/></entry>
            <entry><id>new</id><expires>2999-01-01T00:00:00Z</expires><link href="http://x/?lat=51&amp;lon=7"/></entry>
            <entry><id>open</id><link href="http://x/?lat=52&amp;lon=7"/></entry>
            </feed>
            """
        let url = try TestSupport.write(feed, name: "f.xml", in: folder)
        _ = try FeedIngestor(store: store).ingest(FeedInput(localFile: url.path))
        #expect(try store.pruneExpired() == 1)
        #expect(try store.allIncidents().map(\.incident.id).sorted() == ["new", "open"])
        try assertIndexMatchesTable(store)
    }

    @Test func readOnlyMissingDatabaseSaysWhatToDo() {
        do {
            _ = try SQLiteIncidentStore(path: "/nonexistent-folder/x.sqlite", readOnly: true)
            Issue.record("expected an error")
        } catch {
            // What makes one, in the library's words (the command line names its command).
            #expect("\(error)".contains("no such database (an ingest into it makes it)"))
            #expect((error as? StoreError)?.kind == .missing)
        }
    }

    /// Every located incident is found through exactly one index entry (a block covering its
    /// id whose box holds it, or its own entry), whose box holds its PROJ-projected position;
    /// no entry serves an incident without a position.
    func assertIndexMatchesTable(_ store: SQLiteIncidentStore) throws {
        let projector = try Projector(target: "EPSG:4978")
        try store.read { db in
            let entries = try Row.fetchAll(db, sql: "SELECT id, min_x, max_x, min_y, max_y, min_z, max_z FROM incident_blocks").map { row in
                let id: Int64 = row[0]
                let (first, last) = BlockIndex.range(ofEntry: id)
                let range = first...last
                return (id: id, range: range, box: BlockIndex.Box(minX: row[1], maxX: row[2], minY: row[3], maxY: row[4], minZ: row[5], maxZ: row[6]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, latitude, longitude FROM incidents") {
                let id: Int64 = row[0]
                guard let lat = row[1] as Double?, let lon = row[2] as Double? else {
                    #expect(!entries.contains { $0.id == -id }, "incident \(id) has no position but an entry")
                    continue
                }
                let p = GeocentricPoint(Coordinate(latitude: lat, longitude: lon))
                let proj = try projector.forward(Coordinate(latitude: lat, longitude: lon))
                let owners = entries.filter { $0.range.contains(id) && BlockIndex.owns(entryID: $0.id, box: $0.box, p) }
                #expect(owners.count == 1, "incident \(id): \(owners.count) entries")
                for o in owners {
                    #expect(o.box.minX - 1e-6 <= proj.x && proj.x <= o.box.maxX + 1e-6)
                    #expect(o.box.minY - 1e-6 <= proj.y && proj.y <= o.box.maxY + 1e-6)
                    #expect(o.box.minZ - 1e-6 <= proj.z && proj.z <= o.box.maxZ + 1e-6)
                }
            }
        }
    }
}
