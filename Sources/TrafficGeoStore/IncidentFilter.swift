import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Conditions every query accepts: time, road, category and words. A store turns them into its
/// query language with bound parameters only, never string-spliced user input
/// (`IncidentFilter+SQL` for SQLite).
public struct IncidentFilter: Sendable, Equatable {
    /// Active at this instant: updated ≤ t < expires and not ended by t (a missing bound does
    /// not exclude).
    public var activeAt: Date?
    /// Updated at or after.
    public var since: Date?
    /// Updated before.
    public var until: Date?
    /// Normalised road references (A4); any of them matches.
    public var roads: [String] = []
    public var categories: [IncidentCategory] = []
    /// Every word must occur in the title, summary or road (folded: case, diacritics, umlauts).
    public var words: [String] = []
    public var source: String?
    /// Geocoded incidents placed at least this surely (positions a feed gave always pass).
    public var minConfidence: Double?
    /// Geocoded incidents of these precisions (positions a feed gave always pass).
    public var precisions: [GeocodePrecision] = []
    /// Answer with the reports the feeds gave (each naming its event) instead of the events they
    /// make (docs/conflation.md): `--reports`, `reports=true`.
    public var reports = false

    public init(activeAt: Date? = nil, since: Date? = nil, until: Date? = nil, road: String? = nil, roads: [String] = [],
                categories: [IncidentCategory] = [], search: String? = nil, source: String? = nil) {
        self.activeAt = activeAt
        self.since = since
        self.until = until
        self.roads = (road.map { [$0] } ?? []) + roads
        self.roads = self.roads.map { RoadReference.normalize($0) ?? $0 }
        self.categories = categories
        self.words = search.map { TextFolding.fold($0).split(separator: " ").map(String.init) } ?? []
        self.source = source
    }

    public var isEmpty: Bool { self == IncidentFilter() }

    /// The most words a search may hold, and its longest text: every word is a scan of every
    /// row's text, and SQLite refuses a deep enough expression ("Expression tree is too large").
    public static let maxWords = 16
    public static let maxSearchBytes = 1_000
}
