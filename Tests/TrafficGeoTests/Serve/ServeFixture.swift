import AsyncHTTPClient
import Foundation
@testable import TrafficGeo
import Logging
import NIOCore
import NIOHTTP1
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoSQLite
@testable import TrafficGeoServe
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

/// A store of known incidents served by `IncidentServer` on a loopback port of its own, and a
/// client that asks it like any HTTP client.
final class ServeFixture: Sendable {
    let folder: URL
    /// The store's file or URL.
    let location: String
    let writer: any IncidentStore
    private let cleanup: @Sendable () -> Void
    let port: Int
    /// When the incidents were ingested; their times count from it.
    let now: Date
    private let server: Task<Void, any Error>
    private let stopper = StopRequest()

    /// Köln: 40 incidents on a grid, on A1/A3/A4 (a third each), with categories; three at the
    /// antimeridian and one at 0° for the bbox across 180°; one without a position; one ended.
    static func incidents(now: Date) -> [Incident] {
        var out: [Incident] = []
        let roads = ["A1", "A3", "A4"]
        let categories: [IncidentCategory] = [.accident, .roadworks, .queue, .closure]
        for i in 0..<40 {
            let lat = 50.85 + Double(i / 8) * 0.04, lon = 6.85 + Double(i % 8) * 0.04
            out.append(Incident(source: "desk", id: "k\(i)", title: "\(roads[i % 3]) : Köln - Olpe \(i)", summary: "Stau \(i)",
                                updated: now.addingTimeInterval(-Double(i) * 60), expires: now.addingTimeInterval(3600),
                                road: roads[i % 3], category: categories[i % 4], position: Coordinate(latitude: lat, longitude: lon),
                                positionSource: PositionSource(kind: .feed)))
        }
        for (id, lon) in [("east", 179.8), ("west", -179.7), ("fiji", 178.4), ("greenwich", 0.0)] {
            out.append(Incident(source: "desk", id: id, title: "Pacific \(id)", updated: now, road: "A9", category: .weather,
                                position: Coordinate(latitude: -17.0, longitude: lon), positionSource: PositionSource(kind: .feed)))
        }
        out.append(Incident(source: "desk", id: "nowhere", title: "A4 : somewhere", updated: now, road: "A4"))
        out.append(Incident(source: "desk", id: "gone", title: "A4 : Köln - Aachen, ended", updated: now, road: "A4", category: .accident,
                            position: Coordinate(latitude: 50.93, longitude: 6.95), positionSource: PositionSource(kind: .feed)))
        return out
    }

    init(configuration: ServeConfiguration = ServeConfiguration(), backend: StoreBackend = .sqlite) async throws {
        folder = TestSupport.temporaryDirectory()
        let reader: any IncidentStore
        switch backend {
        case .sqlite:
            location = folder.appendingPathComponent("serve.sqlite").path
            writer = try SQLiteIncidentStore(path: location)
            reader = try SQLiteIncidentStore(path: location, readOnly: true)
            cleanup = {}
        case .postgis:
            let url = try PostgresTestServer.makeDatabase()
            location = url
            writer = try await StoreOpening.open(url)
            reader = try await StoreOpening.open(url, readOnly: true)
            cleanup = { PostgresTestServer.dropDatabase(url) }
        }
        let now = Date()
        self.now = now
        let all = Self.incidents(now: now)
        _ = try await writer.ingest(source: "desk", snapshot: .wholeSource, now: now) { emit in for i in all { try emit(.incident(i)) } }
        // "gone" is no longer listed: it ends.
        _ = try await writer.ingest(source: "desk", snapshot: .wholeSource, now: now) { emit in
            for i in all where i.id != "gone" { try emit(.incident(i)) }
        }
        var configuration = configuration
        configuration.port = 0
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        // The access log and the server's own messages would drown the test output.
        var logger = Logger(label: "trafficgeo.serve.test")
        logger.logLevel = .critical
        let server = IncidentServer(store: reader, configuration: configuration, logger: logger)
        let stopper = self.stopper
        self.server = Task { try await server.run(until: stopper) { port in continuation.yield(port) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ServeFixtureError.didNotStart }
        self.port = port
    }

    enum ServeFixtureError: Error { case didNotStart }

    /// Runs `body` against a fresh fixture and stops it afterwards, whether `body` throws or not.
    static func serving(backend: StoreBackend = .sqlite, configuration: ServeConfiguration = ServeConfiguration(),
                        _ body: (ServeFixture) async throws -> Void) async throws {
        let f = try await ServeFixture(configuration: configuration, backend: backend)
        do {
            try await body(f)
        } catch {
            await f.stop()
            throw error
        }
        await f.stop()
    }

    /// Stops the server gracefully, as SIGTERM does.
    func stop() async {
        stopper.request()
        _ = await server.result
        try? FileManager.default.removeItem(at: folder)
        cleanup()
    }

    var base: String { "http://127.0.0.1:\(port)" }

    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
        var features: [[String: Any]] { json["features"] as? [[String: Any]] ?? [] }
        var ids: [Int] { features.compactMap { $0["id"] as? Int } }
        var contentType: String { headers.first(name: "content-type") ?? "" }
        func link(_ rel: String) -> String? {
            (json["links"] as? [[String: Any]])?.first { $0["rel"] as? String == rel }?["href"] as? String
        }
    }

    /// GET (or another method) of a path or a full URL.
    func get(_ target: String, headers: [(String, String)] = [], method: HTTPMethod = .GET) async throws -> Answer {
        var request = HTTPClientRequest(url: target.hasPrefix("http") ? target : base + target)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(90))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: body))
    }
}
