import Foundation
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// How each batch row is geocoded.
public enum BatchMode: String, Sendable, CaseIterable {
    /// Traffic titles ("A4 : Koeln - Olpe", "zwischen AS X und AS Y") through the locator, the rest as plain queries.
    case auto
    /// Every row is a plain geocoder query (an address, a place, a junction name).
    case query
    /// Every row is a traffic-message title (with an optional text column).
    case title
}

/// The outcome of one row.
public struct BatchRowResult: Sendable, Equatable {
    public enum Status: String, Sendable {
        case found
        case notFound = "not-found"
        /// The geocoder failed (after its retries); a re-run asks again.
        case failed
        /// The row had nothing to look up.
        case empty
        /// Not reached: the run was interrupted; a re-run does it.
        case pending
    }

    public var status: Status
    public var position: Coordinate?
    public var precision: GeocodePrecision?
    public var confidence: Double?
    public var provider: String?
    public var error: String?

    public init(status: Status, position: Coordinate? = nil, precision: GeocodePrecision? = nil, confidence: Double? = nil,
                provider: String? = nil, error: String? = nil) {
        self.status = status
        self.position = position
        self.precision = precision
        self.confidence = confidence
        self.provider = provider
        self.error = error
    }

    /// The output fields, in `BatchTable.resultColumns` order.
    public var fields: [String?] {
        [position.map { String(format: "%.7f", $0.latitude) }, position.map { String(format: "%.7f", $0.longitude) },
         precision?.rawValue, confidence.map { String(format: "%.2f", $0) }, provider, status.rawValue, error]
    }
}

/// What a batch run did, for the summary and the exit code.
public struct BatchSummary: Sendable {
    public var rows = 0
    public var unique = 0
    public var found = 0
    public var notFound = 0
    public var failed = 0
    public var empty = 0
    public var pending = 0
    /// Answers that came from the cache instead of the network.
    public var fromCache = 0
    public var requests = 0
    public var elapsed: Duration = .zero

    /// Every row has a final answer (found, not found or empty).
    public var isComplete: Bool { failed == 0 && pending == 0 }
}

/// Progress of a running batch, for the progress line.
public struct BatchProgress: Sendable {
    public var done: Int
    public var total: Int
    public var failed: Int
    public var elapsed: Duration
}

/// Geocodes a list of queries: each distinct query once (the cache makes a re-run resume without
/// asking again), rows answered in input order; when stopped, the work in flight gets
/// `stopGrace` to finish and the rest stays pending.
///
///     let batch = BatchGeocoder(service: service)
///     let summary = try await batch.run(queries: ["Köln", "Olpe"], texts: nil) { row, result in print(row, result.status) }
public struct BatchGeocoder: Sendable {
    public let service: GeocodingService
    public var mode: BatchMode = .auto
    /// Distinct queries resolved at once (the HTTP policy still limits requests per server).
    public var concurrency = 8
    public var countryCodes: [String] = []
    /// How long queries in flight may still finish after a stop was asked.
    public var stopGrace: Duration = .seconds(2)

    public init(service: GeocodingService) { self.service = service }

    /// The distinct questions of a list: what `--dry-run` reports.
    public func plan(queries: [String], texts: [String?]? = nil) -> (unique: Int, empty: Int) {
        var keys = Set<String>()
        var empty = 0
        for (i, q) in queries.enumerated() {
            guard let key = key(q, texts?[i] ?? nil) else { empty += 1; continue }
            keys.insert(key)
        }
        return (keys.count, empty)
    }

    /// Runs the batch. `emit(row, result)` is called for every row, in input order. Once `stop`
    /// is requested (Ctrl-C), no new query starts, those in flight have `stopGrace` to finish,
    /// and every row not answered is `pending`.
    public func run(queries: [String], texts: [String?]? = nil, until stop: StopRequest = StopRequest(),
                    progress: (@Sendable (BatchProgress) -> Void)? = nil,
                    emit: (Int, BatchRowResult) throws -> Void) async throws -> BatchSummary {
        let start = ContinuousClock.now
        let before = await service.statistics
        var summary = BatchSummary()
        summary.rows = queries.count
        // Distinct questions, in order of first appearance.
        var order: [String] = []
        var rowsByKey: [String: [Int]] = [:]
        var keyOfRow = [String?](repeating: nil, count: queries.count)
        var work: [String: (String, String?)] = [:]
        for (i, q) in queries.enumerated() {
            let text = texts?[i] ?? nil
            guard let k = key(q, text) else { continue }
            keyOfRow[i] = k
            if rowsByKey[k] == nil { order.append(k); work[k] = (q, text) }
            rowsByKey[k, default: []].append(i)
        }
        summary.unique = order.count

        var results: [String: BatchRowResult] = [:]
        var nextRow = 0
        var doneRows = 0
        func flush(final: Bool) throws {
            while nextRow < queries.count {
                let result: BatchRowResult
                if let k = keyOfRow[nextRow] {
                    if let r = results[k] { result = r } else if final { result = BatchRowResult(status: .pending) } else { return }
                } else {
                    result = BatchRowResult(status: .empty)
                }
                switch result.status {
                case .found: summary.found += 1
                case .notFound: summary.notFound += 1
                case .failed: summary.failed += 1
                case .empty: summary.empty += 1
                case .pending: summary.pending += 1
                }
                try emit(nextRow, result)
                nextRow += 1
            }
        }

        // Work tasks answer (key, result); the stop watcher answers nil once a stop was asked and
        // the work in flight had `stopGrace` to finish: what is still running then is cancelled
        // and its rows stay pending (a server that does not answer must not hold up Ctrl-C).
        try await withThrowingTaskGroup(of: (String, BatchRowResult)?.self) { group in
            var iterator = order.makeIterator()
            var stopped = false
            var running = 0
            func launch() -> Bool {
                guard !stopped else { return false }
                if stop.isRequested { stopped = true; return false }
                guard let k = iterator.next(), let (q, text) = work[k] else { return false }
                group.addTask {
                    // The answer is built after the await, never around it: `(k, await …)`
                    // is the shape Swift 6.3.1 -O miscompiled (AutobahnAPI.download).
                    let result = await self.resolve(q, text: text)
                    return (k, result)
                }
                running += 1
                return true
            }
            for _ in 0..<max(1, concurrency) where !launch() { break }
            let grace = stopGrace
            group.addTask {
                await stop.requested()
                try await Task.sleep(for: grace)    // cancelled (all work done): throws, and no stop is reported
                return nil
            }
            while running > 0, let answer = try await group.next() {
                guard let (k, result) = answer else {
                    group.cancelAll()   // the stop watcher: give up on what is in flight
                    stopped = true
                    continue
                }
                running -= 1
                if result.status != .pending { results[k] = result }
                doneRows += rowsByKey[k]?.count ?? 0
                try flush(final: false)
                progress?(BatchProgress(done: doneRows, total: queries.count, failed: summary.failed, elapsed: ContinuousClock.now - start))
                _ = launch()
            }
            group.cancelAll()   // the stop watcher, when everything finished first
        }
        try flush(final: true)
        let after = await service.statistics
        summary.requests = after.requests - before.requests
        summary.fromCache = after.cacheHits - before.cacheHits
        summary.elapsed = ContinuousClock.now - start
        return summary
    }

    /// The de-duplication key of a row, nil when there is nothing to look up.
    private func key(_ query: String, _ text: String?) -> String? {
        let folded = TextFolding.fold(query)
        guard !folded.isEmpty else { return nil }
        return "\(useLocator(query, text) ? "t" : "q")|\(folded)|\(text.map(TextFolding.fold) ?? "")"
    }

    private func useLocator(_ query: String, _ text: String?) -> Bool {
        switch mode {
        case .query: return false
        case .title: return true
        case .auto:
            let m = TrafficMessageParser.parse(title: query, text: text)
            return m.road != nil && (m.from != nil || !m.routeEnds.isEmpty)
        }
    }

    private func resolve(_ query: String, text: String?) async -> BatchRowResult {
        do {
            if useLocator(query, text) {
                var locator = IncidentLocator(service: service)
                if !countryCodes.isEmpty { locator.countryCodes = countryCodes }
                guard let found = try await locator.locate(title: query, text: text) else { return BatchRowResult(status: .notFound) }
                return BatchRowResult(status: .found, position: found.position, precision: found.precision,
                                      confidence: found.confidence, provider: found.provider)
            }
            let answer = try await service.search(GeocodeQuery(query, countryCodes: countryCodes, limit: 5))
            guard let best = answer.candidates.first else { return BatchRowResult(status: .notFound, provider: answer.provider) }
            let precision: GeocodePrecision
            switch best.kind {
            case .junction: precision = .junction
            case .town: precision = .town
            case .road: precision = .road
            case .other: precision = .address
            }
            return BatchRowResult(status: .found, position: best.coordinate, precision: precision,
                                  confidence: best.score.map { min(1, max(0, $0)) }, provider: best.provider ?? answer.provider)
        } catch {
            if Task.isCancelled || error is CancellationError { return BatchRowResult(status: .pending) }
            return BatchRowResult(status: .failed, error: "\(error)")
        }
    }
}
