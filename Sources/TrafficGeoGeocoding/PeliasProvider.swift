import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Pelias (`/v1/search`, `/v1/reverse`): GeoJSON with `confidence`, `match_type`, `layer`.
public struct PeliasProvider: GeocodingProvider {
    public let name = "pelias"
    let client: GeocoderHTTPClient
    let apiKey: String?
    public var cacheIdentity: String { "pelias:\(client.baseURL.absoluteString)" }

    public init(baseURL: URL, userAgent: String = UserAgent.default, apiKey: String? = nil, policy: RequestPolicy? = nil) throws {
        client = try GeocoderHTTPClient(provider: "pelias (\(baseURL.host ?? ""))", baseURL: baseURL, userAgent: userAgent,
                                        policy: policy ?? .default(for: baseURL))
        self.apiKey = apiKey
    }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        var items: [(String, String)] = [("text", query.searchText), ("size", String(query.limit))]
        let countries = query.searchCountryCodes
        if countries.count == 1 { items.append(("boundary.country", countries[0].uppercased())) }
        if query.purpose == .place { items.append(("layers", "locality,localadmin,borough,neighbourhood")) }
        if let apiKey { items.append(("api_key", apiKey)) }
        return try decode(try await client.get("/v1/search", items))
    }

    package func decode(_ data: Data) throws -> GeocodeAnswer {
        let object = try ProviderJSON.parse(data, provider: name)
        let attribution = LooseJSON.string(((object as? [String: Any])?["geocoding"] as? [String: Any])?["attribution"])
        var candidates: [GeocodeCandidate] = []
        for feature in try ProviderJSON.features(object, provider: name) {
            guard let coordinate = ProviderJSON.point(feature) else { continue }
            let p = feature["properties"] as? [String: Any] ?? [:]
            let layer = LooseJSON.string(p["layer"]) ?? ""
            let kind: PlaceKind
            switch layer {
            case "locality", "localadmin", "borough", "neighbourhood", "county", "macrohood": kind = .town
            case "street": kind = .road
            default: kind = .other
            }
            candidates.append(GeocodeCandidate(coordinate: coordinate, name: LooseJSON.string(p["name"]) ?? "",
                                               displayName: LooseJSON.string(p["label"]), kind: kind,
                                               score: LooseJSON.double(p["confidence"]),
                                               countryCode: LooseJSON.string(p["country_code"])?.lowercased(),
                                               osmTag: [layer, LooseJSON.string(p["match_type"])].compactMap { $0 }.joined(separator: "/")))
        }
        return GeocodeAnswer(provider: name, candidates: candidates, attribution: attribution)
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        var items = [("point.lat", String(coordinate.latitude)), ("point.lon", String(coordinate.longitude)), ("size", "1")]
        if let apiKey { items.append(("api_key", apiKey)) }
        let data = try await client.get("/v1/reverse", items)
        let object = try ProviderJSON.parse(data, provider: name)
        guard let feature = try ProviderJSON.features(object, provider: name).first else { return ReverseAddress(provider: name) }
        let p = feature["properties"] as? [String: Any] ?? [:]
        return ReverseAddress(displayName: LooseJSON.string(p["label"]), country: LooseJSON.string(p["country"]),
                              countryCode: LooseJSON.string(p["country_code"]), postcode: LooseJSON.string(p["postalcode"]),
                              locality: LooseJSON.string(p["locality"]), road: LooseJSON.string(p["street"]),
                              coordinate: ProviderJSON.point(feature), provider: name,
                              attribution: LooseJSON.string(((object as? [String: Any])?["geocoding"] as? [String: Any])?["attribution"]))
    }
}
