import Foundation
import TrafficGeoModel
import TrafficGeoSupport

// The geocoder answer model: a question (GeocodeQuery), its answer (GeocodeAnswer) and candidates.

/// What kind of thing a geocoder found: decides the precision of a position made from it.
public enum PlaceKind: String, Sendable, Codable {
    /// A motorway junction (OSM highway=motorway_junction): the exact spot.
    case junction
    /// A city, town, village or district.
    case town
    /// A road or street.
    case road
    case other
}

/// One question to a geocoder. Equal queries share one request and one cache entry.
public struct GeocodeQuery: Sendable, Hashable, CustomStringConvertible {
    public enum Purpose: String, Sendable {
        /// Find a motorway junction by name (filters for junctions where the protocol can).
        case junction
        /// Find a settlement.
        case place
        /// Anything (free-form address search, as `trafficgeo geocode "..."` and batch runs).
        case any
    }

    public var text: String
    public var purpose: Purpose
    /// ISO 3166-1 alpha-2 codes, lower case; empty (and no `subdivisions`) = anywhere.
    public var countryCodes: [String]
    /// States or provinces the place may be in besides `countryCodes` ("Springfield, IL": Israel,
    /// or Illinois), as GeoNames' admin1 codes, which the gazetteer's places carry.
    public var subdivisions: [PlaceArea]
    /// The subdivision as the person wrote it ("IL", "Ontario"): HTTP geocoders know no admin1
    /// codes, and are asked for `text, subdivisionText` in the subdivisions' countries instead.
    public var subdivisionText: String?
    public var limit: Int

    public init(_ text: String, purpose: Purpose = .any, countryCodes: [String] = [], subdivisions: [PlaceArea] = [],
                subdivisionText: String? = nil, limit: Int = 10) {
        self.text = text.normalizedWhitespace
        self.purpose = purpose
        self.countryCodes = countryCodes.map { $0.lowercased() }.sorted()
        self.subdivisions = subdivisions.sorted()
        self.subdivisionText = subdivisions.isEmpty ? nil : subdivisionText?.normalizedWhitespace
        self.limit = limit
    }

    /// What an HTTP geocoder is asked for: the text, with the subdivision as written.
    public var searchText: String {
        subdivisionText.map { "\(text), \($0)" } ?? text
    }

    /// The countries an HTTP geocoder is to answer in: those given and those of the subdivisions.
    public var searchCountryCodes: [String] {
        Array(Set(countryCodes + subdivisions.map(\.country))).sorted()
    }

    /// The cache key part: folded text so that "Köln" and "KOELN" ask once, its comma-separated
    /// parts kept apart: geocoders read "Hauptstraße 5, 69117 Heidelberg" as street and town and
    /// may answer the same words without the comma otherwise (the gazetteer does), so one must not
    /// be answered from the other's cache.
    public var normalizedKey: String {
        let folded = text.split(separator: ",", omittingEmptySubsequences: false).map { TextFolding.fold(String($0)) }.joined(separator: ",")
        let areas = countryCodes + subdivisions.map(\.code)
        return "\(purpose.rawValue)|\(areas.joined(separator: ","))|\(limit)|\(folded)"
    }

    public var description: String { text }
}

/// A country, or one of its first-level subdivisions (a state, a province): where a typed
/// place is looked for.
public struct PlaceArea: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// ISO 3166-1 alpha-2, lower case.
    public var country: String
    /// GeoNames' admin1 code, lower case ("il", "08"); nil for the whole country.
    public var admin1: String?

    public init(country: String, admin1: String? = nil) {
        self.country = country.lowercased()
        self.admin1 = admin1.flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    /// "us" or "us-il", as `countries.tsv` and `subdivisions.tsv` write them.
    public init?(code: String) {
        let parts = code.split(separator: "-", maxSplits: 1).map(String.init)
        guard let country = parts.first, country.count == 2 else { return nil }
        self.init(country: country, admin1: parts.count > 1 ? parts[1] : nil)
    }

    public var code: String { admin1.map { "\(country)-\($0)" } ?? country }
    public var description: String { code }
    public static func < (a: PlaceArea, b: PlaceArea) -> Bool { a.code < b.code }
}

/// A place a geocoder answered with.
public struct GeocodeCandidate: Sendable, Equatable, Codable {
    public var coordinate: Coordinate
    public var name: String
    public var displayName: String?
    public var kind: PlaceKind
    /// The provider's own score, mapped to 0…1 where it has one (Pelias confidence, Nominatim importance).
    public var score: Double?
    /// For settlements from the gazetteer.
    public var population: Int?
    public var countryCode: String?
    /// GeoNames' first-level subdivision, for the gazetteer's places ("il", "08"): tells two
    /// places of one name in one country apart.
    public var admin1: String?
    /// The provider's classification, e.g. "highway/motorway_junction", "place/town".
    public var osmTag: String?
    /// Which provider of the chain answered with it (set by `GeocodingService`).
    public var provider: String?

    public init(coordinate: Coordinate, name: String, displayName: String? = nil, kind: PlaceKind, score: Double? = nil,
                population: Int? = nil, countryCode: String? = nil, osmTag: String? = nil) {
        self.coordinate = coordinate
        self.name = name
        self.displayName = displayName
        self.kind = kind
        self.score = score
        self.population = population
        self.countryCode = countryCode
        self.osmTag = osmTag
    }
}

/// The answer to a query: candidates (maybe none), who gave them and under which licence.
public struct GeocodeAnswer: Sendable, Equatable, Codable {
    public var provider: String
    public var candidates: [GeocodeCandidate]
    /// Licence or attribution text the provider sent (Nominatim `licence`, Pelias `attribution`).
    public var attribution: String?
    /// True when the answer came from the cache, not the network.
    public var fromCache: Bool

    public init(provider: String, candidates: [GeocodeCandidate], attribution: String? = nil, fromCache: Bool = false) {
        self.provider = provider
        self.candidates = candidates
        self.attribution = attribution
        self.fromCache = fromCache
    }
}

/// An address for a coordinate (`trafficgeo reverse`).
public struct ReverseAddress: Sendable, Equatable, Codable {
    public var displayName: String?
    public var country: String?
    public var countryCode: String?
    public var postcode: String?
    public var locality: String?
    public var road: String?
    public var coordinate: Coordinate?
    public var provider: String
    public var attribution: String?
    /// Metres from the asked location to `coordinate` (the gazetteer answers with the nearest
    /// place it knows, which may be far).
    public var distanceMeters: Double?
}
