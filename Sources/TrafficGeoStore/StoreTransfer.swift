import Foundation
import TrafficGeoGeocoding
import TrafficGeoModel

/// Everything a store holds, as plain records, in the order a store is rebuilt from them: what
/// `trafficgeo copy` moves from one store to another (an SQLite file to PostGIS and back),
/// losing nothing: store ids (the change feed names them), first-seen and change times, ended
/// times, geocoding status, feed health, the change feed and its numbering, the geocoder's
/// answer cache and the junction knowledge.
public enum StoreRecord: Sendable, Equatable {
    case source(SourceRecord)
    case incident(IncidentRecord)
    /// One run of the change feed (`seq`…`seq + count − 1` concern `firstID`…).
    case changes(ChangeRun)
    /// The last sequence number the source store gave out (kept when the events are pruned).
    case changeSequence(Int64)
    case geocodeAnswer(CachedGeocodeAnswer)
    case junctionObservation(JunctionObservationRecord)
    case junction(JunctionRecord)
}

public struct SourceRecord: Sendable, Equatable {
    public var name: String
    /// The name a migration gave up (`FormerSourceNames`).
    public var renamedFrom: String?
    public var health: FeedHealth

    public init(name: String, renamedFrom: String?, health: FeedHealth) {
        self.name = name
        self.renamedFrom = renamedFrom
        self.health = health
    }
}

public struct IncidentRecord: Sendable, Equatable {
    public var stored: StoredIncident
    /// nil: not tried; found, not-found, failed.
    public var geocodeStatus: String?
    public var geocodeError: String?
    public var geocodeAttempts: Int

    public init(stored: StoredIncident, geocodeStatus: String?, geocodeError: String?, geocodeAttempts: Int) {
        self.stored = stored
        self.geocodeStatus = geocodeStatus
        self.geocodeError = geocodeError
        self.geocodeAttempts = geocodeAttempts
    }
}

public struct ChangeRun: Sendable, Equatable {
    public var sequence: Int64
    public var count: Int64
    public var at: Double
    public var kind: ChangeKind
    public var firstID: Int64

    public init(sequence: Int64, count: Int64, at: Double, kind: ChangeKind, firstID: Int64) {
        self.sequence = sequence
        self.count = count
        self.at = at
        self.kind = kind
        self.firstID = firstID
    }
}

public struct CachedGeocodeAnswer: Sendable, Equatable {
    /// The cache key: provider and normalised query.
    public var request: String
    public var status: String
    /// The answer as JSON, as the cache keeps it.
    public var response: String
    public var fetched: Double

    public init(request: String, status: String, response: String, fetched: Double) {
        self.request = request
        self.status = status
        self.response = response
        self.fetched = fetched
    }
}

public struct JunctionObservationRecord: Sendable, Equatable {
    public var nameKey: String
    public var observer: String
    public var observation: JunctionObservation

    public init(nameKey: String, observer: String, observation: JunctionObservation) {
        self.nameKey = nameKey
        self.observer = observer
        self.observation = observation
    }
}

public struct JunctionRecord: Sendable, Equatable {
    public var nameKey: String
    public var junction: KnownJunction

    public init(nameKey: String, junction: KnownJunction) {
        self.nameKey = nameKey
        self.junction = junction
    }
}

extension ChangeRun {
    /// The events in `runs` (oldest first) after `sequence`, at most `limit`: a store reads the
    /// run that holds event `sequence + 1` and the runs after it, and expands them here.
    package static func events(_ runs: [ChangeRun], after sequence: Int64, limit: Int) -> [Change] {
        var events: [Change] = []
        let sequence = min(max(sequence, 0), Int64.max - 1)   // no arithmetic on a caller's extreme can trap
        for run in runs {
            var k = max(0, sequence + 1 - run.sequence)
            while k < run.count, events.count < limit {
                events.append(Change(sequence: run.sequence + k, at: Date(timeIntervalSince1970: run.at), kind: run.kind, storeID: run.firstID + k))
                k += 1
            }
            if events.count >= limit { break }
        }
        return events
    }
}

/// How many records of each kind a copy moved.
public struct TransferSummary: Sendable, Equatable {
    public var sources = 0, incidents = 0, changes = 0, geocodeAnswers = 0, junctionObservations = 0, junctions = 0

    public init() {}

    public mutating func count(_ record: StoreRecord) {
        switch record {
        case .source: sources += 1
        case .incident: incidents += 1
        case let .changes(run): changes += Int(run.count)
        case .changeSequence: break
        case .geocodeAnswer: geocodeAnswers += 1
        case .junctionObservation: junctionObservations += 1
        case .junction: junctions += 1
        }
    }
}

/// A store that can hand over everything it holds, and be filled from such records.
public protocol TransferableStore: IncidentStore {
    /// Every record, sources first, then incidents in store-id order, then the rest; from one
    /// consistent state of the store.
    @available(*, noasync, message: "blocks its thread: run it on a store thread (StoreThreads.run) in async code")
    func exportRecords(_ handle: (StoreRecord) throws -> Void) throws
    /// Fills an empty store (a store with incidents or sources is refused) from `read`'s records,
    /// in one transaction: an error leaves it empty.
    @available(*, noasync, message: "blocks its thread: run it on a store thread (StoreThreads.run) in async code")
    func importRecords(_ read: ((StoreRecord) throws -> Void) throws -> Void) throws -> TransferSummary
}
