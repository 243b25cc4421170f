import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoRoadTitles
@testable import TrafficGeoSQLite

@Suite("Locating incidents from their words")
struct IncidentLocatorTests {
    @Test func threeKrombachsAndTheRightOneWins() async throws {
        let server = try LoopbackHTTPServer { request, _ in .json(GeocoderFixtures.nominatimJSONv2(q: request.query["q"] ?? "")) }
        defer { server.shutdown() }
        let service = GeocodingService(providers: [try NominatimProvider(baseURL: server.baseURL)])
        let locator = IncidentLocator(service: service)
        let found = try #require(try await locator.locate(
            title: "A4 : Krombach - Wenden",
            text: "A4: Olpe -> Köln, zwischen 0.2 km hinter AS Krombach und 0.5 km vor AS Wenden Stockender Verkehr"))
        #expect(found.precision == .junction)
        let krombachJunction = Coordinate(latitude: 50.9949, longitude: 7.9650), wenden = Coordinate(latitude: 50.9788, longitude: 7.9046)
        // 0.2 km from the A4's Krombach towards Wenden.
        #expect(abs(Geodesic.distance(from: krombachJunction, to: found.position) - 200) < 1)
        let d1 = Geodesic.distance(from: found.position, to: wenden)
        #expect(abs(d1 - (Geodesic.distance(from: krombachJunction, to: wenden) - 200)) < 1)
        #expect(found.segment?.count == 2)
        #expect(abs(Geodesic.distance(from: found.segment![1], to: wenden) - 500) < 1)
        #expect(found.confidence > 0.8)
        #expect(found.queries.contains("junction:Krombach"))
    }

    @Test func theReferenceEntryWithTheGazetteer() async throws {
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())])
        let found = try #require(try await IncidentLocator(service: service).locate(
            title: "A4 : Koeln - Olpe",
            text: "Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen!"))
        // The gazetteer has Wenden (the municipality by the A4) but not the A4's Krombach: the far Krombachs are refused.
        #expect(found.precision == .town)
        #expect(Geodesic.distance(from: found.position, to: Coordinate(latitude: 50.9788, longitude: 7.9046)) < 5000)
    }

    @Test func singleJunctionWithOffsetBackTowardsWhereTrafficComesFrom() async throws {
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())])
        let message = TrafficMessageParser.parse(title: "A45 : Olpe - Olpe", text: "A45: Dortmund -> Gießen, 3.0 km vor AS Olpe, aus Richtung Meinerzhagen Stau")
        #expect(message.from?.relation == .before && message.comingFrom == "Meinerzhagen")
        let found = try #require(try await IncidentLocator(service: service).locate(message))
        let olpe = Coordinate(latitude: 51.02899, longitude: 7.85139), meinerzhagen = try #require(try Gazetteer.shared().lookup("Meinerzhagen").first).coordinate
        #expect(abs(Geodesic.distance(from: olpe, to: found.position) - 3000) < 1)
        #expect(Geodesic.distance(from: found.position, to: meinerzhagen) < Geodesic.distance(from: olpe, to: meinerzhagen))
    }

    @Test func onlyRouteEndsGiveARoadPrecisionGuess() async throws {
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())])
        let found = try #require(try await IncidentLocator(service: service).locate(title: "A4 : Koeln - Olpe", text: "Stau"))
        #expect(found.precision == .road && found.confidence < 0.3)
        #expect(try await IncidentLocator(service: service).locate(title: "Baustelle", text: "km 9.14 --> km 0.43") == nil)
    }

    @Test func ingestThenGeocodePendingIsResumableAndKeepsPositions() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>1</id><title>A4 : Koeln - Olpe</title><summary>Zwischen AS Wenden und AS Krombach Stau</summary></entry>
            <entry><id>2</id><title>A45 : Olpe - Olpe</title><summary>A45: Dortmund -> Gießen, 3.0 km vor AS Olpe, aus Richtung Meinerzhagen</summary></entry>
            <entry><id>3</id><title>Baustelle</title><summary>km 9.14 --> km 0.43</summary></entry>
            </feed>
            """
        let url = try TestSupport.write(feed, name: "f.xml", in: folder)
        let summary = try await FeedIngestor(store: store, sourceName: "f").ingest(url.path)
        #expect(summary.withoutPosition == 3)
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())], cache: store)
        let runner = PendingGeocoder(store: store, locator: IncidentLocator(service: service))
        let first = try await runner.run(limit: 1)
        #expect(first.total == 1 && first.foundTotal == 1)
        let rest = try await runner.run()
        #expect(rest.total == 2 && rest.foundTotal == 1 && rest.notFound == 1)
        #expect(try await runner.run().total == 0)   // nothing left; not-found is not retried
        #expect(try await runner.run(retryNotFound: true).total == 1)
        let located = try await store.allIncidents().filter { $0.incident.position != nil }
        #expect(located.count == 2 && located.allSatisfy { $0.incident.positionSource?.kind == .geocoder })
        await #expect(try store.checkIntegrity().isEmpty)
        // Re-reading the same feed keeps the geocoded positions and changes nothing.
        let again = try await FeedIngestor(store: store, sourceName: "f").ingest(url.path)
        #expect(again.unchanged == 3 && again.updated == 0)
        await #expect(try store.allIncidents().filter { $0.incident.position != nil }.count == 2)
    }

    static let nominatimBase = ProcessInfo.processInfo.environment["NOMINATIM_URL"] ?? "http://127.0.0.1:8088"

    @Test(.enabled("no Nominatim answers at $NOMINATIM_URL or 127.0.0.1:8088 (start ../shared/tools/nominatim/setup.sh)") {
        guard let url = URL(string: Self.nominatimBase) else { return false }
        return await Self.nominatimAnswers(url)
    })
    func realNominatimGeocodesFeedEntries() async throws {
        let url = try #require(URL(string: Self.nominatimBase))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>a5</id><title>A5 : Dossenheim - Heidelberg</title>
              <summary>A5: Frankfurt -> Karlsruhe, zwischen 0.5 km hinter AS Dossenheim und 1.0 km vor AK Heidelberg Stau</summary></entry>
            <entry><id>a9</id><title>A9 : Bindlacher Berg - Bayreuth-Nord</title>
              <summary>A9: Berlin -> Nürnberg, 1.2 km vor AS Bindlacher Berg, aus Richtung Bad Berneck/Himmelkron Stau</summary></entry>
            </feed>
            """
        let feedURL = try TestSupport.write(feed, name: "f.xml", in: folder)
        _ = try await FeedIngestor(store: store, sourceName: "f").ingest(feedURL.path)
        let service = GeocodingService(providers: [try NominatimProvider(baseURL: url), GazetteerProvider(gazetteer: try Gazetteer.shared())], cache: store)
        let run = try await PendingGeocoder(store: store, locator: IncidentLocator(service: service)).run()
        #expect(run.foundTotal == 2)
        let byID = await Dictionary(uniqueKeysWithValues: try store.allIncidents().map { ($0.incident.id, $0.incident) })
        let dossenheim = Coordinate(latitude: 49.4491047, longitude: 8.6462486)
        let a5 = try #require(byID["a5"]?.position)
        #expect(byID["a5"]?.positionSource?.precision == .junction)
        #expect(abs(Geodesic.distance(from: dossenheim, to: a5) - 500) < 5)
        let bindlach = Coordinate(latitude: 50.0155517, longitude: 11.6057464)
        let a9 = try #require(byID["a9"]?.position)
        #expect(Geodesic.distance(from: bindlach, to: a9) < 1300)
    }

    /// Whether a Nominatim answers there (one quick search, no retries).
    static func nominatimAnswers(_ url: URL) async -> Bool {
        var policy = RequestPolicy.selfHosted
        policy.timeout = 2
        policy.maxRetries = 0
        guard let probe = try? NominatimProvider(baseURL: url, policy: policy) else { return false }
        return (try? await probe.search(GeocodeQuery("Dossenheim", limit: 1))) != nil
    }
}
