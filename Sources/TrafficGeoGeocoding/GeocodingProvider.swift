import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// A geocoder: answers name searches and, where it can, reverse lookups.
public protocol GeocodingProvider: Sendable {
    /// Short name for messages and the `provider` column ("nominatim", "gazetteer").
    var name: String { get }
    /// Identity for the cache: the same question to another server is another question.
    var cacheIdentity: String { get }
    func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer
    func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress
}

/// Decoding helpers shared by the JSON protocols.
enum ProviderJSON {
    static func parse(_ data: Data, provider: String) throws -> Any {
        guard !data.isEmpty else { throw GeocodingError.badResponse(provider: provider, detail: "empty body") }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let head = String(decoding: data.prefix(80), as: UTF8.self).normalizedWhitespace
            let hint = head.lowercased().contains("<html") || head.hasPrefix("<") ? "an HTML page instead of JSON" : "not JSON"
            throw GeocodingError.badResponse(provider: provider, detail: "\(hint): '\(head)'")
        }
    }

    /// A GeoJSON FeatureCollection's features, or a bad-response error.
    static func features(_ object: Any, provider: String) throws -> [[String: Any]] {
        guard let root = object as? [String: Any], let features = root["features"] as? [[String: Any]] else {
            throw GeocodingError.badResponse(provider: provider, detail: "no GeoJSON features array")
        }
        return features
    }

    static func point(_ feature: [String: Any]) -> Coordinate? {
        guard let geometry = feature["geometry"] as? [String: Any], let c = geometry["coordinates"] as? [Any], c.count >= 2,
              let lon = LooseJSON.double(c[0]), let lat = LooseJSON.double(c[1]) else { return nil }
        return try? Coordinate(validatingLatitude: lat, longitude: lon)
    }
}

/// The kind of an OSM-tagged result.
enum OSMKind {
    static func kind(key: String?, value: String?) -> PlaceKind {
        switch (key ?? "", value ?? "") {
        case ("highway", "motorway_junction"): return .junction
        case ("place", "city"), ("place", "town"), ("place", "village"), ("place", "hamlet"), ("place", "suburb"),
             ("place", "borough"), ("place", "quarter"), ("place", "neighbourhood"), ("place", "municipality"),
             ("place", "locality"), ("boundary", "administrative"):
            return .town
        case ("highway", _): return .road
        default: return .other
        }
    }
}
