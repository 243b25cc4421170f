import Foundation

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
    public let store: IncidentStore
    public let locator: IncidentLocator
    /// Incidents resolved at once (each may send several queries; the HTTP policy still limits requests).
    public var concurrency = 8
    /// Called after each incident with (done, total).
    public var progress: (@Sendable (Int, Int) -> Void)?

    public init(store: IncidentStore, locator: IncidentLocator) {
        self.store = store
        self.locator = locator
    }

    public func run(source: String? = nil, retryNotFound: Bool = false, limit: Int? = nil) async throws -> GeocodeRunSummary {
        let start = ContinuousClock.now
        let pending = try store.pendingGeocodes(source: source, retryNotFound: retryNotFound, limit: limit ?? -1)
        var summary = GeocodeRunSummary()
        summary.total = pending.count
        let geocoderName = locator.service.providers.map(\.name).joined(separator: ",")
        var done = 0
        try await withThrowingTaskGroup(of: (Int64, Result<LocatedPosition?, GeocodingError>).self) { group in
            var next = pending.makeIterator()
            func addNext() -> Bool {
                guard let stored = next.next() else { return false }
                let locator = self.locator
                group.addTask {
                    do {
                        return (stored.storeID, .success(try await locator.locate(title: stored.incident.title, text: stored.incident.summary)))
                    } catch let error as GeocodingError {
                        return (stored.storeID, .failure(error))
                    }
                }
                return true
            }
            for _ in 0..<max(1, concurrency) where !addNext() { break }
            while let (storeID, result) = try await group.next() {
                try store.recordGeocode(storeID: storeID, result: result, geocoder: geocoderName)
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
                if summary.stoppedBecause != nil || Task.isCancelled { continue }
                _ = addNext()
            }
        }
        if Task.isCancelled, summary.stoppedBecause == nil { summary.stoppedBecause = "interrupted" }
        summary.statistics = await locator.service.statistics
        summary.elapsed = ContinuousClock.now - start
        return summary
    }
}
