import Foundation
import TrafficGeoSupport

/// Which geocoders to ask, from `--geocoder` / `TRAFFICGEO_GEOCODER`: a comma-separated fallback
/// chain of `KIND=URL` entries or `gazetteer`.
///
///     nominatim=http://127.0.0.1:8088                  the local Nominatim (jsonv2)
///     nominatim-geojson=http://127.0.0.1:8088          the same, format=geojson
///     photon=https://photon.example.org,gazetteer      Photon, then the offline gazetteer
///     pelias=https://api.example.org?api_key=KEY
///     csv=http://legacy.example.org?key=KEY            the legacy CSV protocol
///
/// With nothing configured, the offline gazetteer answers.
public struct GeocoderConfiguration: Sendable {
    public enum Entry: Sendable, Equatable {
        case nominatim(URL, NominatimProvider.Format)
        case photon(URL)
        case pelias(URL, apiKey: String?)
        case csv(URL, key: String?)
        case gazetteer
    }

    public var entries: [Entry]
    public var userAgent: String
    /// Overrides of the per-server defaults (`RequestPolicy.default(for:)`).
    public var rate: Double?
    public var concurrency: Int?
    public var timeout: Double?
    /// Largest answer body accepted (nil: RequestPolicy's default, 8 MiB).
    public var maxBodyBytes: Int?
    public var retries: Int?

    public init(entries: [Entry] = [.gazetteer], userAgent: String = UserAgent.default) {
        self.entries = entries
        self.userAgent = userAgent
    }

    /// Parses the chain; an empty spec means the gazetteer alone.
    public static func parse(_ spec: String?, userAgent: String? = nil) throws -> GeocoderConfiguration {
        var config = GeocoderConfiguration(entries: [], userAgent: userAgent.flatMap { $0.isEmpty ? nil : $0 } ?? UserAgent.default)
        let text = spec?.trimmingCharacters(in: .whitespaces) ?? ""
        if text.isEmpty { config.entries = [.gazetteer]; return config }
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            if item.lowercased() == "gazetteer" || item.lowercased() == "offline" {
                config.entries.append(.gazetteer)
                continue
            }
            guard let eq = item.firstIndex(of: "=") else {
                throw GeocodingError.configuration("geocoder '\(Redaction.redact(String(item)))': write KIND=URL (nominatim, nominatim-geojson, photon, pelias, csv) or 'gazetteer'")
            }
            let kind = item[..<eq].lowercased()
            let urlText = String(item[item.index(after: eq)...])
            guard var components = URLComponents(string: urlText), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", components.host?.isEmpty == false else {
                throw GeocodingError.configuration("geocoder '\(Redaction.redact(String(item)))' is not an http(s) URL")
            }
            let key = components.queryItems?.first(where: { $0.name == "api_key" || $0.name == "key" })?.value
            components.queryItems = nil
            let url = components.url!
            switch kind {
            case "nominatim": config.entries.append(.nominatim(url, .jsonv2))
            case "nominatim-geojson": config.entries.append(.nominatim(url, .geojson))
            case "photon": config.entries.append(.photon(url))
            case "pelias": config.entries.append(.pelias(url, apiKey: key))
            case "csv", "legacy": config.entries.append(.csv(url, key: key))
            default:
                throw GeocodingError.configuration("geocoder kind '\(kind)' is not one of nominatim, nominatim-geojson, photon, pelias, csv, gazetteer")
            }
        }
        return config
    }

    /// Makes the providers, in chain order.
    public func makeProviders() throws -> [GeocodingProvider] {
        try entries.map { entry in
            func policy(_ url: URL) -> RequestPolicy {
                var p = RequestPolicy.default(for: url)
                if let rate { p.rate = rate > 0 ? rate : nil }
                if let concurrency { p.concurrency = max(1, concurrency) }
                if let timeout { p.timeout = timeout }
                if let retries { p.maxRetries = retries }
                if let maxBodyBytes { p.maxBodyBytes = maxBodyBytes }
                return p
            }
            switch entry {
            case let .nominatim(url, format): return try NominatimProvider(baseURL: url, userAgent: userAgent, format: format, policy: policy(url))
            case let .photon(url): return try PhotonProvider(baseURL: url, userAgent: userAgent, policy: policy(url))
            case let .pelias(url, key): return try PeliasProvider(baseURL: url, userAgent: userAgent, apiKey: key, policy: policy(url))
            case let .csv(url, key): return try LegacyCSVProvider(baseURL: url, userAgent: userAgent, key: key, policy: policy(url))
            case .gazetteer: return GazetteerProvider(gazetteer: try Gazetteer.shared())
            }
        }
    }
}
