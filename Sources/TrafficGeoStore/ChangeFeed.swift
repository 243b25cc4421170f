import Foundation
import TrafficGeoModel

/// What happened to an incident, as the change feed records it (docs/live.md).
public enum ChangeKind: String, Sendable, CaseIterable, Codable {
    /// First stored.
    case new
    /// Its fields changed (also: a geocoder found its position, or it reappeared after it ended).
    case updated
    /// A snapshot of its source no longer listed it, or the feed said it is over
    /// (`Incident.endedAt`): kept with an `ended` time.
    case ended
    /// Deleted from the store (`prune`).
    case removed

    /// As stored: a small integer.
    package var storeCode: Int64 {
        switch self {
        case .new: 0
        case .updated: 1
        case .ended: 2
        case .removed: 3
        }
    }

    package init?(storeCode: Int64) {
        switch storeCode {
        case 0: self = .new
        case 1: self = .updated
        case 2: self = .ended
        case 3: self = .removed
        default: return nil
        }
    }
}

/// One event of the change feed: sequence numbers rise by one per event and are never reused,
/// also after old events are pruned.
public struct Change: Sendable, Equatable {
    public var sequence: Int64
    public var at: Date
    public var kind: ChangeKind
    public var storeID: Int64

    public init(sequence: Int64, at: Date, kind: ChangeKind, storeID: Int64) {
        self.sequence = sequence
        self.at = at
        self.kind = kind
        self.storeID = storeID
    }
}

/// Which events the change feed still holds.
public struct ChangeFeedBounds: Sendable, Equatable {
    /// The oldest event still kept (`latest + 1` when none is).
    public var first: Int64
    /// The newest event (0 before the first).
    public var latest: Int64

    public init(first: Int64, latest: Int64) {
        self.first = first
        self.latest = latest
    }
}

/// An ingest of a source's whole current state: what the source no longer lists has ended.
///
/// A source fetched in parts (the Autobahn API: one document per road and service) names the parts
/// that were read whole; incidents of other parts (a road that failed this time) are left alone.
/// An incident's part is its `Incident.snapshotPartProperty`.
public struct SnapshotScope: Sendable, Equatable {
    /// nil: the whole source.
    public var parts: Set<String>?

    public init(parts: Set<String>?) { self.parts = parts }

    public static let wholeSource = SnapshotScope(parts: nil)
}

/// The outcome of one fetch of a source, for feed health (`trafficgeo stats`).
public struct FetchReport: Sendable, Equatable {
    public var source: String
    public var at: Date
    /// Entries read (0 with `errors` alone: the fetch failed).
    public var entries: Int
    /// What went wrong; for a source fetched in parts, one line per failed part.
    public var errors: [String]
    /// Whether anything was read at all (a source in parts may fail partly).
    public var readSomething: Bool

    public init(source: String, at: Date = Date(), entries: Int, errors: [String] = [], readSomething: Bool = true) {
        self.source = source
        self.at = at
        self.entries = entries
        self.errors = errors
        self.readSomething = readSomething
    }

    public static func failure(source: String, at: Date = Date(), error: String) -> FetchReport {
        FetchReport(source: source, at: at, entries: 0, errors: [error], readSomething: false)
    }
}

/// How a source's fetches went lately.
public struct FeedHealth: Sendable, Equatable {
    public var source: String
    public var lastAttempt: Date?
    /// The last fetch that read something.
    public var lastSuccess: Date?
    public var lastError: String?
    public var lastErrorAt: Date?
    /// Fetches in a row that came back with no entries (and no error).
    public var emptyStreak: Int
    /// Fetches in a row that failed, wholly or in part.
    public var failureStreak: Int
    /// Entries the last successful fetch read.
    public var lastEntries: Int?
    /// The last read as a snapshot (whole, or in parts): it vouches for the reports it still
    /// lists (`StoredIncident.listedAt`).
    public var lastSnapshot: Date?

    public init(source: String, lastAttempt: Date? = nil, lastSuccess: Date? = nil, lastError: String? = nil, lastErrorAt: Date? = nil,
                emptyStreak: Int = 0, failureStreak: Int = 0, lastEntries: Int? = nil, lastSnapshot: Date? = nil) {
        self.lastSnapshot = lastSnapshot
        self.source = source
        self.lastAttempt = lastAttempt
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.emptyStreak = emptyStreak
        self.failureStreak = failureStreak
        self.lastEntries = lastEntries
    }
}
