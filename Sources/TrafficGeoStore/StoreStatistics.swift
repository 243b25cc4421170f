import Foundation

/// The numbers `trafficgeo stats` shows.
public struct StoreStatistics: Sendable {
    public var path: String
    public var indexCRS: String
    /// Events (docs/conflation.md).
    public var total = 0
    public var located = 0
    /// Each event is in one state: ended (whose reports a snapshot of their source no longer
    /// listed, or their feed said are over), else expired (its end time passed), else
    /// unconfirmed (no end given and not heard of for `IncidentFilter.defaultUnconfirmedAfter`),
    /// else active (in effect: begun, as `--active-at` asks), else upcoming (begins later, or
    /// resumes later: outside its recurring schedule's hours). They
    /// add up to `total`.
    public var active = 0
    public var expired = 0
    public var ended = 0
    public var unconfirmed = 0
    public var upcoming = 0
    /// The reports the feeds gave, which make the events.
    public var reports = 0
    /// Events that more than one report describes.
    public var mergedEvents = 0
    /// The change feed's events still kept.
    public var changeFeed = ChangeFeedBounds(first: 1, latest: 0)
    /// How each source's fetches went (`IncidentStore.feedHealth`).
    public var feedHealth: [FeedHealth] = []
    /// What the spatial index is.
    public var indexKind = "geocentric R*Tree of blocks"
    /// Whether the index is the SQLite store's R*Tree of blocks (`indexBlocks`, `indexSingles`).
    public var hasBlockIndex = true
    /// Spatial index entries: blocks of consecutive incidents, and single incidents.
    public var indexBlocks = 0
    public var indexSingles = 0
    public var oldestUpdate: Date?
    public var newestUpdate: Date?
    public var bySource: [(String, Int)] = []
    public var byCategory: [(String, Int)] = []
    public var byRoad: [(String, Int)] = []
    public var byPositionSource: [(String, Int)] = []
    public var geocodeCacheEntries = 0
    /// Junctions whose position the store knows (`trafficgeo junctions list`), and on how many roads.
    public var knownJunctions = 0
    public var junctionRoads = 0
    public var fileBytes: Int64 = 0

    public init(path: String, indexCRS: String) {
        self.path = path
        self.indexCRS = indexCRS
    }
}

/// The incidents of a store, all and active (`IncidentStore.incidentCounts`).
public struct IncidentCounts: Sendable, Equatable {
    public var all: Int
    /// Begun, not expired and not ended at the time asked about (as `--active-at`).
    public var active: Int

    public init(all: Int, active: Int) {
        self.all = all
        self.active = active
    }
}
