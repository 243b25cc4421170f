import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoSQLite
@testable import TrafficGeoSupport

@Suite("Feeds from URLs and limits")
struct FeedInputTests {
    @Test func ingestFromAnHTTPURL() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            switch request.path {
            case "/lmst.de_DE.xml": return .respond(status: 200, headers: [("Content-Type", "application/atom+xml")], body: AtomReaderTests.seedFeed)
            default: return .text("not here", status: 404)
            }
        }
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let url = "\(server.baseURL.absoluteString)/lmst.de_DE.xml"
        let summary = try await FeedIngestor(store: store).ingest(url)
        // The feed names itself (its self link): that, not the URL it came from, is its source.
        #expect(summary.new == 1 && summary.source == "http://www.freiefahrt.info/lmst.de_DE.xml" && summary.format == .atom)
        #expect(server.requests[0].headers["user-agent"] == UserAgent.default)
        await #expect(throws: FeedError.httpStatus("\(server.baseURL.absoluteString)/missing.xml", status: 404)) {
            _ = try await FeedIngestor(store: store).ingest("\(server.baseURL.absoluteString)/missing.xml")
        }
        // A download larger than the limit is refused, and nothing is stored.
        var limited = FeedIngestor(store: store, sourceName: "limited")
        limited.maxFeedBytes = 100
        await #expect(throws: FeedError.self) { _ = try await limited.ingest(url) }
        await #expect(try store.allIncidents().count == 1)
        // Nothing listens here: a clear download error.
        await #expect(throws: FeedError.self) { _ = try await FeedIngestor(store: store).ingest("http://127.0.0.1:9/feed.xml") }
    }
}
