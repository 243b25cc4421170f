import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Nominatim (`/search`, `/reverse`) in `jsonv2` or `geojson` format.
///
///     let nominatim = try NominatimProvider(baseURL: URL(string: "http://127.0.0.1:8088")!, userAgent: "myapp/1.0 (me@example.org)")
public struct NominatimProvider: GeocodingProvider {
    public enum Format: String, Sendable { case jsonv2, geojson }

    public let name = "nominatim"
    public let format: Format
    let client: GeocoderHTTPClient
    public var cacheIdentity: String { "nominatim:\(format.rawValue):\(client.baseURL.absoluteString)" }

    public init(baseURL: URL, userAgent: String = UserAgent.default, format: Format = .jsonv2, policy: RequestPolicy? = nil) throws {
        self.format = format
        client = try GeocoderHTTPClient(provider: "nominatim (\(baseURL.host ?? ""))", baseURL: baseURL, userAgent: userAgent,
                                        policy: policy ?? .default(for: baseURL))
    }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        var items: [(String, String)] = [("q", query.searchText), ("format", format.rawValue), ("limit", String(query.limit))]
        let countries = query.searchCountryCodes
        if !countries.isEmpty { items.append(("countrycodes", countries.joined(separator: ","))) }
        switch query.purpose {
        case .junction: items.append(("layer", "poi"))
        case .place: items.append(("featureType", "settlement"))
        case .any: break
        }
        let data = try await client.get("/search", items)
        return try decodeSearch(data)
    }

    package func decodeSearch(_ data: Data) throws -> GeocodeAnswer {
        let object = try ProviderJSON.parse(data, provider: name)
        var candidates: [GeocodeCandidate] = []
        var licence: String?
        switch format {
        case .jsonv2:
            guard let array = object as? [[String: Any]] else {
                if let error = (object as? [String: Any])?["error"] {
                    throw GeocodingError.badResponse(provider: name, detail: "error: \(LooseJSON.string(error) ?? "\(error)")")
                }
                throw GeocodingError.badResponse(provider: name, detail: "expected a JSON array of places")
            }
            for place in array {
                guard let lat = LooseJSON.double(place["lat"]), let lon = LooseJSON.double(place["lon"]),
                      let coordinate = try? Coordinate(validatingLatitude: lat, longitude: lon) else { continue }
                licence = licence ?? LooseJSON.string(place["licence"])
                candidates.append(candidate(coordinate, place))
            }
        case .geojson:
            licence = LooseJSON.string((object as? [String: Any])?["licence"])
            for feature in try ProviderJSON.features(object, provider: name) {
                guard let coordinate = ProviderJSON.point(feature) else { continue }
                candidates.append(candidate(coordinate, feature["properties"] as? [String: Any] ?? [:]))
            }
        }
        return GeocodeAnswer(provider: name, candidates: candidates, attribution: licence)
    }

    private func candidate(_ coordinate: Coordinate, _ p: [String: Any]) -> GeocodeCandidate {
        let category = LooseJSON.string(p["category"]) ?? LooseJSON.string(p["class"])
        let type = LooseJSON.string(p["type"])
        let display = LooseJSON.string(p["display_name"])
        let name = LooseJSON.string(p["name"]).flatMap { $0.isEmpty ? nil : $0 } ?? display?.components(separatedBy: ",").first ?? ""
        return GeocodeCandidate(coordinate: coordinate, name: name, displayName: display,
                                kind: OSMKind.kind(key: category, value: type), score: LooseJSON.double(p["importance"]),
                                countryCode: LooseJSON.string((p["address"] as? [String: Any])?["country_code"]),
                                osmTag: [category, type].compactMap { $0 }.joined(separator: "/"))
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        let data = try await client.get("/reverse", [("lat", String(coordinate.latitude)), ("lon", String(coordinate.longitude)),
                                                     ("format", "jsonv2"), ("addressdetails", "1")])
        guard let object = try ProviderJSON.parse(data, provider: name) as? [String: Any] else {
            throw GeocodingError.badResponse(provider: name, detail: "expected a JSON object")
        }
        if object["error"] != nil {
            return ReverseAddress(provider: name)  // "Unable to geocode": nothing there
        }
        let a = object["address"] as? [String: Any] ?? [:]
        let locality = ["city", "town", "village", "hamlet", "suburb", "municipality"].lazy.compactMap { LooseJSON.string(a[$0]) }.first
        var coordinateOut: Coordinate?
        if let lat = LooseJSON.double(object["lat"]), let lon = LooseJSON.double(object["lon"]) {
            coordinateOut = try? Coordinate(validatingLatitude: lat, longitude: lon)
        }
        return ReverseAddress(displayName: LooseJSON.string(object["display_name"]), country: LooseJSON.string(a["country"]),
                              countryCode: LooseJSON.string(a["country_code"]), postcode: LooseJSON.string(a["postcode"]),
                              locality: locality, road: LooseJSON.string(a["road"]), coordinate: coordinateOut,
                              provider: name, attribution: LooseJSON.string(object["licence"]))
    }
}

extension ReverseAddress {
    init(provider: String) {
        self.init(displayName: nil, country: nil, countryCode: nil, postcode: nil, locality: nil, road: nil,
                  coordinate: nil, provider: provider, attribution: nil)
    }
}
