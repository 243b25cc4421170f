import TrafficGeoFeeds
import TrafficGeoGeocoding

/// What one ingest did: the numbers the CLI prints.
public struct IngestSummary: Sendable, Equatable {
    public var source: String
    public var format: FeedFormat?
    /// Entries read from the feed (kept and skipped).
    public var read = 0
    public var new = 0
    public var updated = 0
    public var unchanged = 0
    /// Incidents of the source that a snapshot no longer listed (`SnapshotScope`).
    public var ended = 0
    /// Reports that joined an event another feed reported too (docs/conflation.md).
    public var merged = 0
    /// The change-feed events this ingest recorded (none when nothing changed).
    public var changes: ClosedRange<Int64>?
    public var skipped: [SkippedEntry] = []
    /// Kept incidents that have no position yet (they wait for a geocoder).
    public var withoutPosition = 0
    /// Of those, the ones whose feed position could not be used (out of range, unreadable).
    public var positionsIgnored = 0
    /// Junction positions learned from the positioned messages (SQLiteIncidentStore+Junctions).
    public var junctionObservations = 0
    /// Feed positions far from the junctions their own words name (swapped back where that fits).
    public var positionConflicts: [PositionConflict] = []
    /// A feed-level problem after which nothing more could be read (the entries before it were kept).
    public var feedError: String?
    /// The feed's own error behind `feedError`, when one stopped the read (a command line
    /// adds its advice to it: `TrafficGeoExit.describe`).
    public var feedFailure: FeedError?

    public init(source: String, format: FeedFormat? = nil) {
        self.source = source
        self.format = format
    }

    public var isComplete: Bool { skipped.isEmpty && feedError == nil }
}
