import Foundation
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoStore

/// What a geocoding run did.
public struct GeocodeRunSummary: Sendable {
    public var total = 0
    public var found: [GeocodePrecision: Int] = [:]
    public var notFound = 0
    public var failed = 0
    public var statistics = GeocodingStatistics()
    public var elapsed: Duration = .zero
    /// Set when the run stopped early (a provider refused us, or it was cancelled).
    public var stoppedBecause: String?

    public var foundTotal: Int { found.values.reduce(0, +) }
}

/// Geocodes the incidents that wait for a position, a few at a time, recording each outcome in
/// its own small transaction: an interrupted run loses nothing and the next one continues.
///
///     let run = PendingGeocoder(store: store, locator: IncidentLocator(service: service))
///     let summary = try await run.run()
public struct PendingGeocoder: Sendable {
    public let store: any IncidentStore
    public let locator: IncidentLocator
    /// Incidents resolved at once (each may send several queries; the HTTP policy still limits requests).
    public var concurrency = 8
    /// Called after each incident with (done, total).
    public var progress: (@Sendable (Int, Int) -> Void)?

    public init(store: any IncidentStore, locator: IncidentLocator) {
        self.store = store
        self.locator = locator
    }

    public func run(source: String? = nil, retryNotFound: Bool = false, limit: Int? = nil) async throws -> GeocodeRunSummary {
        let start = ContinuousClock.now
        let pending = try await store.pendingGeocodes(source: source, retryNotFound: retryNotFound, limit: limit ?? -1)
        var summary = GeocodeRunSummary()
        summary.total = pending.count
        let geocoderName = locator.service.providers.map(\.name).joined(separator: ",")
        var done = 0

        func record(_ storeID: Int64, _ result: Result<LocatedPosition?, GeocodingError>) async throws {
            try await store.recordGeocode(storeID: storeID, result: result, geocoder: geocoderName)
            switch result {
            case let .success(found?): summary.found[found.precision, default: 0] += 1
            case .success(nil): summary.notFound += 1
            case let .failure(error):
                summary.failed += 1
                if error.stopsProvider, summary.stoppedBecause == nil, await locator.service.isExhausted {
                    summary.stoppedBecause = error.description
                }
            }
            done += 1
            progress?(done, pending.count)
        }

        // Messages of one road are resolved together, with what the store knows of the road
        // (RoadResolver); messages without a road one by one.
        var byRoad: [String: [RoadResolver.Item]] = [:]
        var roadless: [StoredIncident] = []
        for stored in pending {
            let message = TrafficMessageParser.parse(title: stored.incident.title, text: stored.incident.summary)
            if let road = message.road ?? stored.incident.road {
                byRoad[road, default: []].append(RoadResolver.Item(id: stored.storeID, message: message))
            } else {
                roadless.append(stored)
            }
        }
        if !byRoad.isEmpty {
            let known = try await store.knownJunctions(roads: Set(byRoad.keys))
            var resolver = RoadResolver(locator: locator)
            resolver.concurrency = concurrency
            for road in byRoad.keys.sorted() {
                if summary.stoppedBecause != nil || Task.isCancelled { break }
                let items = byRoad[road]!
                let knowledge = RoadKnowledge(road: road, junctions: known, positions: try await store.roadPositions(road: road))
                let outcome = await resolver.resolve(road: road, items: items, knowledge: knowledge)
                for item in items {
                    try await record(item.id, outcome.results[item.id] ?? .success(nil))
                }
                try await store.recordJunctionObservations(outcome.learned, observer: "geocoder")
            }
        }

        try await withThrowingTaskGroup(of: Located.self) { group in
            var next = roadless.makeIterator()
            let locator = self.locator
            func addNext() -> Bool {
                guard summary.stoppedBecause == nil, !Task.isCancelled, let stored = next.next() else { return false }
                group.addTask { try await Self.locate(stored, with: locator) }
                return true
            }
            for _ in 0..<max(1, concurrency) where !addNext() { break }
            while let located = try await group.next() {
                try await record(located.storeID, located.result)
                _ = addNext()
            }
        }
        if Task.isCancelled, summary.stoppedBecause == nil { summary.stoppedBecause = "interrupted" }
        summary.statistics = await locator.service.statistics
        summary.elapsed = ContinuousClock.now - start
        return summary
    }

    /// What a child task hands back: the incident and where it was found (or why not).
    struct Located: Sendable {
        let storeID: Int64
        let result: Result<LocatedPosition?, GeocodingError>
    }

    /// One child task's whole work, its result settled before the answer is built: a tuple
    /// `(id, .success(try await …))` returned from a task lost its first element in the release
    /// build of Swift 6.3.1 (AutobahnAPI.download says more). Errors other than geocoding's
    /// (cancellation) end the run.
    private static func locate(_ stored: StoredIncident, with locator: IncidentLocator) async throws -> Located {
        let result: Result<LocatedPosition?, GeocodingError>
        do {
            result = .success(try await locator.locate(title: stored.incident.title, text: stored.incident.summary))
        } catch let error as GeocodingError {
            result = .failure(error)
        }
        return Located(storeID: stored.storeID, result: result)
    }
}
