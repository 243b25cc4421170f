import Foundation
import TrafficGeoSupport

/// Why a geocoder gave no answer: its kind (`code`), the provider, what the kind needs said (a
/// detail, an HTTP status, a time limit), and the error underneath where one was caught.
/// `isRetryable` errors are retried with backoff; the rest are not.
///
/// A struct over kinds it keeps to itself, as AsyncHTTPClient's errors are: a kind added later
/// breaks no user's `switch`. Ask `error.code == .rateLimited`, or switch over `error.code` with
/// a `default`. Its words name no command-line option: `setting` says which setting helps.
public struct GeocodingError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kinds of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case forbidden, rateLimited, serverError, timeout, connection, unreachable, badResponse, httpStatus, configuration, userAgentRequired, unsupported
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The server refused us (HTTP 403): stop, every further request would be refused too.
        public static let forbidden = Code(.forbidden)
        /// HTTP 429 or the legacy 620 status, after the retries allowed.
        public static let rateLimited = Code(.rateLimited)
        /// HTTP 5xx after the retries allowed.
        public static let serverError = Code(.serverError)
        /// No answer within the time limit, after the retries allowed.
        public static let timeout = Code(.timeout)
        /// The connection failed (retried).
        public static let connection = Code(.connection)
        /// Connections failed again and again (refused, unknown host): the provider is marked
        /// down for the run and the chain moves on without it.
        public static let unreachable = Code(.unreachable)
        /// The body was not what the protocol promises (HTML error page, broken JSON, empty body).
        public static let badResponse = Code(.badResponse)
        /// Some other HTTP status (404, 400, ...).
        public static let httpStatus = Code(.httpStatus)
        /// A configuration the user must fix (a bad URL, an unknown provider).
        public static let configuration = Code(.configuration)
        /// The server's usage policy asks for a User-Agent that names the application (the
        /// public Nominatim), and the one set is a stock or shared one.
        public static let userAgentRequired = Code(.userAgentRequired)
        /// The provider cannot do this (reverse geocoding with the legacy CSV protocol).
        public static let unsupported = Code(.unsupported)

        public var description: String { kind.rawValue }
    }

    public let code: Code
    /// The provider (for `userAgentRequired`, the host; for `configuration`, empty).
    public let provider: String
    /// What went wrong, in words: the server's detail, the body's problem, what is unsupported,
    /// the configuration's problem.
    public let detail: String?
    /// The HTTP status (serverError, httpStatus).
    public let status: Int?
    /// The time limit in seconds (timeout).
    public let seconds: Double?
    /// The error that caused it, where one was caught (a connection's error).
    public let underlying: (any Error & Sendable)?

    private init(_ code: Code, provider: String, detail: String? = nil, status: Int? = nil, seconds: Double? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.provider = provider
        self.detail = detail
        self.status = status
        self.seconds = seconds
        self.underlying = underlying
    }

    public static func forbidden(provider: String, detail: String) -> GeocodingError { GeocodingError(.forbidden, provider: provider, detail: detail) }
    public static func rateLimited(provider: String) -> GeocodingError { GeocodingError(.rateLimited, provider: provider) }
    public static func serverError(provider: String, status: Int) -> GeocodingError { GeocodingError(.serverError, provider: provider, status: status) }
    public static func timeout(provider: String, seconds: Double) -> GeocodingError { GeocodingError(.timeout, provider: provider, seconds: seconds) }
    public static func connection(provider: String, detail: String, underlying: (any Error & Sendable)? = nil) -> GeocodingError {
        GeocodingError(.connection, provider: provider, detail: detail, underlying: underlying)
    }
    public static func unreachable(provider: String, detail: String, underlying: (any Error & Sendable)? = nil) -> GeocodingError {
        GeocodingError(.unreachable, provider: provider, detail: detail, underlying: underlying)
    }
    public static func badResponse(provider: String, detail: String) -> GeocodingError { GeocodingError(.badResponse, provider: provider, detail: detail) }
    public static func httpStatus(provider: String, status: Int) -> GeocodingError { GeocodingError(.httpStatus, provider: provider, status: status) }
    public static func configuration(_ text: String) -> GeocodingError { GeocodingError(.configuration, provider: "", detail: text) }
    public static func userAgentRequired(host: String) -> GeocodingError { GeocodingError(.userAgentRequired, provider: host) }
    public static func unsupported(provider: String, what: String) -> GeocodingError { GeocodingError(.unsupported, provider: provider, detail: what) }

    /// Equal in everything but the error underneath (errors are not comparable).
    public static func == (a: GeocodingError, b: GeocodingError) -> Bool {
        a.code == b.code && a.provider == b.provider && a.detail == b.detail && a.status == b.status && a.seconds == b.seconds
    }

    public var isRetryable: Bool { [.rateLimited, .serverError, .timeout, .connection].contains(code) }

    /// Errors after which no further request to this provider should be sent in this run.
    public var stopsProvider: Bool { [.forbidden, .configuration, .userAgentRequired, .unreachable].contains(code) }

    /// The setting that helps, where one does (the command line names its option).
    public var setting: Setting? {
        switch code {
        case .rateLimited: return .requestRate
        case .timeout: return .geocoderTimeout
        case .unreachable: return .geocoders
        case .userAgentRequired: return .userAgent
        default: return nil
        }
    }

    public var description: String {
        let p = provider, detail = self.detail ?? "", status = self.status ?? 0
        switch code {
        case .forbidden:
            return "\(p) refused the request (HTTP 403\(detail.isEmpty ? "" : ": \(detail)")); stopping. Check the User-Agent, API key and the provider's usage policy."
        case .rateLimited: return "\(p) kept answering 'too many requests'; send fewer requests a second, or try later"
        case .serverError: return "\(p) failed with HTTP \(status) (after retries)"
        case .timeout: return "\(p) did not answer within \(String(format: "%g", seconds ?? 0)) s (after retries)"
        case .connection: return "cannot reach \(p): \(detail)"
        case .unreachable:
            return "\(p) is unreachable: \(detail). It is left out for the rest of this run: start it, correct its URL, or leave it out of the geocoders."
        case .badResponse: return "\(p) sent an answer that is not valid for its protocol: \(detail)"
        case .httpStatus: return "\(p) answered HTTP \(status)"
        case .configuration: return detail
        case .userAgentRequired:
            return "\(p) requires a User-Agent that identifies your application (its usage policy; stock and shared ones get banned): set one with contact details, such as \"myapp/1.0 (me@example.org)\""
        case .unsupported: return "\(p) cannot \(detail)"
        default: return "\(p): \(code)"
        }
    }
}
