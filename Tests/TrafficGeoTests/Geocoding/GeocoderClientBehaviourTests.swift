import Foundation
import Testing
@testable import TrafficGeoGeocoding
@testable import TrafficGeoSQLite
@testable import TrafficGeoSupport

/// The HTTP client against servers that misbehave: rate limits, errors, hangs, resets, junk.
@Suite("Geocoder client against misbehaving servers", .serialized)
struct GeocoderClientBehaviourTests {
    static let ok = LoopbackHTTPServer.Reply.json(GeocoderFixtures.nominatimJSONv2(q: "Wenden"))

    /// Fast retries for tests: the shape of the backoff is what matters.
    static func policy(retries: Int = 3, timeout: Double = 2, rate: Double? = nil, concurrency: Int = 4) -> RequestPolicy {
        var p = RequestPolicy(rate: rate, concurrency: concurrency)
        p.maxRetries = retries
        p.baseBackoff = 0.05
        p.maxBackoff = 0.4
        p.timeout = timeout
        return p
    }

    static func seconds(_ d: Duration) -> Double { d.inSeconds }

    @Test func retryAfterSecondsIsHonoured() async throws {
        let server = try LoopbackHTTPServer { _, n in
            n == 0 ? .text("slow down", status: 429, headers: [("Retry-After", "1")]) : Self.ok
        }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        let answer = try await provider.search(GeocodeQuery("Wenden"))
        #expect(answer.candidates.count == 1)
        let r = server.requests
        #expect(r.count == 2)
        #expect(Self.seconds(r[1].arrival - r[0].arrival) >= 0.95)
    }

    @Test func retryAfterHTTPDateIsHonoured() async throws {
        let inTwoSeconds = Date().addingTimeInterval(2.2)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let header = formatter.string(from: inTwoSeconds)
        let server = try LoopbackHTTPServer { _, n in n == 0 ? .text("", status: 429, headers: [("Retry-After", header)]) : Self.ok }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        _ = try await provider.search(GeocodeQuery("Wenden"))
        let r = server.requests
        #expect(r.count == 2)
        #expect(Self.seconds(r[1].arrival - r[0].arrival) >= 1.0)   // the date has whole seconds
    }

    @Test(arguments: [nil, "0"])
    func tooManyRequestsWithoutUsableRetryAfterBacksOff(header: String?) async throws {
        let server = try LoopbackHTTPServer { _, n in
            n < 2 ? .text("", status: 429, headers: header.map { [("Retry-After", $0)] } ?? []) : Self.ok
        }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        _ = try await provider.search(GeocodeQuery("Wenden"))
        let r = server.requests
        #expect(r.count == 3)
        #expect(Self.seconds(r[1].arrival - r[0].arrival) >= 0.02)   // backoff, not an immediate hammer
        #expect(Self.seconds(r[2].arrival - r[0].arrival) >= 0.06)
    }

    @Test(arguments: [500, 502, 503])
    func serverErrorsAreRetried(status: Int) async throws {
        let server = try LoopbackHTTPServer { _, n in n < 2 ? .text("<html>oops</html>", status: status) : Self.ok }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        let answer = try await provider.search(GeocodeQuery("Wenden"))
        #expect(answer.candidates.count == 1 && server.requests.count == 3)
    }

    @Test func persistentServerErrorGivesUpAfterTheRetries() async throws {
        let server = try LoopbackHTTPServer { _, _ in .text("down", status: 503) }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy(retries: 2))
        await #expect(throws: GeocodingError.serverError(provider: "nominatim (127.0.0.1)", status: 503)) {
            try await provider.search(GeocodeQuery("Wenden"))
        }
        #expect(server.requests.count == 3)
    }

    @Test func aHangPastTheTimeoutIsATimeout() async throws {
        let server = try LoopbackHTTPServer { _, n in n == 0 ? .hang : Self.ok }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy(retries: 1, timeout: 0.5))
        let start = ContinuousClock.now
        let answer = try await provider.search(GeocodeQuery("Wenden"))
        #expect(answer.candidates.count == 1)
        #expect(Self.seconds(ContinuousClock.now - start) >= 0.45)
        let alwaysHang = try LoopbackHTTPServer { _, _ in .hang }
        defer { alwaysHang.shutdown() }
        let stuck = try NominatimProvider(baseURL: alwaysHang.baseURL, policy: Self.policy(retries: 1, timeout: 0.3))
        await #expect(throws: GeocodingError.timeout(provider: "nominatim (127.0.0.1)", seconds: 0.3)) {
            try await stuck.search(GeocodeQuery("Wenden"))
        }
    }

    @Test func aResetConnectionIsRetried() async throws {
        let server = try LoopbackHTTPServer { _, n in n == 0 ? .reset : Self.ok }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        let answer = try await provider.search(GeocodeQuery("Wenden"))
        #expect(answer.candidates.count == 1 && server.requests.count == 2)
    }

    @Test(arguments: [
        ("[{\"lat\":", "not JSON"),
        ("<!DOCTYPE html><html><body>Bad Gateway</body></html>", "HTML"),
        ("", "empty body"),
        ("{\"error\":\"Unable to geocode\"}", "error"),
    ])
    func junkBodiesAreBadResponsesNotRetried(body: String, expected: String) async throws {
        let server = try LoopbackHTTPServer { _, _ in .respond(status: 200, headers: [], body: body) }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        do {
            _ = try await provider.search(GeocodeQuery("Wenden"))
            Issue.record("expected an error")
        } catch let error as GeocodingError where error.code == .badResponse {
            #expect(error.detail?.contains(expected) == true, "\(error)")
        }
        #expect(server.requests.count == 1)
    }

    @Test func forbiddenStopsTheProvider() async throws {
        let server = try LoopbackHTTPServer { _, _ in .text("You have been blocked", status: 403) }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        await #expect(throws: GeocodingError.self) { try await provider.search(GeocodeQuery("Wenden")) }
        await #expect(throws: GeocodingError.self) { try await provider.search(GeocodeQuery("Olpe")) }
        #expect(server.requests.count == 1)   // the second question was not sent
    }

    @Test func theRateLimitHoldsAcrossConcurrentRequests() async throws {
        let server = try LoopbackHTTPServer { _, _ in Self.ok }
        defer { server.shutdown() }
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy(rate: 5, concurrency: 4))
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<11 { group.addTask { _ = try await provider.search(GeocodeQuery("Wenden \(i)")) } }
            try await group.waitForAll()
        }
        let arrivals = server.requests.map(\.arrival).sorted()
        #expect(arrivals.count == 11)
        // No burst: the m-th request to arrive (from 0) comes no earlier than m intervals of 0.2 s
        // after the questions were asked. The limiter gives the requests slots 0.2 s apart from the
        // first one's, which is no earlier than `start`, and sends each at its slot or later; of
        // the slots, only m lie before start + m × 0.2 s, so the m-th arrival cannot. A loaded
        // machine only makes arrivals later, which this bound allows (a bound on the gap between
        // arrivals did not: one request sent 0.5 s late, beside CI's other suites, is followed
        // closely by the next, on time). A limiter that let four of the concurrent requests go
        // together fails this, and so does one that sends more than 5 a second in all.
        for (m, arrival) in arrivals.enumerated() {
            let after = Self.seconds(arrival - start)
            #expect(after >= Double(m) * 0.2 - 0.01, "request \(m + 1) of 11 arrived \(after) s after the start")
        }
    }

    @Test func stockUserAgentsAreRefusedForThePublicNominatim() throws {
        let url = URL(string: "https://nominatim.openstreetmap.org")!
        #expect(throws: GeocodingError.self) { try NominatimProvider(baseURL: url) }
        #expect(throws: GeocodingError.self) { try NominatimProvider(baseURL: url, userAgent: "python-requests/2.31") }
        #expect(throws: GeocodingError.self) { try NominatimProvider(baseURL: url, userAgent: "") }
        let ok = try NominatimProvider(baseURL: url, userAgent: "traffic-desk/2.0 (ops@example.org)")
        #expect(ok.client.policy == .publicServer)
    }

    @Test func cacheAndDeduplication() async throws {
        let server = try LoopbackHTTPServer { request, _ in
            .delayed(seconds: 0.2, .json(GeocoderFixtures.nominatimJSONv2(q: request.query["q"] ?? "")))
        }
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let provider = try NominatimProvider(baseURL: server.baseURL, policy: Self.policy())
        let service = GeocodingService(providers: [provider], cache: store)
        // Ten callers ask the same question at once: one request.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { _ = try await service.search(GeocodeQuery("Wenden")) } }
            try await group.waitForAll()
        }
        #expect(server.requests.count == 1)
        // "KÖLN" and "Koeln" normalise alike; a new service on the same store answers from the cache.
        let again = GeocodingService(providers: [provider], cache: store)
        let cached = try await again.search(GeocodeQuery("wenden"))
        #expect(cached.fromCache && cached.candidates.count == 1)
        #expect(server.requests.count == 1)
        // A definite "not found" is cached too.
        _ = try await again.search(GeocodeQuery("Nirgendwo"))
        _ = try await again.search(GeocodeQuery("Nirgendwo"))
        #expect(server.requests.count == 2)
    }

    @Test func failuresAreNotCachedAndTheChainFallsBack() async throws {
        let failing = try LoopbackHTTPServer { _, _ in .text("down", status: 500) }
        defer { failing.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let nominatim = try NominatimProvider(baseURL: failing.baseURL, policy: Self.policy(retries: 0))
        let service = GeocodingService(providers: [nominatim, GazetteerProvider(gazetteer: try Gazetteer.shared())], cache: store)
        let answer = try await service.search(GeocodeQuery("Olpe", purpose: .place, countryCodes: ["de"]))
        #expect(answer.provider == "gazetteer" && !answer.candidates.isEmpty)
        _ = try await service.search(GeocodeQuery("Olpe", purpose: .place, countryCodes: ["de"]))
        #expect(failing.requests.count == 2)   // asked again: the 500 was not cached
        let cachedKinds = try store.read { db in try String.fetchAll(db, sql: "SELECT request FROM geocode_cache") }
        #expect(cachedKinds.allSatisfy { $0.hasPrefix("gazetteer/4|") })
    }
}
