import Foundation
import GRDB
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoSQLite

/// A feed's source name comes from the feed itself, so the same feed read twice is one source
/// (issue 15, point 2), and stores named the old way (absolute paths) are taken over without copies.
@Suite("Feed identity")
struct FeedIdentityTests {
    let folder = TestSupport.temporaryDirectory()

    func sourceName(_ text: String, name: String = "feed") throws -> String {
        let url = try TestSupport.write(text, name: name, in: folder)
        let input = FeedInput(localFile: url.path)
        return FeedIdentity.sourceName(of: input, format: try FeedReading.format(of: input, forced: nil))
    }

    @Test func feedsNameThemselves() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // Atom: <id> first, else the self link; an entry's id or link is not the feed's.
        #expect(try sourceName("<feed xmlns=\"http://www.w3.org/2005/Atom\"><link rel=\"self\" href=\"http://a/self\"/><id> urn:feed:1 </id><entry><id>e</id></entry></feed>") == "urn:feed:1")
        #expect(try sourceName("<feed xmlns=\"http://www.w3.org/2005/Atom\"><author><name>x</name></author><link rel=\"self\" href=\"http://a/self\"/><entry><id>e</id></entry></feed>") == "http://a/self")
        #expect(try sourceName("<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><id>e</id><link rel=\"self\" href=\"http://e\"/></entry><id>late</id></feed>", name: "late.xml") == "late.xml")
        // RSS: the channel's link, not the image's; an atom:link in RSS is not the channel link.
        #expect(try sourceName("<rss version=\"2.0\"><channel><image><link>http://img</link></image><atom:link xmlns:atom=\"http://www.w3.org/2005/Atom\" href=\"http://self\" rel=\"self\"/><link>http://channel/</link><item><link>http://item</link></item></channel></rss>") == "http://channel/")
        #expect(try sourceName("<rss version=\"2.0\"><channel><item><link>http://item</link></item><link>http://late</link></channel></rss>", name: "plain.rss") == "plain.rss")
        // The Autobahn API's identifiers are unique across the API: one source for all of it.
        #expect(try sourceName(#"{"warning":[]}"#, name: "a1.json") == FeedIdentity.autobahnAPI)
        // Others: the file name without its folder.
        #expect(try sourceName(#"{"type":"FeatureCollection","features":[]}"#, name: "x.geojson") == "x.geojson")
        #expect(FeedIdentity.sourceName(forLocation: "/some/where/roads.csv") == "roads.csv")
        #expect(FeedIdentity.sourceName(forLocation: "-") == "stdin")
        #expect(FeedIdentity.sourceName(forLocation: "https://host/feed.xml") == "https://host/feed.xml")
    }

    @Test func theSameFeedFromTwoFilesIsOneSource() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let feed = IncidentStoreTests.feed([("a", "A1 : X", 50.0, 7.0), ("b", "A2 : Y", 51.0, 8.0)])
            .replacingOccurrences(of: "<feed xmlns=\"http://www.w3.org/2005/Atom\">", with: "<feed xmlns=\"http://www.w3.org/2005/Atom\"><id>urn:test</id>")
        for name in ["monday.xml", "tuesday.xml"] {
            let url = try TestSupport.write(feed, name: name, in: folder)
            _ = try FeedIngestor(store: store).ingest(FeedInput(localFile: url.path))
        }
        let all = try store.allIncidents()
        #expect(all.count == 2)
        #expect(Set(all.map(\.incident.source)) == ["urn:test"])
    }

    /// A store as trafficgeo 0.1 wrote it: schema v5, sources named by absolute path, CSV row ids
    /// with the path in them.
    func makeOldStore(at path: String, feedPath: String, csvPath: String) throws {
        let queue = try DatabaseQueue(path: path)
        try StoreSchema.migrator.migrate(queue, upTo: "v5: junction knowledge")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO sources (id, name) VALUES (1, ?), (2, ?)", arguments: [feedPath, csvPath])
            for (id, source, external, title) in [(1, 1, "a", "A1 : X"), (2, 1, "old-only", "A9 : gone"), (3, 2, "\(csvPath)#row1", "A3 : Z")] {
                try db.execute(sql: """
                    INSERT INTO incidents (id, source_id, external_id, title, content_hash, first_seen, latitude, longitude)
                    VALUES (?, ?, ?, ?, 0, 1000, NULL, NULL)
                    """, arguments: [id, source, external, title])
            }
        }
    }

    @Test func anOldStoreIsTakenOverWithoutCopiesOrLosses() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let feedURL = try TestSupport.write(IncidentStoreTests.feed([("a", "A1 : X", 50.0, 7.0), ("b", "A2 : Y", 51.0, 8.0)])
            .replacingOccurrences(of: "<feed xmlns=\"http://www.w3.org/2005/Atom\">", with: "<feed xmlns=\"http://www.w3.org/2005/Atom\"><id>urn:test</id>"),
            name: "feed.xml", in: folder)
        let csvURL = try TestSupport.write("title,lat,lon\nA3 : Z,50,7\n", name: "roads.csv", in: folder)
        let path = folder.appendingPathComponent("old.sqlite").path
        try makeOldStore(at: path, feedPath: feedURL.standardizedFileURL.path, csvPath: csvURL.standardizedFileURL.path)

        let store = try SQLiteIncidentStore(path: path)
        // Opening migrates: no absolute paths are left in names or ids.
        #expect(Set(try store.allIncidents().map(\.incident.source)) == ["feed.xml", "roads.csv"])
        #expect(try store.allIncidents().contains { $0.incident.id == "row1" })

        // Re-reading the feed adopts its old source; the incident only the old store had stays.
        let s1 = try FeedIngestor(store: store).ingest(FeedInput(localFile: feedURL.path))
        #expect((s1.source, s1.new, s1.unchanged + s1.updated) == ("urn:test", 1, 1))
        let s2 = try FeedIngestor(store: store).ingest(FeedInput(localFile: csvURL.path))
        #expect((s2.source, s2.new, s2.updated) == ("roads.csv", 0, 1))
        let all = try store.allIncidents()
        #expect(all.map(\.incident.id).sorted() == ["a", "b", "old-only", "row1"])
        #expect(Set(all.map(\.incident.source)) == ["urn:test", "roads.csv"])
        let problems = try store.checkIntegrity()
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aCurrentSourceOfTheSameFileNameIsNotTakenOver() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        // Two different feeds that share a file name: the second names itself, and the first's
        // source was named by this version (not renamed by the migration), so it is not adopted.
        let one = folder.appendingPathComponent("one"), two = folder.appendingPathComponent("two")
        try FileManager.default.createDirectory(at: one, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: two, withIntermediateDirectories: true)
        let csv = try TestSupport.write("id,title,lat,lon\nc1,A3 : Z,50,7\n", name: "feed.xml", in: one)
        _ = try FeedIngestor(store: store, format: .csv).ingest(FeedInput(localFile: csv.path))
        let atom = try TestSupport.write(IncidentStoreTests.feed([("a", "A1 : X", 50.0, 7.0)])
            .replacingOccurrences(of: "<feed xmlns=\"http://www.w3.org/2005/Atom\">", with: "<feed xmlns=\"http://www.w3.org/2005/Atom\"><id>urn:other</id>"),
            name: "feed.xml", in: two)
        _ = try FeedIngestor(store: store).ingest(FeedInput(localFile: atom.path))
        let sources = Dictionary(grouping: try store.allIncidents(), by: \.incident.source).mapValues { $0.map(\.incident.id) }
        #expect(sources == ["feed.xml": ["c1"], "urn:other": ["a"]])
    }

    @Test func mergingKeepsTheCopyChangedLast() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        try store.write { db in
            try db.execute(sql: "INSERT INTO sources (id, name) VALUES (1, 'old'), (2, 'new')")
            try db.execute(sql: """
                INSERT INTO incidents (id, source_id, external_id, title, content_hash, first_seen, last_changed) VALUES
                (1, 1, 'x', 'old newer', 0, 1000, 3000), (2, 2, 'x', 'new older', 0, 2000, NULL),
                (3, 1, 'y', 'old older', 0, 1000, NULL), (4, 2, 'y', 'new newer', 0, 2000, NULL), (5, 1, 'z', 'only old', 0, 1000, NULL)
                """)
            try SourceNames.rename(db, id: 1, to: "new")
        }
        let titles = try store.allIncidents().map { "\($0.incident.source):\($0.incident.id):\($0.incident.title)" }
        #expect(titles == ["new:x:old newer", "new:y:new newer", "new:z:only old"])
    }
}
