import Foundation
import Testing
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSupport

/// Every provider against a real HTTP server on loopback serving its protocol.
@Suite("Geocoder protocols on loopback")
struct GeocoderProtocolTests {
    @Test func nominatimJSONv2() async throws {
        let server = try LoopbackHTTPServer { request, _ in .json(GeocoderFixtures.nominatimJSONv2(q: request.query["q"] ?? "")) }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL)
        let answer = try await provider.search(GeocodeQuery("Krombach", purpose: .junction, countryCodes: ["DE"]))
        #expect(answer.candidates.count == 3)
        #expect(answer.candidates[0].kind == .junction)
        #expect(answer.candidates[0].coordinate == Coordinate(latitude: 50.9949, longitude: 7.9650))
        #expect(answer.candidates[1].kind == .town)
        #expect(answer.attribution == GeocoderFixtures.nominatimLicence)
        let sent = try #require(server.requests.first)
        #expect(sent.path == "/search")
        #expect(sent.query["format"] == "jsonv2" && sent.query["countrycodes"] == "de" && sent.query["layer"] == "poi")
        #expect(sent.headers["user-agent"] == UserAgent.default)
        let none = try await provider.search(GeocodeQuery("Nirgendwo"))
        #expect(none.candidates.isEmpty)
    }

    @Test func nominatimGeoJSONAndReverse() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            request.path == "/reverse" ? .json(GeocoderFixtures.nominatimReverse) : .json(GeocoderFixtures.nominatimGeoJSON)
        }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, format: .geojson)
        let answer = try await provider.search(GeocodeQuery("Kreuz Heidelberg"))
        #expect(answer.candidates.first?.coordinate == Coordinate(latitude: 49.4245444, longitude: 8.634186))
        #expect(answer.candidates.first?.kind == .junction)
        #expect(server.requests[0].query["format"] == "geojson")
        let address = try await provider.reverse(Coordinate(latitude: 49.41, longitude: 8.69))
        #expect(address.road == "Voßstraße" && address.postcode == "69115" && address.locality == "Heidelberg" && address.countryCode == "de")
        #expect(server.requests[1].query["lat"] == "49.41" && server.requests[1].query["addressdetails"] == "1")
    }

    @Test func photonFiltersCountriesAndTagsJunctions() async throws {
        let server = try LoopbackHTTPServer { _, _ in .json(GeocoderFixtures.photon) }
        defer { server.shutdown() }
        let provider = try PhotonProvider(baseURL: server.baseURL)
        let answer = try await provider.search(GeocodeQuery("Krombach", purpose: .junction, countryCodes: ["de"]))
        #expect(answer.candidates.count == 2)  // the Luxembourg one is dropped
        #expect(answer.candidates[0].kind == .junction && answer.candidates[0].osmTag == "highway/motorway_junction")
        #expect(server.requests[0].path == "/api" && server.requests[0].query["osm_tag"] == "highway:motorway_junction")
    }

    @Test func peliasKeepsConfidenceAndAttribution() async throws {
        let server = try LoopbackHTTPServer { _, _ in .json(GeocoderFixtures.pelias) }
        defer { server.shutdown() }
        let provider = try PeliasProvider(baseURL: server.baseURL, apiKey: "secret-key")
        let answer = try await provider.search(GeocodeQuery("Wenden", purpose: .place, countryCodes: ["de"]))
        #expect(answer.candidates.first?.score == 1)
        #expect(answer.candidates.first?.kind == .town)
        #expect(answer.attribution == "https://geocode.example/attribution")
        let sent = server.requests[0]
        #expect(sent.path == "/v1/search" && sent.query["text"] == "Wenden" && sent.query["boundary.country"] == "DE")
        #expect(sent.query["api_key"] == "secret-key")
        #expect(!provider.cacheIdentity.contains("secret"))
    }

    @Test func legacyCSVEncodesTheQueryAsOneComponent() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            switch request.query["q"] {
            case "Times Square & 42nd St, New York": return .text("200,4,40.7590110,-73.9844722")
            case "nowhere": return .text("602,0,0,0")
            default: return .text("500,0,0,0")
            }
        }
        defer { server.shutdown() }
        var policy = RequestPolicy.selfHosted
        policy.maxRetries = 0
        let provider = try LegacyCSVProvider(baseURL: server.baseURL, policy: policy)
        let answer = try await provider.search(GeocodeQuery("Times Square & 42nd St, New York"))
        #expect(answer.candidates.first?.coordinate == Coordinate(latitude: 40.7590110, longitude: -73.9844722))
        #expect(server.requests[0].rawQuery.contains("q=Times%20Square%20%26%2042nd%20St%2C%20New%20York"))
        #expect(server.requests[0].query["output"] == "csv")
        #expect(try await provider.search(GeocodeQuery("nowhere")).candidates.isEmpty)
        await #expect(throws: GeocodingError.self) { try await provider.search(GeocodeQuery("boom")) }
        await #expect(throws: GeocodingError.self) { try await provider.reverse(Coordinate(latitude: 0, longitude: 0)) }
    }

    /// The world's towns answer the places a person types (an English, an American, a French
    /// desk), offline; a traffic message's place names (`.place`, `.junction`) never reach them,
    /// so a German route end is not placed at a namesake abroad.
    @Test func theWorldsTownsAnswerTypedPlacesOnly() async throws {
        let provider = GazetteerProvider(gazetteer: try Gazetteer.shared())
        #expect(provider.world() != nil, "data/gazetteer/world.tsv is built by scripts/build-gazetteer.py")
        for (name, country, lat, lon) in [("London", "gb", 51.51, -0.13), ("Denver", "us", 39.74, -104.98), ("Lyon", "fr", 45.75, 4.85),
                                          ("Manchester", "gb", 53.48, -2.24), ("Rome", "it", 41.89, 12.48)] {
            let answer = try await provider.search(GeocodeQuery(name))
            let best = try #require(answer.candidates.first, "\(name)")
            #expect(best.countryCode == country && Geodesic.distance(from: best.coordinate, to: Coordinate(latitude: lat, longitude: lon)) < 10_000,
                    "\(name): \(best.displayName ?? "") at \(best.coordinate)")
        }
        #expect(try await provider.search(GeocodeQuery("Denver", purpose: .place)).candidates.isEmpty)
        #expect(try await provider.search(GeocodeQuery("Köln")).candidates.first?.countryCode == "de")
        let far = try await provider.reverse(Coordinate(latitude: 39.70, longitude: -104.95))
        #expect(far.locality == "Denver" && far.countryCode == "us")
    }

    @Test func gazetteerFindsSpellingsAndVariants() async throws {
        let gazetteer = try Gazetteer.shared()
        let provider = GazetteerProvider(gazetteer: gazetteer)
        let cologne = try await provider.search(GeocodeQuery("Koeln", countryCodes: ["de"]))
        #expect(cologne.candidates.first?.name == "Köln" || cologne.candidates.first?.name == "Cologne")
        #expect(Geodesic.distance(from: cologne.candidates[0].coordinate, to: Coordinate(latitude: 50.94, longitude: 6.96)) < 5000)
        let part = try await provider.search(GeocodeQuery("Ratingen-Ost", countryCodes: ["de"]))
        #expect(part.candidates.first?.name == "Ratingen")
        let arnhem = try await provider.search(GeocodeQuery("Arnheim"))
        #expect(arnhem.candidates.first?.countryCode == "nl")
        let reverse = try await provider.reverse(Coordinate(latitude: 50.967, longitude: 7.867))
        #expect(reverse.locality == "Wenden")
    }
}
