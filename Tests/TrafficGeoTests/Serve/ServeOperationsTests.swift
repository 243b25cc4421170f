import AsyncHTTPClient
import Foundation
import Testing
@testable import TrafficGeoServe
@testable import TrafficGeoStore

/// What an operator's load balancer and Prometheus ask `serve`: /health, /ready (with and
/// without --ready-max-age) and /metrics, counting what was asked.
@Suite("serve: health, readiness and metrics")
struct ServeOperationsTests {
    static func configuration(readyMaxAge: Duration? = nil) -> ServeConfiguration {
        var configuration = ServeConfiguration()
        configuration.readyMaxAge = readyMaxAge
        // Every scrape reads the store (a test asks twice within a second).
        configuration.metrics = ServeMetrics(storeReadInterval: .zero)
        return configuration
    }

    /// `name{labels} value` lines of the exposition, by the whole series text.
    static func samples(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            out[String(line[..<space])] = value
        }
        return out
    }

    @Test("/health answers while the process runs; /ready when the store answers")
    func healthAndReadiness() async throws {
        try await ServeFixture.serving(configuration: Self.configuration()) { f in
            let health = try await f.get("/health")
            #expect(health.status == 200 && health.json["status"] as? String == "alive")
            #expect(health.headers.first(name: "cache-control") == "no-store")
            let ready = try await f.get("/ready")
            #expect(ready.status == 200 && ready.json["ready"] as? Bool == true && ready.json["store"] as? String == "answers")
            #expect(try await f.get("/ready?x=1").status == 400, "a probe takes no parameters")
        }
    }

    @Test("/ready with a maximum age: 503 naming the stale source, 200 once it is fetched again")
    func readinessFollowsFeedHealth() async throws {
        try await ServeFixture.serving(configuration: Self.configuration(readyMaxAge: .seconds(600))) { f in
            // No source fetched yet: not ready, and it says why.
            let empty = try await f.get("/ready")
            #expect(empty.status == 503 && (empty.json["problem"] as? String)?.contains("no source") == true)

            let now = Date()
            try await f.writer.recordFetch(FetchReport(source: "desk", at: now, entries: 46))
            try await f.writer.recordFetch(FetchReport(source: "autobahn", at: now.addingTimeInterval(-3600), entries: 10))
            try await f.writer.recordFetch(.failure(source: "autobahn", at: now.addingTimeInterval(-60), error: "connection refused"))
            let stale = try await f.get("/ready")
            #expect(stale.status == 503 && stale.json["ready"] as? Bool == false)
            let listed = stale.json["stale"] as? [[String: Any]] ?? []
            #expect(listed.map { $0["source"] as? String } == ["autobahn"], "only the stale source: \(stale.body)")
            #expect(listed.first?["consecutive_failures"] as? Int == 1 && listed.first?["last_error"] as? String == "connection refused")
            #expect((listed.first?["age_seconds"] as? Double ?? 0) >= 3600)

            try await f.writer.recordFetch(FetchReport(source: "autobahn", at: Date(), entries: 10))
            let again = try await f.get("/ready")
            #expect(again.status == 200, "\(again.body)")
        }
    }

    @Test("/ready judges only the named sources; a named one never fetched is stale")
    func readinessOfNamedSources() async throws {
        var configuration = Self.configuration(readyMaxAge: .seconds(600))
        configuration.readySources = ["desk"]
        try await ServeFixture.serving(configuration: configuration) { f in
            try await f.writer.recordFetch(FetchReport(source: "desk", at: Date(), entries: 46))
            try await f.writer.recordFetch(FetchReport(source: "retired", at: Date().addingTimeInterval(-86_400), entries: 3))
            let answer = try await f.get("/ready")
            #expect(answer.status == 200, "the retired source is not judged: \(answer.body)")
        }
        configuration.readySources = ["desk", "never"]
        try await ServeFixture.serving(configuration: configuration) { f in
            try await f.writer.recordFetch(FetchReport(source: "desk", at: Date(), entries: 46))
            let answer = try await f.get("/ready")
            let stale = (answer.json["stale"] as? [[String: Any]] ?? []).map { $0["source"] as? String }
            #expect(answer.status == 503 && stale == ["never"], "\(answer.body)")
        }
    }

    @Test("/metrics: Prometheus text that counts the requests, the items, and reads the store")
    func metricsCountWhatWasAsked() async throws {
        try await ServeFixture.serving(configuration: Self.configuration()) { f in
            try await f.writer.recordFetch(FetchReport(source: "desk", at: Date().addingTimeInterval(-30), entries: 46))
            try await f.writer.recordFetch(.failure(source: "desk", error: "HTTP 503"))
            var returned = 0
            for limit in [3, 5, 7] {
                returned += try await f.get("/collections/incidents/items?lat=50.9&lon=6.9&limit=\(limit)&f=json").features.count
            }
            _ = try await f.get("/collections/incidents/items/999999")    // 404
            _ = try await f.get("/collections/incidents/items/1")
            _ = try await f.get("/collections/incidents/items/1/", method: .HEAD)
            _ = try await f.get("/no/such/route")    // 404, under no route's template
            let answer = try await f.get("/metrics")
            #expect(answer.status == 200 && answer.contentType.hasPrefix("text/plain; version=0.0.4"))
            let s = Self.samples(answer.body)
            #expect(s[#"trafficgeo_http_requests_total{route="/collections/incidents/items",status="200"}"#] == 3, "\(answer.body)")
            #expect(s[#"trafficgeo_http_requests_total{route="/collections/incidents/items/{id}",status="404"}"#] == 1)
            #expect(s[#"trafficgeo_http_requests_total{route="/collections/incidents/items/{id}",status="200"}"#] == 2, "HEAD and a trailing slash count as the route")
            #expect(s[#"trafficgeo_http_requests_total{route="other",status="404"}"#] == 1, "\(answer.body)")
            #expect(s[#"trafficgeo_http_request_duration_seconds_count{route="/collections/incidents/items"}"#] == 3)
            #expect(s["trafficgeo_items_returned_total"] == Double(returned) && returned == 15)
            let stats = try await f.writer.statistics()
            #expect(s[#"trafficgeo_store_incidents{state="all"}"#] == Double(stats.total))
            #expect(s[#"trafficgeo_store_incidents{state="active"}"#] == Double(stats.active))
            #expect(s["trafficgeo_change_feed_head"] == Double(stats.changeFeed.latest) && stats.changeFeed.latest > 0)
            #expect(s[#"trafficgeo_source_consecutive_failures{source="desk"}"#] == 1)
            let age = s[#"trafficgeo_source_last_success_age_seconds{source="desk"}"#] ?? -1
            #expect(age >= 29 && age < 120)
            #expect(s["trafficgeo_sse_clients"] == 0)
            // The scrape itself is counted from the next one on.
            let next = Self.samples(try await f.get("/metrics").body)
            #expect(next[#"trafficgeo_http_requests_total{route="/metrics",status="200"}"#] == 1)
        }
    }

    @Test("the store's incidents, all and active, in one count (both stores agree with stats)")
    func incidentCountsMatchStatistics() async throws {
        try await ServeFixture.serving { f in
            let counts = try await f.writer.incidentCounts()
            let stats = try await f.writer.statistics()
            #expect(counts == IncidentCounts(all: stats.total, active: stats.active))
            #expect(counts.all == 46 && counts.active > 0 && counts.active < counts.all)
        }
    }
}
