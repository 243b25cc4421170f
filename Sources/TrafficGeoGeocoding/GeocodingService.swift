import CoreMetrics
import Foundation
import TrafficGeoSupport
import Logging
import TrafficGeoModel
import TrafficGeoProjection

/// Where answers are kept between runs (the store's `geocode_cache` table implements it).
/// Async: the service is an actor, and a cache read must not hold it while the database works.
public protocol GeocodeCaching: Sendable {
    func cachedAnswer(for key: String) async throws -> GeocodeAnswer?
    func storeAnswer(_ answer: GeocodeAnswer, for key: String) async throws
}

/// Counts of what a run asked and how it was answered.
public struct GeocodingStatistics: Sendable, Equatable {
    public var lookups = 0
    public var cacheHits = 0
    /// Lookups that joined a request already in flight for the same question.
    public var deduplicated = 0
    public var requests = 0
    public var failures = 0

    public init() {}
}

/// Asks a chain of providers, with a persistent cache and de-duplication within the run.
///
///     let service = GeocodingService(providers: [nominatim, gazetteer], cache: store)
///     let answer = try await service.search(GeocodeQuery("Wenden", purpose: .place, countryCodes: ["de"]))
///
/// The first provider with candidates answers; a provider that fails or finds nothing hands the
/// question to the next. Only successful answers (found or definitely not found) are cached; a
/// provider that answered 403 is not asked again in this run.
public actor GeocodingService {
    public nonisolated let providers: [GeocodingProvider]
    private let cache: GeocodeCaching?
    private var inFlight: [String: Task<GeocodeAnswer, Error>] = [:]
    private var stoppedProviders: [String: GeocodingError] = [:]
    public private(set) var statistics = GeocodingStatistics()
    /// Where a provider's leaving the chain is reported (once per provider and run).
    private let logger: Logger

    public init(providers: [GeocodingProvider], cache: GeocodeCaching? = nil,
                logger: Logger = Logger(label: "trafficgeo.geocoding")) {
        self.providers = providers
        self.cache = cache
        self.logger = logger
    }

    /// Leaves `provider` out for the rest of the run, saying so once.
    private func stop(_ provider: GeocodingProvider, because error: GeocodingError) {
        guard stoppedProviders[provider.cacheIdentity] == nil else { return }
        stoppedProviders[provider.cacheIdentity] = error
        // With nobody left to ask, the caller reports the error itself.
        let rest = providers.filter { stoppedProviders[$0.cacheIdentity] == nil }.map(\.name)
        guard !rest.isEmpty else { return }
        logger.warning("\(error) Asking \(rest.joined(separator: ", ")) instead.",
                       metadata: error.setting.map { [Setting.logKey: .string($0.rawValue)] } ?? [:])
    }

    /// True once every provider of the chain refused us for good (403, bad configuration).
    public var isExhausted: Bool { stoppedProviders.count >= providers.count }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        statistics.lookups += 1
        var firstError: Error?
        var anyAnswered = false
        var lastAnswer: GeocodeAnswer?
        for provider in providers {
            if let stopped = stoppedProviders[provider.cacheIdentity] {
                firstError = firstError ?? stopped
                continue
            }
            let key = "\(provider.cacheIdentity)|\(query.normalizedKey)"
            do {
                let answer = try await lookUp(provider, query, key: key)
                if answer.fromCache {
                    statistics.cacheHits += 1
                    GeocoderMetrics.cacheHit(provider.name)
                }
                anyAnswered = true
                if !answer.candidates.isEmpty { return answer }
                lastAnswer = answer
            } catch let error as GeocodingError {
                statistics.failures += 1
                GeocoderMetrics.failure(provider.name)
                if error.stopsProvider { stop(provider, because: error) }
                firstError = firstError ?? error
            }
        }
        if anyAnswered { return lastAnswer ?? GeocodeAnswer(provider: providers.last?.name ?? "", candidates: []) }
        throw firstError ?? GeocodingError.configuration("no geocoder configured")
    }

    /// One question to one provider, from the cache or else asked and cached, shared by every
    /// caller asking it at the same time. The cache read is part of the shared lookup: were it
    /// done first by each caller, a caller whose read suspended while the same request finished
    /// would find nothing and ask again.
    private func lookUp(_ provider: GeocodingProvider, _ query: GeocodeQuery, key: String) async throws -> GeocodeAnswer {
        if let running = inFlight[key] {
            statistics.deduplicated += 1
            return try await running.value
        }
        let cache = self.cache
        // Isolated to this actor like the method that makes it; it leaves the actor while it waits.
        let task = Task {
            if let cached = try? await cache?.cachedAnswer(for: key) { return cached }
            statistics.requests += 1
            GeocoderMetrics.request(provider.name)
            var answer = try await provider.search(query)
            for i in answer.candidates.indices { answer.candidates[i].provider = answer.provider }
            try? await cache?.storeAnswer(answer, for: key)
            return answer
        }
        inFlight[key] = task
        defer { inFlight[key] = nil }
        // The lookup is its own task (callers asking the same share it), so a caller's
        // cancellation (Ctrl-C) must be handed on, or the request would run out its retries.
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// The address at a coordinate, from the first provider that can say.
    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        var firstError: Error?
        for provider in providers where stoppedProviders[provider.cacheIdentity] == nil {
            do {
                var address = try await provider.reverse(coordinate)
                address.distanceMeters = address.coordinate.map { Geodesic.distance(from: coordinate, to: $0) }
                if address.displayName != nil || address.locality != nil { return address }
            } catch let error as GeocodingError {
                if error.code == .unsupported { continue }
                if error.stopsProvider { stop(provider, because: error) }
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return ReverseAddress(provider: providers.first?.name ?? "")
    }
}

/// What geocoding counts through swift-metrics (`MetricsSystem`; the feed loop's textfile shows
/// it). Requests are questions a provider was asked; cache hits were answered from the store.
enum GeocoderMetrics {
    static func request(_ provider: String) {
        CoreMetrics.Counter(label: "trafficgeo_geocoder_requests_total", dimensions: [("provider", provider)]).increment()
    }
    static func cacheHit(_ provider: String) {
        CoreMetrics.Counter(label: "trafficgeo_geocoder_cache_hits_total", dimensions: [("provider", provider)]).increment()
    }
    static func failure(_ provider: String) {
        CoreMetrics.Counter(label: "trafficgeo_geocoder_failures_total", dimensions: [("provider", provider)]).increment()
    }
}
