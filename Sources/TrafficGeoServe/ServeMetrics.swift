import CoreMetrics
import Foundation
import NIOConcurrencyHelpers
import Prometheus
import TrafficGeoStore
import TrafficGeoSupport

/// What `serve` counts, and `/metrics` in Prometheus's text format.
///
/// Requests are counted through swift-metrics (the API every Swift server library counts
/// through) into this server's own Prometheus registry, so that two servers in one process (the
/// tests, an embedding program) do not share counts and nothing needs `MetricsSystem.bootstrap`.
/// What the store holds is read when `/metrics` is asked (a scrape), not kept up to date.
/// docs/operations.md says what each metric means.
public final class ServeMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let sseClients: CoreMetrics.Meter
    private let itemsReturned: CoreMetrics.Counter
    /// The store's numbers are read at most this often: a scrape every second from several
    /// Prometheus servers must not become a count over a million rows each time.
    public let storeReadInterval: Duration
    private let lastStoreRead = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Sources seen at an earlier scrape: one no longer in feed health loses its series.
    private let sourceGauges = NIOLockedValueBox<[String: (age: Prometheus.Gauge, failures: Prometheus.Gauge)]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), storeReadInterval: Duration = .seconds(5)) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        // Traffic answers are fast or wrong: finer buckets below 100 ms than the default.
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                                   .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                                                   .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10)]
        self.factory = factory
        self.storeReadInterval = storeReadInterval
        sseClients = CoreMetrics.Meter(label: "trafficgeo_sse_clients", factory: factory)
        itemsReturned = CoreMetrics.Counter(label: "trafficgeo_items_returned_total", factory: factory)
    }

    /// One request answered: its route (a template, never the raw path: ids would make a series
    /// each), its status and how long it took.
    func request(route: String, status: Int, duration: Duration) {
        CoreMetrics.Counter(label: "trafficgeo_http_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory).increment()
        CoreMetrics.Timer(label: "trafficgeo_http_request_duration_seconds", dimensions: [("route", route)], factory: factory).recordNanoseconds(duration.nanoseconds)
    }

    func returned(items count: Int) { itemsReturned.increment(by: count) }

    func eventStreamOpened() { sseClients.increment() }
    func eventStreamClosed() { sseClients.decrement() }

    /// Reads what the store holds into the registry (at most every `storeReadInterval`).
    /// `now` is the wall clock the ages are measured against.
    @available(*, noasync, message: "reads the store: run it on a query thread")
    func readStore(_ store: any StoreReader, now: Date = Date()) throws {
        let due = lastStoreRead.withLockedValue { last -> Bool in
            if let last, ContinuousClock.now - last < storeReadInterval { return false }
            last = .now
            return true
        }
        guard due else { return }
        let counts = try store.incidentCounts(now: now)
        registry.makeGauge(name: "trafficgeo_store_incidents", labels: [("state", "all")]).set(Double(counts.all))
        registry.makeGauge(name: "trafficgeo_store_incidents", labels: [("state", "active")]).set(Double(counts.active))
        registry.makeGauge(name: "trafficgeo_change_feed_head").set(Double(try store.changeFeedBounds().latest))
        let health = try store.feedHealth()
        sourceGauges.withLockedValue { gauges in
            let current = Set(health.map(\.source))
            for (source, old) in gauges where !current.contains(source) {
                registry.unregisterGauge(old.age)
                registry.unregisterGauge(old.failures)
                gauges[source] = nil
            }
            for source in health {
                let pair = gauges[source.source] ?? (
                    registry.makeGauge(name: "trafficgeo_source_last_success_age_seconds", labels: [("source", source.source)]),
                    registry.makeGauge(name: "trafficgeo_source_consecutive_failures", labels: [("source", source.source)]))
                gauges[source.source] = pair
                // A source never fetched successfully: +Inf, which any "older than" alert catches.
                pair.age.set(source.lastSuccess.map { max(0, now.timeIntervalSince($0)) } ?? .infinity)
                pair.failures.set(Double(source.failureStreak))
            }
        }
    }

    /// The registry in Prometheus's text exposition format (version 0.0.4).
    func exposition() -> [UInt8] { registry.emitToBuffer() }

    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
