import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoGeocoding

/// Which geocoders to use and how politely: shared by ingest, geocode and reverse.
struct GeocoderOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        Geocoder chain, comma-separated: nominatim=URL, nominatim-geojson=URL, photon=URL, pelias=URL, \
        csv=URL, gazetteer (default: $TRAFFICGEO_GEOCODER, else the offline gazetteer).
        """, valueName: "chain"))
    var geocoder: String?

    @Option(help: ArgumentHelp("User-Agent for geocoder requests (default $TRAFFICGEO_USER_AGENT or trafficgeo's own). The public nominatim.openstreetmap.org needs one naming your application and contact.", valueName: "text"))
    var userAgent: String?

    @Option(help: ArgumentHelp("Requests per second per server (default: 1 for public servers, unlimited for your own; 0 = unlimited).", valueName: "n"))
    var rate: Double?

    @Option(help: ArgumentHelp("Requests in flight per server (default: 1 for public servers, 4 for your own).", valueName: "n"))
    var concurrency: Int?

    @Option(help: ArgumentHelp("How long to wait for one answer, with its unit (default 10s).", valueName: "duration"))
    var timeout: String?

    @Option(help: ArgumentHelp("Retries after a timeout, a lost connection, a 5xx or a 429, with exponential backoff (default 4).", valueName: "n"))
    var retries: Int?

    @Option(help: ArgumentHelp("Largest geocoder answer accepted, in bytes (default 8388608 = 8 MiB).", valueName: "bytes"))
    var maxAnswerBytes: Int?

    func validate() throws {
        if let maxAnswerBytes, maxAnswerBytes < 1024 { throw ValidationError("--max-answer-bytes must be at least 1024.") }
        if let retries, retries < 0 { throw ValidationError("--retries must be 0 or more.") }
        if let rate, !(rate >= 0 && rate.isFinite) { throw ValidationError("--rate must be a number ≥ 0.") }
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency must be at least 1.") }
        if let timeout, try DurationArgument.validated(timeout, option: "--timeout") <= 0 { throw ValidationError("--timeout must be positive.") }
        do { _ = try configuration() } catch { throw ValidationError("\(error)") }
    }

    func configuration() throws -> GeocoderConfiguration {
        let env = ProcessInfo.processInfo.environment
        var config = try GeocoderConfiguration.parse(geocoder ?? env["TRAFFICGEO_GEOCODER"], userAgent: userAgent ?? env["TRAFFICGEO_USER_AGENT"])
        config.rate = rate
        config.concurrency = concurrency
        config.timeout = timeout.flatMap(DurationArgument.parse)
        config.retries = retries
        config.maxBodyBytes = maxAnswerBytes
        return config
    }

    func makeService(cache: GeocodeCaching?) throws -> GeocodingService {
        GeocodingService(providers: try configuration().makeProviders(), cache: cache)
    }
}
