import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Photon (`/api`, `/reverse`): GeoJSON with `osm_key`/`osm_value`; `extent` is [W, N, E, S].
public struct PhotonProvider: GeocodingProvider {
    public let name = "photon"
    let client: GeocoderHTTPClient
    public var cacheIdentity: String { "photon:\(client.baseURL.absoluteString)" }

    public init(baseURL: URL, userAgent: String = UserAgent.default, policy: RequestPolicy? = nil) throws {
        client = try GeocoderHTTPClient(provider: "photon (\(baseURL.host ?? ""))", baseURL: baseURL, userAgent: userAgent,
                                        policy: policy ?? .default(for: baseURL))
    }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        var items: [(String, String)] = [("q", query.searchText), ("limit", String(query.limit))]
        switch query.purpose {
        case .junction: items.append(("osm_tag", "highway:motorway_junction"))
        case .place: items.append(("osm_tag", "place"))
        case .any: break
        }
        let answer = try decode(try await client.get("/api", items))
        let countries = query.searchCountryCodes
        guard !countries.isEmpty else { return answer }
        // Photon has no country filter: drop what lies elsewhere.
        var filtered = answer
        filtered.candidates = answer.candidates.filter { $0.countryCode.map { countries.contains($0.lowercased()) } ?? true }
        return filtered
    }

    package func decode(_ data: Data) throws -> GeocodeAnswer {
        let object = try ProviderJSON.parse(data, provider: name)
        var candidates: [GeocodeCandidate] = []
        for feature in try ProviderJSON.features(object, provider: name) {
            guard let coordinate = ProviderJSON.point(feature) else { continue }
            let p = feature["properties"] as? [String: Any] ?? [:]
            let key = LooseJSON.string(p["osm_key"]), value = LooseJSON.string(p["osm_value"])
            let parts = ["name", "street", "city", "state", "country"].compactMap { LooseJSON.string(p[$0]) }
            candidates.append(GeocodeCandidate(coordinate: coordinate, name: LooseJSON.string(p["name"]) ?? parts.first ?? "",
                                               displayName: parts.joined(separator: ", "), kind: OSMKind.kind(key: key, value: value),
                                               countryCode: LooseJSON.string(p["countrycode"])?.lowercased(),
                                               osmTag: [key, value].compactMap { $0 }.joined(separator: "/")))
        }
        return GeocodeAnswer(provider: name, candidates: candidates, attribution: "Data © OpenStreetMap contributors, ODbL 1.0")
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        let data = try await client.get("/reverse", [("lat", String(coordinate.latitude)), ("lon", String(coordinate.longitude))])
        let object = try ProviderJSON.parse(data, provider: name)
        guard let feature = try ProviderJSON.features(object, provider: name).first else { return ReverseAddress(provider: name) }
        let p = feature["properties"] as? [String: Any] ?? [:]
        return ReverseAddress(displayName: LooseJSON.string(p["name"]), country: LooseJSON.string(p["country"]),
                              countryCode: LooseJSON.string(p["countrycode"]), postcode: LooseJSON.string(p["postcode"]),
                              locality: LooseJSON.string(p["city"]) ?? LooseJSON.string(p["locality"]),
                              road: LooseJSON.string(p["street"]), coordinate: ProviderJSON.point(feature),
                              provider: name, attribution: "Data © OpenStreetMap contributors, ODbL 1.0")
    }
}
