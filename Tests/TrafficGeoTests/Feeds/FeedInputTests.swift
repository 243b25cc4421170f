import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoHTTP
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
        // Nothing listens here: a clear download error, with the connection's error kept.
        let refused = await #expect(throws: FeedError.self) { _ = try await FeedIngestor(store: store).ingest("http://127.0.0.1:9/feed.xml") }
        #expect(refused?.code == .download && refused?.location == "http://127.0.0.1:9/feed.xml" && refused?.underlying != nil, "\(String(describing: refused))")
        #expect(refused?.description.contains("download failed") == true)
    }

    /// Errors are values: a kind to compare (`code`), fields, and a cause; equality ignores the
    /// cause, and a switch over the kinds needs a `default` (a kind added later breaks nothing).
    /// A file:// URL is its file; another scheme is named as one trafficgeo does not fetch
    /// (ftp:// was "no such file").
    @Test func fileURLsAreFilesAndOtherSchemesAreNamed() async throws {
        let folder = TestSupport.temporaryDirectory()
        let file = try TestSupport.write(AtomReaderTests.seedFeed, name: "seed.xml", in: folder)
        let input = try await FeedInput.open(file.absoluteString)
        #expect(input.location == file.path)
        #expect(try FeedReading.readAll(input).incidents.count == 1)
        // RFC 8089's other spellings of a local file: file:/path and file://localhost/path.
        for location in ["file:" + file.path, "file://localhost" + file.path] {
            #expect(try await FeedInput.open(location).location == file.path, "\(location)")
        }
        for location in ["ftp://example.org/feed.xml", "S3://bucket/feed.xml"] {
            let error = await #expect(throws: FeedError.self) { try await FeedInput.open(location) }
            #expect(error?.code == .unreadable && "\(error!)".contains("is not fetched"), "\(String(describing: error))")
        }
        let missing = await #expect(throws: FeedError.self) { try await FeedInput.open("file:///nonexistent/feed.xml") }
        #expect(missing?.code == .notFound)
        #expect(FeedInput.urlScheme(of: "data/feed.xml") == nil && FeedInput.urlScheme(of: "a b://x") == nil)
        // An http(s) URL the HTTP client would refuse in its own words, or stop the program on
        // (a port above 65535), is refused in ours first.
        for (location, words) in [("http://127.0.0.1:99999/feed.xml", "99999 is not a port"), ("http://127.0.0.1:65536/", "65536 is not a port"),
                                  ("http://", "names no host"), ("https:///feed.xml", "names no host")] {
            let error = await #expect(throws: FeedError.self) { try await FeedInput.open(location) }
            #expect(error?.code == .unreadable && "\(error!)".contains(words), "\(String(describing: error))")
        }
        #expect(HTTPLocation.problem("https://host:8443/feed.xml") == nil)
    }

    @Test func feedErrorsAreValuesWithAKindAndACause() {
        struct Cause: Error {}
        let a = FeedError.malformed("f.xml", format: .atom, reason: "bad tag", entriesRead: 3, underlying: Cause())
        let b = FeedError.malformed("f.xml", format: .atom, reason: "bad tag", entriesRead: 3)
        #expect(a == b && a.underlying is Cause && b.underlying == nil)
        #expect(a.code == .malformed && a.code != .download && a.entriesKept == 3 && a.format == .atom)
        #expect(a.description == "f.xml: not valid atom after 3 entries: bad tag")
        #expect(FeedError.tooManyEntries("f", format: .geojson, limit: 10).entriesKept == 10)
        #expect(FeedError.tooLarge("f", limit: 5).setting == .maxFeedBytes)
        // An HTTP status with what to do about it.
        #expect(FeedError.httpStatus("u", status: 404).description == "u: the server answered HTTP 404 (no such feed there: check the URL)")
        #expect(FeedError.httpStatus("u", status: 503).description.hasSuffix("(a failure on the server's side, not in the request)"))
        #expect(FeedError.httpStatus("u", status: 304).description == "u: the server answered HTTP 304")
        let kind: String = switch a.code {
        case .notFound, .unreadable: "input"
        case .malformed: "data"
        default: "other"
        }
        #expect(kind == "data")
        #expect(GeocodingError.timeout(provider: "p", seconds: 2).isRetryable && !GeocodingError.forbidden(provider: "p", detail: "").isRetryable)
        #expect(GeocodingError.unreachable(provider: "p", detail: "refused", underlying: Cause()) == .unreachable(provider: "p", detail: "refused"))
        #expect(GeocodingError.userAgentRequired(host: "h").stopsProvider && GeocodingError.userAgentRequired(host: "h").setting == .userAgent)
    }
}
