import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import TrafficGeoSupport
import TrafficGeoHTTP

/// How politely to talk to one geocoding server.
public struct RequestPolicy: Sendable, Equatable {
    /// Requests per second across the whole process (nil = no limit, for self-hosted servers).
    public var rate: Double?
    /// Requests in flight at once.
    public var concurrency: Int
    /// Per-request deadline, seconds.
    public var timeout: Double = 10
    /// Retries after the first try, for timeouts, connection failures, 5xx and 429.
    public var maxRetries: Int = 4
    /// First backoff delay, doubled per retry, with ±50 % jitter, at most `maxBackoff`.
    public var baseBackoff: Double = 1
    public var maxBackoff: Double = 60
    /// Largest response body accepted.
    public var maxBodyBytes: Int = 8 << 20

    public init(rate: Double?, concurrency: Int) {
        self.rate = rate
        self.concurrency = max(1, concurrency)
    }

    /// The public OSMF Nominatim's usage policy: at most 1 request per second, one at a time.
    public static let publicServer = RequestPolicy(rate: 1, concurrency: 1)
    /// A server of your own: no rate limit, a few requests at once.
    public static let selfHosted = RequestPolicy(rate: nil, concurrency: 4)

    /// The policy for a base URL: public servers of the big projects get the strict one.
    public static func `default`(for url: URL) -> RequestPolicy {
        let host = url.host?.lowercased() ?? ""
        if publicHosts.contains(where: { host == $0 || host.hasSuffix("." + $0) }) { return .publicServer }
        return .selfHosted
    }

    static let publicHosts = ["nominatim.openstreetmap.org", "photon.komoot.io", "api.geocode.earth", "openstreetmap.org"]
}

/// HTTP GET for geocoders: a shared rate limit per server, a cap on requests in flight, timeouts,
/// retries with exponential backoff and jitter on timeouts, connection errors and 5xx, `429` with
/// `Retry-After` (seconds or an HTTP date; `0` means unknown, so back off), and a stop on `403`.
public final class GeocoderHTTPClient: Sendable {
    public let provider: String
    public let baseURL: URL
    public let userAgent: String
    public let policy: RequestPolicy
    private let http: HTTPClient
    private let pacer: RequestPacer
    private let gate: ConcurrencyGate
    private let stopped = StopFlag()

    public init(provider: String, baseURL: URL, userAgent: String, policy: RequestPolicy, http: HTTPClient = SharedHTTPClient.client) throws {
        guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https", baseURL.host != nil else {
            throw GeocodingError.configuration("\(provider): '\(Redaction.redact(baseURL.absoluteString))' is not an http(s) URL")
        }
        if let problem = HTTPLocation.problem(baseURL.absoluteString) {
            throw GeocodingError.configuration("\(provider): '\(Redaction.redact(baseURL.absoluteString))': \(problem)")
        }
        try UserAgentPolicy.check(userAgent, for: baseURL)
        self.provider = provider
        self.baseURL = baseURL
        self.userAgent = userAgent
        self.policy = policy
        self.http = http
        pacer = RequestPacer.shared(for: baseURL, rate: policy.rate)
        gate = ConcurrencyGate(limit: policy.concurrency)
    }

    /// GETs `path` with the query items (each encoded as a query component: an `&` in an address
    /// stays inside its value). Returns the body of a 2xx answer.
    public func get(_ path: String, _ items: [(String, String)]) async throws -> Data {
        if let reason = await stopped.reason { throw reason }
        let url = Self.makeURL(baseURL, path, items)
        var attempt = 0
        while true {
            do {
                return try await gate.withSlot {
                    await pacer.waitTurn()
                    return try await once(url)
                }
            } catch let limited as TooManyRequests {
                guard attempt < policy.maxRetries else { throw GeocodingError.rateLimited(provider: provider) }
                attempt += 1
                // Retry-After when the server gave a usable one; "0" or none means unknown: back off.
                let delay = limited.retryAfter.flatMap { $0 > 0 ? min($0, policy.maxBackoff * 4) : nil } ?? backoff(attempt)
                // A 429 slows every request to this server, not only this one.
                await pacer.pushBack(seconds: delay)
                try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            } catch let failure as ConnectionFailure {
                // Nobody listening, or no such host: after a few in a row, across all requests to
                // this server, it is down for the run, and the chain stops waiting on it.
                if await stopped.connectionFailed(isUnreachable: failure.kind != .other && failure.kind != .tls,
                                                  limit: Self.unreachableAfter) {
                    let down = GeocodingError.unreachable(provider: provider, detail: failure.text, underlying: failure.cause)
                    await stopped.stop(down)
                    throw down
                }
                guard attempt < policy.maxRetries else { throw GeocodingError.connection(provider: provider, detail: failure.text, underlying: failure.cause) }
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int(backoff(attempt) * 1000)))
            } catch let error as GeocodingError {
                if error.stopsProvider { await stopped.stop(error); throw error }
                guard error.isRetryable, attempt < policy.maxRetries else { throw error }
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int(backoff(attempt) * 1000)))
            }
        }
    }

    /// Connection attempts that failed in a row (refused, unknown host, unreachable) after which
    /// the server counts as down for the run.
    static let unreachableAfter = 3

    /// A connection that could not be made or broke, explained (NetworkErrorText).
    private struct ConnectionFailure: Error {
        let kind: NetworkErrorText.Kind
        let text: String
        /// AsyncHTTPClient's or NIO's error, kept as the geocoding error's cause.
        let cause: any Error & Sendable
    }

    /// Exponential backoff with ±50 % jitter, so that many clients do not retry in step.
    func backoff(_ attempt: Int) -> Double {
        Backoff.delay(first: policy.baseBackoff, attempt: attempt, max: policy.maxBackoff)
    }

    /// A 429 answer, with its Retry-After in seconds when it had a readable one.
    private struct TooManyRequests: Error { let retryAfter: Double? }

    private func once(_ url: String) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Accept", value: "application/json, application/geo+json, text/csv;q=0.9, */*;q=0.5")
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .milliseconds(Int64(policy.timeout * 1000)))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let (kind, text) = NetworkErrorText.describe(error)
            if kind == .timeout { throw GeocodingError.timeout(provider: provider, seconds: policy.timeout) }
            throw ConnectionFailure(kind: kind, text: text, cause: error)
        }
        await stopped.connectionSucceeded()
        let status = Int(response.status.code)
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: policy.maxBodyBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw GeocodingError.timeout(provider: provider, seconds: policy.timeout)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw GeocodingError.badResponse(provider: provider, detail: "the answer is larger than \(policy.maxBodyBytes) bytes")
        } catch {
            throw ConnectionFailure(kind: .other, text: NetworkErrorText.describe(error).text, cause: error)
        }
        switch status {
        case 200..<300:
            return Data(body.readableBytesView)
        case 429:
            throw TooManyRequests(retryAfter: RetryAfter.seconds(response.headers.first(name: "Retry-After")))
        case 403:
            let text = String(decoding: body.readableBytesView.prefix(200), as: UTF8.self)
            throw GeocodingError.forbidden(provider: provider, detail: text.normalizedWhitespace)
        case 500..<600:
            throw GeocodingError.serverError(provider: provider, status: status)
        default:
            throw GeocodingError.httpStatus(provider: provider, status: status)
        }
    }

    static func makeURL(_ base: URL, _ path: String, _ items: [(String, String)]) -> String {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path.hasPrefix("/") ? path : "/" + path
        if !items.isEmpty {
            text += "?" + items.map { "\(QueryComponent.encode($0.0))=\(QueryComponent.encode($0.1))" }.joined(separator: "&")
        }
        return text
    }

}

/// Percent-encoding for one query component (RFC 3986 unreserved characters pass, the rest is
/// encoded, `+` `&` `=` `?` `#` included).
enum QueryComponent {
    private static let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }
}

/// Parses a `Retry-After` header: delta-seconds or an HTTP date.
enum RetryAfter {
    static func seconds(_ header: String?, now: Date = Date()) -> Double? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let s = Double(header), s >= 0 { return s }
        if let date = TimestampParser.parse(header) { return max(0, date.timeIntervalSince(now)) }
        return nil
    }
}

/// Refuses User-Agents that do not identify the application where the server's policy asks for one.
public enum UserAgentPolicy {
    static let stockPrefixes = ["curl/", "wget/", "python-requests", "python-urllib", "go-http-client", "java/", "okhttp",
                                "asynchttpclient", "libwww-perl", "axios/", "node-fetch", "mozilla/5.0"]

    public static func check(_ userAgent: String, for url: URL) throws {
        let host = url.host?.lowercased() ?? ""
        guard host == "nominatim.openstreetmap.org" || host.hasSuffix(".nominatim.openstreetmap.org") else { return }
        let ua = userAgent.trimmingCharacters(in: .whitespaces).lowercased()
        if ua.isEmpty || stockPrefixes.contains(where: { ua.hasPrefix($0) }) || userAgent == UserAgent.default {
            throw GeocodingError.userAgentRequired(host: "nominatim.openstreetmap.org")
        }
    }
}

// MARK: - Pacing and concurrency

/// One global request schedule per server: requests are spaced `1/rate` seconds apart, whatever
/// task sends them.
actor RequestPacer {
    private let interval: Double?
    private var next = ContinuousClock.now

    init(rate: Double?) {
        interval = rate.flatMap { $0 > 0 ? 1 / $0 : nil }
    }

    private static let registry = PacerRegistry()

    /// The pacer shared by every client of the same server (scheme, host, port) in this process.
    static func shared(for url: URL, rate: Double?) -> RequestPacer {
        registry.pacer(for: "\(url.scheme ?? "")://\(url.host ?? ""):\(url.port ?? 0)|\(rate ?? 0)", rate: rate)
    }

    func waitTurn() async {
        guard let interval else { return }
        let now = ContinuousClock.now
        let slot = max(now, next)
        next = slot.advanced(by: .milliseconds(Int(interval * 1000)))
        if slot > now { try? await Task.sleep(until: slot, clock: .continuous) }
    }

    /// After a 429: nobody sends before `seconds` from now.
    func pushBack(seconds: Double) {
        let until = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        if until > next { next = until }
    }
}

private final class PacerRegistry: Sendable {
    private let pacers = NIOLockedValueBox<[String: RequestPacer]>([:])

    func pacer(for key: String, rate: Double?) -> RequestPacer {
        pacers.withLockedValue { pacers in
            if let p = pacers[key] { return p }
            let p = RequestPacer(rate: rate)
            pacers[key] = p
            return p
        }
    }
}

/// At most `limit` operations at once; the others wait in order.
actor ConcurrencyGate {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func withSlot<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        defer { Task { await self.release() } }
        return try await body()
    }

    private func acquire() async {
        if running < limit { running += 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
    }
}

/// Set once a provider must not be asked again in this run (403, bad configuration, down).
actor StopFlag {
    private(set) var reason: GeocodingError?
    private var failuresInARow = 0

    func stop(_ error: GeocodingError) { if reason == nil { reason = error } }

    /// Counts a failed connection; true when `limit` unreachable ones came in a row.
    func connectionFailed(isUnreachable: Bool, limit: Int) -> Bool {
        failuresInARow = isUnreachable ? failuresInARow + 1 : 0
        return failuresInARow >= limit
    }

    func connectionSucceeded() { failuresInARow = 0 }
}
