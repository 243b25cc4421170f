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
    /// ISO 3166-1 alpha-2 codes, lower case; empty = anywhere.
    public var countryCodes: [String]
    public var limit: Int

    public init(_ text: String, purpose: Purpose = .any, countryCodes: [String] = [], limit: Int = 10) {
        self.text = text.normalizedWhitespace
        self.purpose = purpose
        self.countryCodes = countryCodes.map { $0.lowercased() }.sorted()
        self.limit = limit
    }

    /// The cache key part: folded text so that "Köln" and "KOELN" ask once, its comma-separated
    /// parts kept apart: geocoders read "Hauptstraße 5, 69117 Heidelberg" as street and town and
    /// may answer the same words without the comma otherwise (the gazetteer does), so one must not
    /// be answered from the other's cache.
    public var normalizedKey: String {
        let folded = text.split(separator: ",", omittingEmptySubsequences: false).map { TextFolding.fold(String($0)) }.joined(separator: ",")
        return "\(purpose.rawValue)|\(countryCodes.joined(separator: ","))|\(limit)|\(folded)"
    }

    public var description: String { text }
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
