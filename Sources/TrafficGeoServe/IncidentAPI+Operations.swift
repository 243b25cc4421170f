import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// For operators: `/ready` and `/metrics` (docs/operations.md).
extension IncidentAPI {

    /// 200 when the store answers and (with `readyMaxAge`) every source was fetched successfully
    /// within that long; else 503, the body saying what is wrong. A probe is never a 500: what
    /// failed is in the body (and the log).
    func readiness() async -> Response {
        let store = self.store, maxAge = configuration.readyMaxAge, named = configuration.readySources
        let now = Date()
        var body: [String: Any] = [:]
        var ready = true
        do {
            let health = try await runner.run { () throws -> [FeedHealth] in
                _ = try store.changeFeedBounds()
                return maxAge == nil ? [] : try store.feedHealth()
            }
            body["store"] = "answers"
            if let maxAge {
                var health = health
                if let named {
                    // Only the named sources count; one never fetched is as stale as can be.
                    let known = Dictionary(health.map { ($0.source, $0) }, uniquingKeysWith: { a, _ in a })
                    health = named.map { known[$0] ?? FeedHealth(source: $0) }
                }
                let limit = maxAge.inSeconds
                let stale = health.filter { source in source.lastSuccess.map { now.timeIntervalSince($0) > limit } ?? true }
                body["max_age_seconds"] = limit
                body["sources"] = health.count
                body["stale"] = stale.map { source -> [String: Any] in
                    var entry: [String: Any] = ["source": source.source, "consecutive_failures": source.failureStreak]
                    if let success = source.lastSuccess {
                        entry["last_success"] = TimestampParser.format(success)
                        entry["age_seconds"] = (now.timeIntervalSince(success)).rounded()
                    } else {
                        entry["last_success"] = NSNull()
                    }
                    if let error = source.lastError { entry["last_error"] = error }
                    return entry
                }
                if !stale.isEmpty { ready = false }
                if health.isEmpty {
                    ready = false
                    body["problem"] = "no source has been fetched into this store yet"
                }
            }
        } catch {
            logger.error("/ready: the store did not answer: \(error)")
            ready = false
            body["store"] = "does not answer"
            body["problem"] = "the store did not answer (the server's log says why)"
        }
        body["ready"] = ready
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var response = Self.body(String(decoding: data, as: UTF8.self), type: MediaType.json, cacheable: false)
        response.status = ready ? .ok : .serviceUnavailable
        return response
    }

    /// `/metrics`: the registry after reading the store's numbers into it.
    func metricsExposition() async throws -> Response {
        let store = self.store, metrics = configuration.metrics
        do {
            try await runner.run { try metrics.readStore(store) }
        } catch {
            // The request counts are still worth having; the store's gauges keep their last values.
            logger.warning("/metrics: the store's numbers could not be read: \(error)")
        }
        return Response(status: .ok, headers: [.contentType: ServeMetrics.contentType, .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
    }

}
