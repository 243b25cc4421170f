import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Why a feed as a whole could not be read, or was read only in part (a single broken entry
/// is a `SkippedEntry` instead): its kind (`code`), the feed's
/// location, what the kind needs said (a reason, a format, an HTTP status, a limit), and the
/// error underneath where one was caught (`underlying`: a file system, network or zlib error).
///
/// A struct over kinds it keeps to itself, as AsyncHTTPClient's errors are: a kind added later
/// breaks no user's `switch`. Ask `error.code == .malformed`, or switch over `error.code` with a
/// `default`. Its words name no command-line option: `setting` says which setting helps.
public struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case notFound, unreadable, unknownFormat, empty, formatMismatch, download, httpStatus, malformed, tooLarge, corruptCompression, tooManyEntries
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// No such file.
        public static let notFound = Code(.notFound)
        /// The file is there but cannot be read.
        public static let unreadable = Code(.unreadable)
        /// The content is no format a reader knows.
        public static let unknownFormat = Code(.unknownFormat)
        /// The input has no bytes, or only white space.
        public static let empty = Code(.empty)
        /// A format was asked for, and the content is of another kind (Atom asked, JSON given).
        public static let formatMismatch = Code(.formatMismatch)
        /// The download failed (no connection, a time limit, a broken transfer).
        public static let download = Code(.download)
        /// The server answered with an HTTP status other than success.
        public static let httpStatus = Code(.httpStatus)
        /// The content breaks its format; `entriesRead` entries were read before.
        public static let malformed = Code(.malformed)
        /// Larger than the bytes one read may take.
        public static let tooLarge = Code(.tooLarge)
        /// gzip-compressed, and the compressed data is broken (corrupt or truncated).
        public static let corruptCompression = Code(.corruptCompression)
        /// More entries than one read keeps: the first `limit` were kept.
        public static let tooManyEntries = Code(.tooManyEntries)

        public var description: String { kind.rawValue }
    }

    public let code: Code
    /// The feed: a path or a URL.
    public let location: String
    /// What went wrong, in words (unreadable, download, malformed, corruptCompression).
    public let reason: String?
    /// The format read (malformed, tooManyEntries) or asked for (formatMismatch).
    public let format: FeedFormat?
    /// What the content is (formatMismatch).
    public let detectedFormat: FeedFormat?
    /// The server's HTTP status (httpStatus).
    public let status: Int?
    /// The limit passed: bytes (tooLarge) or entries (tooManyEntries).
    public let limit: Int64?
    /// Entries read before the feed broke off (malformed).
    public let entriesRead: Int
    /// The error that caused it, where one was caught.
    public let underlying: (any Error & Sendable)?

    private init(_ code: Code, _ location: String, reason: String? = nil, format: FeedFormat? = nil, detectedFormat: FeedFormat? = nil,
                 status: Int? = nil, limit: Int64? = nil, entriesRead: Int = 0, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.location = location
        self.reason = reason
        self.format = format
        self.detectedFormat = detectedFormat
        self.status = status
        self.limit = limit
        self.entriesRead = entriesRead
        self.underlying = underlying
    }

    public static func notFound(_ location: String) -> FeedError { FeedError(.notFound, location) }
    public static func unreadable(_ location: String, reason: String, underlying: (any Error & Sendable)? = nil) -> FeedError {
        FeedError(.unreadable, location, reason: reason, underlying: underlying)
    }
    /// `seen`: what the content looks like (`FeedFormat.describeContent`).
    public static func unknownFormat(_ location: String, seen: String? = nil) -> FeedError { FeedError(.unknownFormat, location, reason: seen) }
    public static func empty(_ location: String) -> FeedError { FeedError(.empty, location) }
    public static func formatMismatch(_ location: String, forced: FeedFormat, detected: FeedFormat) -> FeedError {
        FeedError(.formatMismatch, location, format: forced, detectedFormat: detected)
    }
    public static func download(_ location: String, reason: String, underlying: (any Error & Sendable)? = nil) -> FeedError {
        FeedError(.download, location, reason: reason, underlying: underlying)
    }
    public static func httpStatus(_ location: String, status: Int) -> FeedError { FeedError(.httpStatus, location, status: status) }
    public static func malformed(_ location: String, format: FeedFormat, reason: String, entriesRead: Int, underlying: (any Error & Sendable)? = nil) -> FeedError {
        FeedError(.malformed, location, reason: reason, format: format, entriesRead: entriesRead, underlying: underlying)
    }
    public static func tooLarge(_ location: String, limit: Int64) -> FeedError { FeedError(.tooLarge, location, limit: limit) }
    public static func corruptCompression(_ location: String, reason: String, underlying: (any Error & Sendable)? = nil) -> FeedError {
        FeedError(.corruptCompression, location, reason: reason, underlying: underlying)
    }
    public static func tooManyEntries(_ location: String, format: FeedFormat, limit: Int) -> FeedError {
        FeedError(.tooManyEntries, location, format: format, limit: Int64(limit))
    }

    /// Equal in everything but the error underneath (errors are not comparable).
    public static func == (a: FeedError, b: FeedError) -> Bool {
        a.code == b.code && a.location == b.location && a.reason == b.reason && a.format == b.format && a.detectedFormat == b.detectedFormat
            && a.status == b.status && a.limit == b.limit && a.entriesRead == b.entriesRead
    }

    /// What the content is, for a format mismatch: "geojson (JSON)", "datex2 (a standard's document)".
    public var detectedContent: String {
        guard let detected = detectedFormat else { return "of another kind" }
        return "\(detected.rawValue) (\(detected.family == "XML or JSON" ? "a standard's document" : detected.family))"
    }

    /// How many entries were read and kept before the feed was given up, when some were: the
    /// ingest stores them and reports the feed as read in part.
    public var entriesKept: Int? {
        if code == .malformed, entriesRead > 0 { return entriesRead }
        if code == .tooManyEntries, let limit, limit > 0 { return Int(limit) }
        return nil
    }

    /// The setting that helps, where one does (the command line names its option).
    public var setting: Setting? {
        switch code {
        case .unknownFormat, .formatMismatch: return .feedFormat
        case .tooLarge: return .maxFeedBytes
        case .tooManyEntries: return .maxEntries
        default: return nil
        }
    }

    /// What a user can do about an HTTP status, as the words after it.
    static func advice(httpStatus status: Int) -> String {
        switch status {
        case 404, 410: " (no such feed there: check the URL)"
        case 401, 403: " (the server refuses this client: the feed may need a key or a registered user agent)"
        case 429: " (too many requests: read it less often)"
        case 500...599: " (a failure on the server's side, not in the request)"
        default: ""
        }
    }

    public var description: String {
        let format = self.format?.rawValue ?? "feed", reason = self.reason ?? "", limit = self.limit ?? 0
        switch code {
        case .notFound:
            return "\(location): no such file"
        case .unreadable:
            return "\(location): cannot read: \(reason)"
        case .unknownFormat:
            let seen = reason.isEmpty ? "" : ": it is \(reason)"
            return "\(location): cannot tell the feed format from its content\(seen). trafficgeo reads Atom, RSS, the Autobahn API's JSON, "
                + "GeoJSON, CSV, DATEX II, WZDx, Open511, Waze CIFS and, through GDAL, GIS files (KML, GML, Shapefile, GeoPackage, …); if it is one of them, name the format ("
                + FeedFormat.allCases.map(\.rawValue).joined(separator: "|") + ")"
        case .empty:
            return "\(location): the feed is empty (no bytes, or only white space); nothing to read"
        case .formatMismatch:
            return "\(location): the format \(format) was asked for, but the content is \(detectedContent); ask for none to read it as that"
        case .download:
            return "\(location): download failed: \(reason)"
        case .httpStatus:
            return "\(location): the server answered HTTP \(status ?? 0)" + Self.advice(httpStatus: status ?? 0)
        case .malformed:
            // Refused before any entry was kept: nothing was stored (exit 65, not 3).
            if entriesRead == 0 { return "\(location): not a readable \(format) feed: \(reason)" }
            return "\(location): not valid \(format) after \(entriesRead) entries: \(reason)"
        case .tooLarge:
            return "\(location): larger than the limit of \(limit) bytes"
        case .corruptCompression:
            return "\(location): gzip-compressed, but \(reason)"
        case .tooManyEntries:
            return "\(location): more \(format) entries than the limit of \(limit) one read keeps; the first \(limit) were stored"
        default:
            return "\(location): \(code)"
        }
    }
}

/// An entry that was reported and left out, with the reason.
public struct SkippedEntry: Sendable, Equatable, CustomStringConvertible {
    /// 1-based position of the entry in the feed.
    public var index: Int
    public var entryID: String?
    public var line: Int?
    public var reason: String

    public init(index: Int, entryID: String? = nil, line: Int? = nil, reason: String) {
        self.index = index
        self.entryID = entryID
        self.line = line
        self.reason = reason
    }

    public var description: String {
        var place = "entry \(index)"
        if let line { place += " (line \(line))" }
        if let entryID { place += " [\(entryID)]" }
        return "\(place): \(reason)"
    }
}

/// What a reader hands to its consumer, one entry at a time.
public enum FeedEvent: Sendable {
    case incident(Incident)
    case skipped(SkippedEntry)
}

/// A streaming reader of one feed format. Readers call `handle` once per entry, in feed order, and
/// never hold more than one entry in memory. An error thrown by `handle` stops the reading.
public protocol FeedReader {
    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws
}
