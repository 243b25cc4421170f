import AsyncHTTPClient
import NIOCore

/// The HTTP client for feeds and geocoders, one per process.
///
/// Not `HTTPClient.shared`: its 90-second connect timeout is also how long a refused connection
/// takes to fail (AsyncHTTPClient retries connecting until that timeout), so "nothing listens
/// there" would hang for a minute and a half. Here connecting is tried once per request, with
/// 5 seconds to succeed: the geocoder client retries with its own policy and marks a server down
/// after a few refusals (GeocoderHTTPClient), which AsyncHTTPClient's retries hid. Redirects are followed (at most
/// 5, no cycles) and compressed answers are inflated with a ratio limit against zip bombs.
public enum SharedHTTPClient {
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: .seconds(5), read: .seconds(60)),
            decompression: .enabled(limit: .ratio(100)))
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}
