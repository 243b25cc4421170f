import Foundation
import TrafficGeoSupport

/// Why a geocoder gave no answer. `isRetryable` errors are retried with backoff; the rest are not.
public enum GeocodingError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The server refused us (HTTP 403): stop, every further request would be refused too.
    case forbidden(provider: String, detail: String)
    /// HTTP 429 or the legacy 620 status, after the retries allowed.
    case rateLimited(provider: String)
    /// HTTP 5xx after the retries allowed.
    case serverError(provider: String, status: Int)
    case timeout(provider: String, seconds: Double)
    case connection(provider: String, detail: String)
    /// Connections failed again and again (refused, unknown host): the provider is marked down for
    /// the run and the chain moves on without it.
    case unreachable(provider: String, detail: String)
    /// The body was not what the protocol promises (HTML error page, broken JSON, empty body).
    case badResponse(provider: String, detail: String)
    /// Some other HTTP status (404, 400, ...).
    case httpStatus(provider: String, status: Int)
    /// A configuration the user must fix (stock User-Agent for the public Nominatim, bad URL).
    case configuration(String)
    /// The server's usage policy asks for a User-Agent that names the application (the public
    /// Nominatim), and the one set is a stock or shared one.
    case userAgentRequired(host: String)
    /// The provider cannot do this (reverse geocoding with the legacy CSV protocol).
    case unsupported(provider: String, what: String)

    public var isRetryable: Bool {
        switch self {
        case .rateLimited, .serverError, .timeout, .connection: return true
        default: return false
        }
    }

    /// Errors after which no further request to this provider should be sent in this run.
    public var stopsProvider: Bool {
        if case .forbidden = self { return true }
        if case .configuration = self { return true }
        if case .userAgentRequired = self { return true }
        if case .unreachable = self { return true }
        return false
    }

    /// The setting that helps, where one does (the command line names its option).
    public var setting: Setting? {
        switch self {
        case .rateLimited: return .requestRate
        case .unreachable: return .geocoders
        case .userAgentRequired: return .userAgent
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case let .forbidden(p, detail):
            return "\(p) refused the request (HTTP 403\(detail.isEmpty ? "" : ": \(detail)")); stopping. Check the User-Agent, API key and the provider's usage policy."
        case let .rateLimited(p): return "\(p) kept answering 'too many requests'; send fewer requests a second, or try later"
        case let .serverError(p, status): return "\(p) failed with HTTP \(status) (after retries)"
        case let .timeout(p, s): return "\(p) did not answer within \(String(format: "%g", s)) s (after retries)"
        case let .connection(p, detail): return "cannot reach \(p): \(detail)"
        case let .unreachable(p, detail):
            return "\(p) is unreachable: \(detail). It is left out for the rest of this run: start it, correct its URL, or leave it out of the geocoders."
        case let .badResponse(p, detail): return "\(p) sent an answer that is not valid for its protocol: \(detail)"
        case let .httpStatus(p, status): return "\(p) answered HTTP \(status)"
        case let .configuration(text): return text
        case let .userAgentRequired(host):
            return "\(host) requires a User-Agent that identifies your application (its usage policy; stock and shared ones get banned): set one with contact details, such as \"myapp/1.0 (me@example.org)\""
        case let .unsupported(p, what): return "\(p) cannot \(what)"
        }
    }
}
