import Foundation
import Testing
@testable import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoTestSupport

/// A place a person types (issue 63): its country part is where it is looked for, without one a
/// place near the store's incidents comes first, and the others of the name are named.
@Suite struct TypedPlaceTests {
    let folder = TestSupport.temporaryDirectory()

    /// Gazetteers written here: a home one with nothing of these names, and a world one with
    /// namesakes on several continents (GeoNames-like rows; the populations are what decide).
    func service() throws -> (GeocodingService, CountryNames) {
        let header = "geonameid\tname\tcountry\tadmin1\tlatitude\tlongitude\tpopulation\talternatenames\n"
        let home = try TestSupport.write(header + "1\tKöln\tDE\t07\t50.93\t6.95\t1000000\tCologne\n", name: "places.tsv", in: folder)
        let world = try TestSupport.write(header + """
            2\tValencia\tVE\t07\t10.16\t-68.0\t1400000\t
            3\tValencia\tES\t60\t39.47\t-0.38\t800000\t
            4\tVictoria\tHK\t00\t22.28\t114.16\t1000000\t
            5\tVictoria\tCA\t02\t48.43\t-123.37\t90000\t
            6\tDenver\tUS\tCO\t39.74\t-104.98\t700000\t
            7\tLondon\tGB\tENG\t51.51\t-0.13\t8900000\t
            8\tLondon\tCA\t08\t42.98\t-81.23\t400000\t

            """, name: "world.tsv", in: folder)
        let countries = try TestSupport.write("""
            code\tnames
            ca\tCA|CAN|Canada|Kanada
            co\tCO|COL|Colombia|Kolumbien
            es\tES|ESP|Espagne|España|Spain|Spanien
            gb\tEngland|GB|GBR|UK|United Kingdom
            us\tUS|USA|United States|United States of America

            """, name: "countries.tsv", in: folder)
        let homeGazetteer = try Gazetteer(path: home.path), worldGazetteer = try Gazetteer(path: world.path)
        let provider = GazetteerProvider(gazetteer: homeGazetteer, world: { worldGazetteer })
        return (GeocodingService(providers: [provider]), try CountryNames(path: countries.path))
    }

    @Test func aCountryPartIsWhereThePlaceIsLookedFor() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, countries) = try service()
        for (text, country) in [("Valencia, Spain", "es"), ("Valencia, españa", "es"), ("Valencia, ES", "es"), ("London, UK", "gb"),
                                ("London, Canada", "ca"), ("Denver, USA", "us"), ("Victoria, Kanada", "ca")] {
            let typed = TypedPlace(text, countries: countries)
            #expect(!typed.countryCodes.isEmpty, Comment(rawValue: text))
            let choice = try #require(try await typed.find(with: service), Comment(rawValue: text))
            #expect(choice.taken.countryCode == country && !choice.countryIgnored, Comment(rawValue: "\(text): \(choice.taken)"))
        }
        // No country part: the larger one, and the other named with its distance.
        let plain = try #require(try await TypedPlace("Valencia", countries: countries).find(with: service))
        #expect(plain.taken.countryCode == "ve" && plain.others.map(\.place.countryCode) == ["es"] && plain.others[0].distance > 7_000_000)
        // A last part that is no country is left to the geocoder, and said when the answer does
        // not show it; the last part that is a country counts; empty parts are none.
        let texas = TypedPlace("Paris, Texas", countries: countries)
        #expect(texas.countryCodes.isEmpty && texas.unreadParts == ["Texas"] && texas.name == "Paris, Texas")
        let europe = TypedPlace("Valencia, Spain, Europe", countries: countries)
        #expect(europe.name == "Valencia" && europe.countryCodes == ["es"] && europe.unreadParts == ["Europe"])
        #expect(TypedPlace("Valencia,", countries: countries).name == "Valencia")
        let london = GeocodeCandidate(coordinate: Coordinate(latitude: 42.98, longitude: -81.23), name: "London", displayName: "London, Ontario, Canada", kind: .town)
        #expect(TypedPlace("London, Ontario", countries: countries).partsNotIn(london).isEmpty)
        #expect(texas.partsNotIn(london) == ["Texas"])
        let colorado = try #require(try await TypedPlace("Denver, CO", countries: countries).find(with: service))
        #expect(colorado.countryIgnored && colorado.taken.countryCode == "us")
    }

    @Test func aPlaceNearTheStoresIncidentsComesFirst() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, countries) = try service()
        // The store's incidents are around Vancouver Island.
        let incidents = [Coordinate(latitude: 48.5, longitude: -123.4), Coordinate(latitude: 49.2, longitude: -123.1)]
        let nearness: @Sendable (Coordinate) async throws -> Double? = { point in
            incidents.map { hypot($0.latitude - point.latitude, $0.longitude - point.longitude) * 111_000 }.min()
        }
        let victoria = try #require(try await TypedPlace("Victoria", countries: countries).find(with: service, distanceToIncidents: nearness))
        #expect(victoria.taken.countryCode == "ca" && victoria.reason == "the one near the store's incidents")
        #expect(victoria.others.map(\.place.countryCode) == ["hk"])
        // Where none is near, the geocoder's order stands.
        let london = try #require(try await TypedPlace("London", countries: countries).find(with: service, distanceToIncidents: nearness))
        #expect(london.taken.countryCode == "gb" && london.reason == nil)
    }
}
