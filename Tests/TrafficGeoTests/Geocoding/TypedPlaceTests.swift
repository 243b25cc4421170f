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
        let home = try TestSupport.write(header + "1\tKöln\tDE\t07\t50.93\t6.95\t1000000\tCologne\n20\tLeipzig\tDE\t13\t51.34\t12.37\t500000\t\n21\tSachsen bei Ansbach\tDE\t02\t49.29\t10.65\t3000\tSachsen\n", name: "places.tsv", in: folder)
        let world = try TestSupport.write(header + """
            2\tValencia\tVE\t07\t10.16\t-68.0\t1400000\t
            3\tValencia\tES\t60\t39.47\t-0.38\t800000\t
            4\tVictoria\tHK\t00\t22.28\t114.16\t1000000\t
            5\tVictoria\tCA\t02\t48.43\t-123.37\t90000\t
            6\tDenver\tUS\tCO\t39.74\t-104.98\t700000\t
            7\tLondon\tGB\tENG\t51.51\t-0.13\t8900000\t
            8\tLondon\tCA\t08\t42.98\t-81.23\t400000\t
            9\tSpringfield\tUS\tMO\t37.22\t-93.30\t170000\t
            10\tSpringfield\tUS\tIL\t39.80\t-89.64\t116000\t
            11\tPortland\tUS\tOR\t45.52\t-122.68\t650000\t
            12\tPortland\tUS\tME\t43.66\t-70.26\t66000\t
            13\tKingston\tJM\t08\t17.99\t-76.79\t580000\t
            14\tKingston\tCA\t08\t44.23\t-76.48\t120000\t
            15\tWest Lafayette\tUS\tIN\t40.43\t-86.91\t45000\tKingston

            """, name: "world.tsv", in: folder)
        let countries = try TestSupport.write("""
            code\tnames
            ca\tCA|CAN|Canada|Kanada
            co\tCO|COL|Colombia|Kolumbien
            es\tES|ESP|Espagne|España|Spain|Spanien
            gb\tEngland|GB|GBR|UK|United Kingdom
            il\tIL|ISR|Israel
            me\tME|MNE|Montenegro
            us\tUS|USA|United States|United States of America

            """, name: "countries.tsv", in: folder)
        // States and provinces by GeoNames' admin1 code, as scripts/build-subdivisions.py writes them.
        let subdivisions = try TestSupport.write("""
            code\tnames
            ca-02\tBC|British Columbia|CA-BC|Colombie-Britannique
            ca-08\tON|CA-ON|Ontario
            us-co\tCO|Colorado|US-CO
            us-il\tIL|Illinois|US-IL
            us-me\tME|Maine|US-ME
            us-mo\tMO|Missouri|US-MO
            us-or\tOR|Oregon|US-OR

            """, name: "subdivisions.tsv", in: folder)
        let homeGazetteer = try Gazetteer(path: home.path), worldGazetteer = try Gazetteer(path: world.path)
        let provider = GazetteerProvider(gazetteer: homeGazetteer, world: { worldGazetteer })
        return (GeocodingService(providers: [provider]), try CountryNames(path: countries.path, subdivisionsPath: subdivisions.path))
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
        #expect(texas.partsNotIn(london) == ["Texas"])
        // No place of the name in the country given: anywhere, and said.
        let nowhere = try #require(try await TypedPlace("Valencia, Canada", countries: countries).find(with: service))
        #expect(nowhere.countryIgnored && nowhere.taken.countryCode == "ve")
    }

    @Test func aStateOrProvinceIsWhereThePlaceIsLookedFor() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, countries) = try service()
        for (text, country, admin1) in [("London, Ontario", "ca", "08"), ("London, ON", "ca", "08"), ("London, CA-ON", "ca", "08"),
                                        ("Victoria, BC", "ca", "02"), ("Victoria, Colombie-Britannique", "ca", "02"),
                                        ("Denver, CO", "us", "co"),
                                        // Israel's code and Illinois's; Montenegro's and Maine's: the one that has the place.
                                        ("Springfield, IL", "us", "il"), ("Portland, ME", "us", "me"), ("Portland, Oregon", "us", "or"),
                                        // A state before its country narrows it.
                                        ("Springfield, Illinois, USA", "us", "il"), ("Springfield, Missouri, US", "us", "mo")] {
            let typed = TypedPlace(text, countries: countries)
            #expect(!typed.isAnywhere && typed.unreadParts.isEmpty, Comment(rawValue: text))
            let choice = try #require(try await typed.find(with: service), Comment(rawValue: text))
            #expect(choice.taken.countryCode == country && choice.taken.admin1 == admin1 && !choice.countryIgnored,
                    Comment(rawValue: "\(text): \(choice.taken)"))
            #expect(choice.reason == "in \(typed.areaText ?? "")", Comment(rawValue: text))
        }
        let narrowed = TypedPlace("Springfield, Illinois, USA", countries: countries)
        #expect(narrowed.name == "Springfield" && narrowed.countryCodes.isEmpty && narrowed.subdivisions == [PlaceArea(country: "us", admin1: "il")])
        #expect(TypedPlace("London, Ontario, Canada", countries: countries).subdivisions == [PlaceArea(country: "ca", admin1: "08")])
        // Without a state, the larger; the other of the country is told apart by its state.
        let plain = try #require(try await TypedPlace("Springfield", countries: countries).find(with: service))
        #expect(plain.taken.admin1 == "mo" && plain.others.map(\.place.admin1) == ["il"])
        #expect(countries.shortName(of: PlaceArea(country: "us", admin1: "il")) == "IL")
        #expect(countries.shortName(of: PlaceArea(country: "ca", admin1: "08")) == "ON")
        // An HTTP geocoder, which knows no admin1 codes, is asked for the text with the state as typed.
        let query = GeocodeQuery("Springfield", countryCodes: ["il"], subdivisions: [PlaceArea(country: "us", admin1: "il")], subdivisionText: "IL")
        #expect(query.searchText == "Springfield, IL" && query.searchCountryCodes == ["il", "us"])
        #expect(query.normalizedKey != GeocodeQuery("Springfield", countryCodes: ["il"]).normalizedKey)
    }

    /// The others named beside the place taken are of that name, not of an alternate name; a
    /// place before a region no list knows is the place ("Leipzig, Sachsen"), not a town named
    /// like the region.
    @Test func theOthersAreNamesakesAndThePlaceComesBeforeItsRegion() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, countries) = try service()
        let kingston = try #require(try await TypedPlace("Kingston", countries: countries).find(with: service))
        #expect(kingston.taken.countryCode == "jm" && kingston.others.map(\.place.name) == ["Kingston"], "\(kingston.others)")
        let leipzig = try #require(try await TypedPlace("Leipzig, Sachsen", countries: countries).find(with: service))
        #expect(leipzig.taken.name == "Leipzig", "\(leipzig.taken)")
        let street = try #require(try await TypedPlace("Hauptstraße 5, Köln", countries: countries).find(with: service))
        #expect(street.taken.name == "Köln")
    }

    /// The files scripts/install ships: the codes and names people write.
    @Test func theShippedNamesReadStatesAndCodes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("data/gazetteer")
        let names = try CountryNames(path: root.appendingPathComponent("countries.tsv").path,
                                     subdivisionsPath: root.appendingPathComponent("subdivisions.tsv").path)
        for (text, area) in [("IL", "us-il"), ("IL", "il"), ("Oregon", "us-or"), ("ON", "ca-08"), ("Ontario", "ca-08"),
                             ("British Columbia", "ca-02"), ("TX", "us-tx"), ("New South Wales", "au-02"), ("Spain", "es")] {
            #expect(names.areas(of: text).contains(PlaceArea(code: area)!), Comment(rawValue: "\(text) → \(names.areas(of: text))"))
        }
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
