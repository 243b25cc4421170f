import Foundation
import TrafficGeoFeeds
import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoWatch

/// A watch run as a loop (`trafficgeo watch`, and any program that wants one): it follows the
/// change feed with the standing queries, hands every event to every delivery and saves the
/// watch's place after each batch. With sources, a `FeedLoop` reads them meanwhile, each on its
/// schedule with backoff after failures (the loop of `ingest --every`), and the change feed is
/// looked at every `followInterval`; without, it follows the ingests of another process every
/// `interval`. A source that fails is reported (`onIngest`) and tried again; a store that fails
/// ends the loop (the error is thrown).
///
///     var loop = WatchLoop(store: store, ingestor: FeedIngestor(store: store), stateURL: url)
///     loop.sources = ["autobahn:A1"]
///     loop.deliveries = [ConsoleDelivery(style: .ndjson)]
///     try await loop.run(&matcher, until: StopRequest.onSignals())
public struct WatchLoop {
    public var store: any IncidentStore
    public var ingestor: FeedIngestor
    /// Where the watch's place is saved after each batch (`WatchState`).
    public var stateURL: URL
    /// What to read; none: follow the change feed another process writes.
    public var sources: [String] = []
    /// With sources: from the start of one read of a source to the next. Without: how often the
    /// change feed is looked at.
    public var interval: Duration = .seconds(120)
    /// With sources: the longest wait before trying a failing source again.
    public var maxBackoff: Duration = .seconds(900)
    /// With sources: how often the change feed is looked at for what the reads wrote.
    public var followInterval: Duration = .seconds(1)
    /// One round (each source read once, then the change feed), then return.
    public var once = false
    /// Change-feed events older than this are forgotten after each read of a source.
    public var keepChanges: Duration = .seconds(7 * 86_400)
    public var deliveries: [any WatchDelivery] = []
    /// How each read of a source went, as it happens.
    public var onIngest: @Sendable (FeedLoopRead) -> Void = { _ in }

    public init(store: any IncidentStore, ingestor: FeedIngestor, stateURL: URL) {
        self.store = store
        self.ingestor = ingestor
        self.stateURL = stateURL
    }

    private var feedLoop: FeedLoop {
        var loop = FeedLoop(ingestor: ingestor, sources: sources)
        loop.interval = interval
        loop.maxBackoff = maxBackoff
        loop.keepChanges = keepChanges
        loop.onRead = onIngest
        return loop
    }

    /// Runs until `once` is done, or until `stop` is requested (it ends a wait at once, but
    /// never cuts a delivery or a save short, and a read that is writing finishes).
    public func run(_ matcher: inout WatchMatcher, until stop: StopRequest = StopRequest()) async throws {
        if once {
            for read in await feedLoop.runOnce() { onIngest(read) }
            try await follow(&matcher)
            return
        }
        guard !sources.isEmpty else {
            try await following(&matcher, every: interval, until: stop)
            return
        }
        let feeding = Task { [feedLoop] in await feedLoop.run(until: stop) }
        do {
            try await following(&matcher, every: followInterval, until: stop)
        } catch {
            feeding.cancel()
            await feeding.value
            throw error
        }
        await feeding.value
        // What the last reads wrote is reported before the watch ends.
        try await follow(&matcher)
    }

    private func following(_ matcher: inout WatchMatcher, every pause: Duration, until stop: StopRequest) async throws {
        while true {
            let started = ContinuousClock.now
            try await follow(&matcher)
            guard await stop.sleep(until: started + pause) else {
                try Task.checkCancellation()
                return
            }
        }
    }

    /// One look at the change feed: every event to every delivery, the place saved per batch.
    private func follow(_ matcher: inout WatchMatcher) async throws {
        let deliveries = self.deliveries, stateURL = self.stateURL
        try await matcher.poll(store) { events, state in
            for event in events {
                for delivery in deliveries { await delivery.deliver(event) }
            }
            // Saved even when the watch is being stopped: its place must not go back.
            try await BlockingThreads.runToEnd { try state.save(to: stateURL) }
        }
    }
}
