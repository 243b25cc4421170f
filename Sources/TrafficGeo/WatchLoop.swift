import Foundation
import TrafficGeoFeeds
import TrafficGeoStore
import TrafficGeoWatch

/// A watch run as a loop (`trafficgeo watch`, and any program that wants one): each round reads
/// the sources (files, URLs, `autobahn:`) into the store, forgets change-feed events older than
/// `keepChanges`, then follows the change feed with the standing queries, hands every event to
/// every delivery and saves the watch's place after each batch. Without sources it follows the
/// ingests of another process. A source that fails is reported (`onIngest`) and read again next
/// round; a store that fails ends the loop (the error is thrown).
///
///     var loop = WatchLoop(store: store, ingestor: FeedIngestor(store: store), stateURL: url)
///     loop.sources = ["autobahn:A1"]
///     loop.deliveries = [ConsoleDelivery(style: .ndjson)]
///     try await loop.run(&matcher, shouldStop: { stop.isSet })
public struct WatchLoop {
    public var store: any IncidentStore
    public var ingestor: FeedIngestor
    /// Where the watch's place is saved after each batch (`WatchState`).
    public var stateURL: URL
    /// What to read every round; none: follow the change feed another process writes.
    public var sources: [String] = []
    /// From the start of one round to the start of the next.
    public var interval: Duration = .seconds(120)
    /// One round, then return.
    public var once = false
    /// Change-feed events older than this are forgotten after each round that read sources.
    public var keepChanges: Duration = .seconds(7 * 86_400)
    public var deliveries: [any WatchDelivery] = []
    /// How each source's read went, as it happens (a summary, or the error that stopped it).
    public var onIngest: (String, Result<IngestSummary, any Error>) -> Void = { _, _ in }

    public init(store: any IncidentStore, ingestor: FeedIngestor, stateURL: URL) {
        self.store = store
        self.ingestor = ingestor
        self.stateURL = stateURL
    }

    /// Runs rounds until `once`, or until `shouldStop` says so (checked between rounds and while
    /// waiting for the next, every 200 ms: a stop never cuts a delivery or a save short).
    public func run(_ matcher: inout WatchMatcher, shouldStop: () -> Bool = { false }) async throws {
        while true {
            let started = ContinuousClock.now
            for location in sources {
                do {
                    // The answer in a statement of its own, then handed on: Swift 6.3.1 at -O
                    // miscompiled an await inside an aggregate (docs/robustness.md).
                    let summary = try await ingestor.ingest(location)
                    onIngest(location, .success(summary))
                } catch {
                    onIngest(location, .failure(error))
                }
            }
            if !sources.isEmpty { _ = try await store.pruneChanges(before: Date().addingTimeInterval(-keepChanges.inSeconds)) }
            let deliveries = self.deliveries, stateURL = self.stateURL
            try await matcher.poll(store) { events, state in
                for event in events {
                    for delivery in deliveries { await delivery.deliver(event) }
                }
                try state.save(to: stateURL)
            }
            if once || shouldStop() { return }
            let next = started + interval
            while ContinuousClock.now < next, !shouldStop() {
                try await Task.sleep(for: min(.milliseconds(200), next - ContinuousClock.now))
            }
            if shouldStop() { return }
        }
    }
}
