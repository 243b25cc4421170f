import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// The legacy CSV geocoder of the iOS cookbook: `GET /maps/geo?q=...&output=csv` answers
/// `status,accuracy,lat,lon` — 200 found, 602 unknown address, 620 too many queries.
public struct LegacyCSVProvider: GeocodingProvider {
    public let name = "csv"
    let client: GeocoderHTTPClient
    let key: String?
    public var cacheIdentity: String { "csv:\(client.baseURL.absoluteString)" }

    public init(baseURL: URL, userAgent: String = UserAgent.default, key: String? = nil, policy: RequestPolicy? = nil) throws {
        client = try GeocoderHTTPClient(provider: "csv geocoder (\(baseURL.host ?? ""))", baseURL: baseURL, userAgent: userAgent,
                                        policy: policy ?? .default(for: baseURL))
        self.key = key
    }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        var items = [("q", query.text), ("output", "csv")]
        if let key { items.append(("key", key)) }
        // 620 is this protocol's 429, sent with HTTP 200: retried here with the same backoff.
        var attempt = 0
        while true {
            let data = try await client.get("/maps/geo", items)
            do {
                return try decode(data)
            } catch let error as GeocodingError where error.code == .rateLimited && attempt < client.policy.maxRetries {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int(client.backoff(attempt) * 1000)))
            }
        }
    }

    package func decode(_ data: Data) throws -> GeocodeAnswer {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let status = fields.first.flatMap({ Int($0) }) else {
            throw GeocodingError.badResponse(provider: name, detail: text.isEmpty ? "empty body" : "'\(text.prefix(60))' is not status,accuracy,lat,lon")
        }
        switch status {
        case 200:
            guard fields.count >= 4, let lat = Double(fields[2]), let lon = Double(fields[3]),
                  let coordinate = try? Coordinate(validatingLatitude: lat, longitude: lon) else {
                throw GeocodingError.badResponse(provider: name, detail: "'\(text.prefix(60))' has no valid lat,lon")
            }
            let accuracy = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            // Accuracy 0…9 (country … premise); 5+ is street level or better.
            let kind: PlaceKind = accuracy >= 6 ? .road : (accuracy >= 4 ? .town : .other)
            return GeocodeAnswer(provider: name, candidates: [
                GeocodeCandidate(coordinate: coordinate, name: "", kind: kind, score: Double(accuracy) / 9),
            ])
        case 601, 602, 603: return GeocodeAnswer(provider: name, candidates: [])      // no query / unknown address / unavailable address
        case 620: throw GeocodingError.rateLimited(provider: name)
        case 610: throw GeocodingError.forbidden(provider: name, detail: "bad key (status 610)")
        case 500: throw GeocodingError.serverError(provider: name, status: 500)
        default: throw GeocodingError.badResponse(provider: name, detail: "unknown status \(status)")
        }
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        throw GeocodingError.unsupported(provider: name, what: "reverse-geocode (the CSV protocol has no reverse lookup)")
    }
}
