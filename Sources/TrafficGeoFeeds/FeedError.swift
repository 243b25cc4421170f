import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Why a feed as a whole could not be read (a single broken entry is a `SkippedEntry` instead).
/// The words name no command-line option: the CLI says which of its options help
/// (`FeedError.commandLineText` in the trafficgeo target).
public enum FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound(String)
    case unreadable(String, reason: String)
    case unknownFormat(String)
    /// The input has no bytes, or only white space.
    case empty(String)
    /// `--format` names a format of another kind than the content (Atom asked, JSON given).
    case formatMismatch(String, forced: FeedFormat, detected: FeedFormat)
    case download(String, reason: String)
    case httpStatus(String, status: Int)
    case malformed(String, format: FeedFormat, reason: String, entriesRead: Int)
    case tooLarge(String, limit: Int64)
    /// gzip-compressed, and the compressed data is broken (corrupt or truncated).
    case corruptCompression(String, reason: String)
    /// More entries than one read keeps (`limit`, the ingest's setting): the first `limit` were kept.
    case tooManyEntries(String, format: FeedFormat, limit: Int)

    /// How many entries were read and kept before the feed was given up, when some were: the
    /// ingest stores them and reports the feed as read in part.
    public var entriesKept: Int? {
        switch self {
        case let .malformed(_, _, _, entriesRead) where entriesRead > 0: return entriesRead
        case let .tooManyEntries(_, _, limit) where limit > 0: return limit
        default: return nil
        }
    }

    /// The setting that helps, where one does (the command line names its option).
    public var setting: Setting? {
        switch self {
        case .unknownFormat, .formatMismatch: return .feedFormat
        case .tooLarge: return .maxFeedBytes
        case .tooManyEntries: return .maxEntries
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case let .notFound(location):
            return "\(location): no such file"
        case let .unreadable(location, reason):
            return "\(location): cannot read: \(reason)"
        case let .unknownFormat(location):
            return "\(location): cannot tell the feed format from its content; name the format (\(FeedFormat.allCases.map(\.rawValue).joined(separator: "|")))"
        case let .empty(location):
            return "\(location): the feed is empty (no bytes, or only white space); nothing to read"
        case let .formatMismatch(location, forced, detected):
            return "\(location): the format \(forced.rawValue) was asked for, but the content is \(detected.rawValue) (\(detected.family == "XML or JSON" ? "a standard's document" : detected.family)); ask for none to read it as that"
        case let .download(location, reason):
            return "\(location): download failed: \(reason)"
        case let .httpStatus(location, status):
            return "\(location): the server answered HTTP \(status)"
        case let .malformed(location, format, reason, entriesRead):
            // Refused before any entry was kept: nothing was stored (exit 65, not 3).
            if entriesRead == 0 { return "\(location): not a readable \(format) feed: \(reason)" }
            return "\(location): not valid \(format) after \(entriesRead) entries: \(reason)"
        case let .tooLarge(location, limit):
            return "\(location): larger than the limit of \(limit) bytes"
        case let .corruptCompression(location, reason):
            return "\(location): gzip-compressed, but \(reason)"
        case let .tooManyEntries(location, format, limit):
            return "\(location): not valid \(format) after \(limit) entries: more entries than the limit of \(limit) a feed may hold; the first \(limit) were kept"
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
