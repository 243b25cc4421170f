import CoreMetrics
import Foundation
import TrafficGeoFeeds
import TrafficGeoStore
import TrafficGeoSupport

/// Keeps a store fed (`trafficgeo ingest --every`, `watch --source`): every source is read on a
/// schedule of its own, one read of a source at a time, and the sources side by side, so one
/// that hangs holds up no other.
///
/// - A source read successfully is read again `interval` after that read began.
/// - A source that fails is tried again after a backoff that doubles with every failure in a row
///   (`FeedBackoff`: from `interval`, at most `maxBackoff`), with jitter, so that many loops
///   (or many sources of one server) do not come back in step. The store's feed health records
///   every failure (`trafficgeo stats`, serve's /ready and /metrics).
/// - After each read the loop forgets change-feed events older than `keepChanges`.
/// - Once its `StopRequest` is requested, no read begins, waits end, downloads in progress are
///   cancelled, and a read that is writing finishes its transaction: the store is left with
///   each source either as it was or as the feed said, never half-written.
///
///     var loop = FeedLoop(ingestor: FeedIngestor(store: store), sources: ["autobahn:", "https://…/feed.xml"])
///     loop.interval = .seconds(120)
///     await loop.run(until: StopRequest.onSignals())
///
/// What the loop counts goes through swift-metrics (`MetricsSystem`): the program that runs it
/// bootstraps a backend (the command line writes a Prometheus textfile).
public struct FeedLoop: Sendable {
    public var ingestor: FeedIngestor
    /// Each read once, in the order given (a source given twice is read once).
    public var sources: [String]
    /// From the start of one successful read of a source to the start of its next.
    public var interval: Duration = .seconds(120)
    /// The longest wait after failures.
    public var maxBackoff: Duration = .seconds(900)
    /// Change-feed events older than this are forgotten after each read; nil: kept.
    public var keepChanges: Duration? = .seconds(7 * 86_400)
    /// Runs after every read that stored something, before the source's next wait (the command
    /// line geocodes what came without a position). An error it throws counts as the read's.
    public var afterRead: @Sendable (_ location: String, _ summary: IngestSummary) async throws -> Void = { _, _ in }
    /// How each read went, as it happens.
    public var onRead: @Sendable (FeedLoopRead) async -> Void = { _ in }

    public init(ingestor: FeedIngestor, sources: [String]) {
        self.ingestor = ingestor
        var seen = Set<String>()
        self.sources = sources.filter { seen.insert($0).inserted }
    }

    /// Reads every source once, side by side, and returns how each went (in the sources' order).
    public func runOnce() async -> [FeedLoopRead] {
        await withTaskGroup(of: (Int, FeedLoopRead).self) { group in
            for (index, location) in sources.enumerated() {
                group.addTask {
                    let read = await readOnce(location, failuresBefore: 0)
                    return (index, read)
                }
            }
            var reads: [(Int, FeedLoopRead)] = []
            for await read in group { reads.append(read) }
            return reads.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Reads every source on its schedule until `stop` is requested; returns once every read in
    /// progress has ended (a write finished, a download cancelled).
    public func run(until stop: StopRequest) async {
        await withTaskGroup(of: Void.self) { group in
            for location in sources {
                group.addTask { await follow(location, until: stop) }
            }
            // The watcher: turns a stop into cancellation, which ends downloads and waits.
            group.addTask { await stop.requested() }
            _ = await group.next()
            // Either the stop came or (no sources) every follower ended: end the rest.
            group.cancelAll()
            await group.waitForAll()
        }
    }

    /// One source's schedule.
    private func follow(_ location: String, until stop: StopRequest) async {
        var failures = 0
        while !stop.isRequested && !Task.isCancelled {
            let began = ContinuousClock.now
            var read = await readOnce(location, failuresBefore: failures)
            if Task.isCancelled && read.outcome.isFailure { return }    // a download cut short by the stop: not a failure of the source
            failures = read.failuresInARow
            let wait = failures == 0 ? interval - (ContinuousClock.now - began)
                                     : FeedBackoff(interval: interval, maxBackoff: maxBackoff).wait(afterFailures: failures)
            read.nextReadIn = max(wait, .zero)
            await onRead(read)
            await stop.sleep(until: ContinuousClock.now + read.nextReadIn!)
        }
    }

    /// One read of one source: fetch, store, the `afterRead` step, change-feed pruning, metrics.
    private func readOnce(_ location: String, failuresBefore: Int) async -> FeedLoopRead {
        let began = ContinuousClock.now
        var outcome: FeedLoopRead.Outcome
        do {
            // The answer in a statement of its own: Swift 6.3.1 at -O miscompiled an await
            // inside an aggregate (docs/robustness.md).
            let summary = try await ingestor.ingest(location)
            try await afterRead(location, summary)
            outcome = summary.feedError == nil ? .read(summary) : .partial(summary)
        } catch {
            outcome = .failed(error)
        }
        if let keepChanges, !Task.isCancelled {
            do { _ = try await ingestor.store.pruneChanges(before: Date().addingTimeInterval(-keepChanges.inSeconds)) } catch {
                if !outcome.isFailure { outcome = .failed(error) }
            }
        }
        let failures = outcome.isFailure || outcome.isPartial ? failuresBefore + 1 : 0
        let read = FeedLoopRead(location: location, outcome: outcome, duration: ContinuousClock.now - began, failuresInARow: failures)
        FeedLoopMetrics.record(read)
        return read
    }
}

/// How one read of a source went.
public struct FeedLoopRead: Sendable {
    public enum Outcome: Sendable {
        case read(IngestSummary)
        /// Stored what came, but the feed broke off or some of its documents failed.
        case partial(IngestSummary)
        case failed(any Error)

        public var isFailure: Bool { if case .failed = self { true } else { false } }
        public var isPartial: Bool { if case .partial = self { true } else { false } }
        public var summary: IngestSummary? {
            switch self {
            case let .read(summary), let .partial(summary): summary
            case .failed: nil
            }
        }
    }

    public var location: String
    public var outcome: Outcome
    public var duration: Duration
    /// Failed or partial reads in a row, this one included (0: it went well).
    public var failuresInARow: Int
    /// When the source is read next (set by the running loop; nil from `runOnce`).
    public var nextReadIn: Duration?
}

/// The wait after failures: `interval` × 2^(failures − 1), at most `maxBackoff` (or `interval`
/// if that is longer), times a random factor in [0.5, 1] ("equal jitter": never less than half
/// the wait, so a failing server is not asked sooner than that).
public struct FeedBackoff: Sendable {
    public var interval: Duration
    public var maxBackoff: Duration

    public init(interval: Duration, maxBackoff: Duration) {
        self.interval = interval
        self.maxBackoff = maxBackoff
    }

    /// The longest the wait after this many failures in a row can be (before jitter).
    public func ceiling(afterFailures failures: Int) -> Duration {
        let cap = max(interval, maxBackoff).inSeconds
        return .milliseconds(Int64(min(cap, interval.inSeconds * pow(2, Double(min(max(failures, 1), 40) - 1))) * 1000))
    }

    public func wait<R: RandomNumberGenerator>(afterFailures failures: Int, using random: inout R) -> Duration {
        ceiling(afterFailures: failures) * Double.random(in: 0.5...1.0, using: &random)
    }

    public func wait(afterFailures failures: Int) -> Duration {
        var random = SystemRandomNumberGenerator()
        return wait(afterFailures: failures, using: &random)
    }
}

/// The loop's numbers, through swift-metrics (docs/operations.md names them).
enum FeedLoopMetrics {
    static func record(_ read: FeedLoopRead) {
        let source = [("source", read.location)]
        let outcome: String
        switch read.outcome {
        case .read: outcome = "success"
        case .partial: outcome = "partial"
        case .failed: outcome = "failure"
        }
        CoreMetrics.Counter(label: "trafficgeo_feed_reads_total", dimensions: source + [("outcome", outcome)]).increment()
        CoreMetrics.Timer(label: "trafficgeo_feed_read_duration_seconds", dimensions: source).recordNanoseconds(read.duration.nanoseconds)
        CoreMetrics.Gauge(label: "trafficgeo_feed_consecutive_failures", dimensions: source).record(read.failuresInARow)
        if let summary = read.outcome.summary {
            if read.failuresInARow == 0 {
                CoreMetrics.Gauge(label: "trafficgeo_feed_last_success_timestamp_seconds", dimensions: source).record(Date().timeIntervalSince1970)
            }
            for (change, count) in [("new", summary.new), ("updated", summary.updated), ("ended", summary.ended)] where count > 0 {
                CoreMetrics.Counter(label: "trafficgeo_feed_incidents_total", dimensions: source + [("change", change)]).increment(by: count)
            }
        }
    }
}
