import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoServe
@testable import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoTestSupport

/// `serve` over the PostGIS store answers as over the SQLite file: the same incidents (by feed
/// id; store ids are each store's own), in the same order, with the same counts and distances,
/// and its event stream replays the change feed.
@Suite("serve over PostGIS answers as over the file", .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
struct ServeOnPostGISTests {
    /// The feed ids of an answer, with distances where given.
    static func answer(_ a: ServeFixture.Answer) -> [String] {
        a.features.map { feature in
            let properties = feature["properties"] as? [String: Any] ?? [:]
            let distance = (properties["distance_m"] as? Double).map { String(format: "@%.6f", $0) } ?? ""
            return (properties["id"] as? String ?? "?") + distance
        }
    }

    @Test func theSameQuestionsGetTheSameAnswers() async throws {
        let file = try await ServeFixture(backend: .sqlite)
        let server = try await ServeFixture(backend: .postgis)
        do {
            for query in ["limit=100", "limit=7&offset=14", "bbox=6.8,50.8,7.2,51.1&limit=100", "bbox=170,-20,-170,-10",
                          "lat=50.94&lon=6.96&nearest=5", "lat=50.94&lon=6.96&radius=5km&limit=1000", "lat=50.94&lon=6.96&limit=45",
                          "road=A4&limit=100", "q=koeln%2010&limit=100", "category=accident,closure&limit=100", "sortby=title&limit=100",
                          "datetime=../{now-570s}&limit=100", "lat=-17&lon=180&nearest=3"] {
                // Each fixture dates its incidents from its own ingest time (k_i is i minutes
                // old), so the time window is cut halfway between two of them in each store.
                func ask(_ fixture: ServeFixture) async throws -> ServeFixture.Answer {
                    let cut = TimestampParser.format(fixture.now.addingTimeInterval(-570))
                    return try await fixture.get("/collections/incidents/items?" + query.replacingOccurrences(of: "{now-570s}", with: cut))
                }
                let a = try await ask(file)
                let b = try await ask(server)
                #expect(a.status == 200 && b.status == 200, "\(query): \(b.body.prefix(300))")
                // In store order (no point, no sortby) the order is each store's own; and so are
                // the incidents on a page cut from it.
                let ordered = query.contains("lat=") || query.contains("sortby=")
                if query.contains("offset=") {
                    #expect(Self.answer(b).count == Self.answer(a).count, "\(query)")
                } else if ordered {
                    #expect(Self.answer(b) == Self.answer(a), "\(query)")
                } else {
                    #expect(Self.answer(b).sorted() == Self.answer(a).sorted(), "\(query)")
                }
                #expect(b.json["numberMatched"] as? Int == a.json["numberMatched"] as? Int, "\(query)")
            }
            // The event stream replays the change feed from the start: 46 new, then "gone" ended.
            let events = try await ServeLiveTests.events(server.base + "/collections/incidents/events", lastEventID: 0, seconds: 30) { events in
                events.contains { $0.kind == "ended" }
            }
            #expect(events.filter { $0.kind == "new" }.count == 46 && events.last?.kind == "ended")
            #expect(events.map(\.id) == Array(1...Int64(events.count)))
        } catch {
            await file.stop()
            await server.stop()
            throw error
        }
        await file.stop()
        await server.stop()
    }
}
