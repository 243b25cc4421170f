import Foundation
import TrafficGeoModel

/// What a store does for `EventMerger`, with its own statements, inside the write transaction of
/// the ingest (or geocode, or prune) whose reports are being merged.
package protocol EventRows: AnyObject {
    /// The rows with these store ids (any role), as stored now.
    func rows(ids: [Int64]) throws -> [StoredIncident]
    /// Where the rows with these ids are, lean.
    func places(ids: [Int64]) throws -> [ReportPlace]
    /// The located rows that answer for events (`EventRole.report` and `.event`) on `road` (as
    /// stored) with their point between these latitudes, but for `excluded`'s reports of their own, lean.
    func eventPlaces(road: String, latitudes: ClosedRange<Double>, excluding excluded: String?) throws -> [ReportPlace]
    /// Whether any located row answers for an event that is not a report of `source`'s.
    func hasEvents(besides source: String?) throws -> Bool
    /// The store ids of each event's reports, and the reports its row lists (in the order they
    /// joined; not those that joined in this run yet).
    func members(ofEvents ids: [Int64]) throws -> [Int64: EventMembers]
    /// Makes the report `id` (an event of its own) the first report of an event. Without
    /// `eventID`, the event keeps the report's id: the report moves, as it was, to a new row and
    /// `id` becomes the event's row. With one (a rebuild giving an event its id back: free, and
    /// below the ids the store gives out), the event's row is made at that id and the report
    /// stays. The event's fields and list of reports are written by `writeEvent`.
    func promote(_ id: Int64, as eventID: Int64?) throws -> Promotion
    /// Makes a report a member of `event`, or (nil) an event of its own again.
    func setEvent(ofReport id: Int64, to event: Int64?) throws
    /// Writes an event row's fields; false when they were so already.
    func writeEvent(_ id: Int64, _ composed: EventComposition.Composed) throws -> Bool
    /// Deletes an event row that has no reports left.
    func deleteEvent(_ id: Int64) throws
}

/// Where a report that became an event's first is, and its event (`EventRows.promote`).
package struct Promotion: Sendable {
    package var event: Int64
    package var report: Int64

    package init(event: Int64, report: Int64) {
        self.event = event
        self.report = report
    }
}

/// An event's reports as its store holds them (`EventRows.members`).
package struct EventMembers: Sendable {
    package var ids: [Int64]
    package var listed: [ReportReference]

    package init(ids: [Int64], listed: [ReportReference]) {
        self.ids = ids
        self.listed = listed
    }
}

/// Reports an adoption of a former source name (`SourceMergePlan`) took out of their events, so
/// that no event holds two reports of the merged source: they look for their events again, and
/// the events they left are composed again.
package struct ReleasedReports: Sendable {
    package var reports: [Int64] = []
    package var events: Set<Int64> = []

    package init(reports: [Int64] = [], events: Set<Int64> = []) {
        self.reports = reports
        self.events = events
    }
}

/// Where a row is and what it is, as much as finding its neighbours needs.
package struct ReportPlace: Sendable {
    package var storeID: Int64
    package var source: String
    package var role: EventRole
    package var memberOf: Int64?
    package var road: String?
    /// Its line where it has one, else its point; empty without a position.
    package var shape: [Coordinate]
    /// What its validity is read from (`ReportTraits`), in seconds since 1970.
    package var times: Times

    package struct Times: Sendable {
        package var validFrom, updated, expires, ended: Double?
        package var firstSeen: Double
        package var category: IncidentCategory?

        package init(validFrom: Double?, updated: Double?, expires: Double?, ended: Double?, firstSeen: Double, category: IncidentCategory?) {
            (self.validFrom, self.updated, self.expires, self.ended, self.firstSeen, self.category) = (validFrom, updated, expires, ended, firstSeen, category)
        }
    }

    package init(storeID: Int64, source: String, role: EventRole, memberOf: Int64?, road: String?, shape: [Coordinate], times: Times) {
        self.storeID = storeID
        self.source = source
        self.role = role
        self.memberOf = memberOf
        self.road = road
        self.shape = shape
        self.times = times
    }

    /// Its validity as `ReportTraits` reads it, or wider: the start exactly, the end no earlier
    /// (the kind its words name may end it sooner; an event's reports end by its latest).
    package func validity(_ settings: ConflationSettings) -> (start: Double, end: Double) {
        let start = times.validFrom ?? times.updated ?? times.firstSeen
        let shortLived = role != .event && KindFamily(times.category).isShortLived
        return (start, ReportTraits.end(start: start, updated: times.updated, over: [times.ended, times.expires].compactMap { $0 }.min(),
                                        shortLived: shortLived, settings: settings))
    }
}

/// The events' side of what changed, for the change feed (which speaks of events): a report of
/// its own stands for its event.
public struct EventChanges: Sendable, Equatable {
    public var new: [Int64] = []
    public var updated: [Int64] = []
    public var ended: [Int64] = []
    /// Events that are no more: merged into another, or left without reports.
    public var removed: [Int64] = []
    /// Reports that joined an event in this run.
    public var joined = 0

    public init() {}
}
