import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoStore
import TrafficGeoSupport

struct GeocodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geocode",
        abstract: "Geocode a query, the incidents waiting for a position, or a batch file.",
        discussion: """
              trafficgeo geocode "A4 Wenden"                       candidates for one query
              trafficgeo geocode --title "A4 : Koeln - Olpe" --text "Zwischen AS Wenden und AS Krombach"
              trafficgeo geocode pending                           incidents ingested without a position
              trafficgeo geocode batch roads.csv --column title -o roads-geocoded.csv
            """,
        subcommands: [GeocodeQueryCommand.self, GeocodePendingCommand.self, GeocodeBatchCommand.self],
        defaultSubcommand: GeocodeQueryCommand.self)
}

struct GeocodeQueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Ask the geocoder one question and print its candidates (or locate a traffic message with --title).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var geocoding: GeocoderOptions

    @Argument(help: "What to look up, e.g. \"A4 Wenden\", \"Kreuz Heidelberg\" or \"Springfield, IL\" (a country or state after a comma is where it is looked for).") var query: String?

    @Option(help: "Locate a traffic message with this title instead (joint junction resolution).") var title: String?
    @Option(help: "The message text that goes with --title.") var text: String?
    @Option(help: "Only candidates in these countries (ISO codes, comma-separated), e.g. de.") var country: String?
    @Option(name: [.customShort("n"), .long], help: "How many candidates.") var limit = 5
    @Flag(help: "Print JSON instead of lines.") var json = false

    func validate() throws {
        guard (query == nil) != (title == nil) else { throw ValidationError("Give a query such as \"Kreuz Heidelberg\", or a traffic message as --title (and --text); one of them.") }
        // `geocode --db X pending` reaches here: an option before the subcommand's name makes the
        // parser take the default subcommand, and the name its query. Say how it is meant.
        if let query, let other = GeocodeCommand.configuration.subcommands.first(where: { $0 != Self.self && $0.configuration.commandName == query }) {
            let name = other.configuration.commandName ?? query
            throw ValidationError("'\(name)' is a geocode command: put its name first, then the options (trafficgeo geocode \(name) --db FILE …). To look up a place of that name, write it with a capital: \(name.prefix(1).uppercased() + name.dropFirst()).")
        }
        if text != nil && title == nil { throw ValidationError("--text goes with --title.") }
        guard limit > 0 else { throw ValidationError("--limit must be positive.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try? await global.openStore()
            let service = try geocoding.makeService(cache: store)
            if let title {
                // With a database, what it learned of the road's junctions answers first, as in ingest.
                let locator = IncidentLocator(service: service)
                let located = if let store {
                    try await StoredKnowledgeLocator(store: store, locator: locator).locate(title: title, text: text)
                } else {
                    try await locator.locate(title: title, text: text)
                }
                guard let located else {
                    Terminal.printError("trafficgeo: not found: no junction or route end of this message could be placed")
                    throw TrafficGeoExit.notFound
                }
                if json {
                    let object: [String: Any] = [
                        "latitude": located.position.latitude, "longitude": located.position.longitude,
                        "precision": located.precision.rawValue, "confidence": located.confidence, "provider": located.provider,
                        "queries": located.queries,
                        "segment": located.segment.map { $0.map { [$0.longitude, $0.latitude] } } ?? NSNull(),
                    ]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    print(String(format: "%.6f, %.6f  precision %@, confidence %.2f, from %@", located.position.latitude,
                                 located.position.longitude, located.precision.rawValue, located.confidence, located.provider))
                    if let segment = located.segment {
                        print("segment: " + segment.map { String(format: "%.6f, %.6f", $0.latitude, $0.longitude) }.joined(separator: " → "))
                    }
                    print("asked: " + (located.queries.isEmpty ? "nothing (the database knew the junctions)" : located.queries.joined(separator: "; ")))
                }
                return
            }
            let answer: GeocodeAnswer
            var names: CountryNames?
            if let country {
                answer = try await service.search(GeocodeQuery(query ?? "", countryCodes: country.split(separator: ",").map(String.init), limit: limit))
            } else {
                // As `near` reads a place: a country or state after a comma is where it is looked for.
                let typed = TypedPlace(query ?? "", countries: CountryNames.shared())
                let (found, areaIgnored) = try await typed.search(with: service, limit: limit)
                answer = found
                if areaIgnored, !found.candidates.isEmpty, !global.quiet {
                    Terminal.printError("trafficgeo: warning: " + typed.areaIgnoredWarning)
                }
                if typed.areaText != nil || found.candidates.count > 1 { names = CountryNames.shared() }
            }
            if json {
                let data = try JSONEncoder().encode(answer)
                print(String(decoding: data, as: UTF8.self))
            } else if answer.candidates.isEmpty {
                Terminal.printError("trafficgeo: not found: \(answer.provider) has no match for '\(query ?? "")'")
            } else {
                for c in answer.candidates.prefix(limit) {
                    let extra = [c.kind.rawValue, c.osmTag, c.population.map { "pop. \($0)" }].compactMap { $0 }.joined(separator: ", ")
                    print(String(format: "%.6f, %.6f  %@  (%@)", c.coordinate.latitude, c.coordinate.longitude,
                                 CountryNames.label(c, names: names), extra))
                }
                if let attribution = answer.attribution, !global.quiet { Terminal.printError("trafficgeo: \(answer.provider): \(attribution)") }
            }
            if answer.candidates.isEmpty { throw TrafficGeoExit.notFound }
        }
    }
}

struct GeocodePendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending",
        abstract: "Geocode the incidents that have no position yet. Resumable: run it again after an interruption.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var geocoding: GeocoderOptions

    @Option(help: "Only incidents of this source.") var source: String?
    @Flag(help: "Also try again incidents a geocoder did not find before.") var retryNotFound = false
    @Option(help: "At most this many incidents.") var limit: Int?

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore()
            let service = try geocoding.makeService(cache: store)
            let summary = try await GeocodeRunner.run(store: store, service: service, source: source, retryNotFound: retryNotFound,
                                                      limit: limit, quiet: global.quiet)
            if summary.total == 0 && !global.quiet {
                Terminal.printError("trafficgeo: nothing to geocode: no incident\(source.map { " of \($0)" } ?? "") waits for a position"
                                    + (retryNotFound ? "" : " (--retry-not-found tries again those not found before)"))
            }
            if summary.stoppedBecause != nil || summary.failed > 0 { throw TrafficGeoExit.partial }
        }
    }
}

struct ReverseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reverse", abstract: "The address at a location: country, postcode, locality, road.",
        discussion: """
            The offline gazetteer answers with the nearest town it knows; an answer farther than \
            --max-distance counts as none (exit 2), and the message names it and its distance.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var location: LocationOptions
    @Option(help: ArgumentHelp("An address farther than this from the location is not its address (e.g. 50km).", valueName: "distance"))
    var maxDistance = "50km"
    @OptionGroup var geocoding: GeocoderOptions
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard location.isGiven else { throw ValidationError("Give --lat and --lon.") }
        _ = try DistanceArgument.validated(maxDistance, option: "--max-distance")
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let service = try geocoding.makeService(cache: nil)
            let limit = try DistanceArgument.validated(maxDistance, option: "--max-distance")
            let a = try await service.reverse(location.coordinate())
            let known = a.displayName != nil || a.locality != nil
            let tooFar = a.distanceMeters.map { $0 > limit } ?? false
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(a), as: UTF8.self))
                if !known || tooFar { throw TrafficGeoExit.notFound }
                return
            }
            guard known else {
                Terminal.printError("trafficgeo: not found: \(a.provider) knows no address there")
                throw TrafficGeoExit.notFound
            }
            if tooFar, let distance = a.distanceMeters {
                Terminal.printError("trafficgeo: not found: \(a.provider) knows no place within \(Annotation.formatDistance(limit)); "
                                    + "the nearest it knows, \(a.displayName ?? a.locality ?? "?"), is \(Annotation.formatDistance(distance)) away")
                throw TrafficGeoExit.notFound
            }
            for (label, value) in [("address", a.displayName), ("road", a.road), ("locality", a.locality), ("postcode", a.postcode),
                                   ("country", a.country ?? a.countryCode?.uppercased()),
                                   ("distance", a.distanceMeters.map { Annotation.formatDistance($0) })] {
                if let value { print("\(label.padding(toLength: 9, withPad: " ", startingAt: 0)) \(value)") }
            }
            if let attribution = a.attribution, !global.quiet { Terminal.printError("trafficgeo: \(a.provider): \(attribution)") }
        }
    }
}

/// Runs `PendingGeocoder` with progress on stderr and prints its summary.
enum GeocodeRunner {
    static func run(store: any IncidentStore, service: GeocodingService, source: String?, retryNotFound: Bool, limit: Int?,
                    quiet: Bool) async throws -> GeocodeRunSummary {
        var runner = PendingGeocoder(store: store, locator: IncidentLocator(service: service))
        if !quiet && Terminal.stderrIsTerminal {
            runner.progress = { done, total in FileHandle.standardError.write(Data("\r… geocoded \(done)/\(total)\u{1B}[K".utf8)) }
        } else if !quiet {
            runner.progress = { done, total in if done % 500 == 0 { Terminal.printError("trafficgeo: … geocoded \(done)/\(total)") } }
        }
        let s = try await runner.run(source: source, retryNotFound: retryNotFound, limit: limit)
        if !quiet && Terminal.stderrIsTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if !quiet && s.total > 0 {
            let byPrecision = GeocodePrecision.allCases.compactMap { p in s.found[p].map { "\($0) \(p.rawValue)" } }.joined(separator: ", ")
            let seconds = s.elapsed.inSeconds
            Terminal.printError("trafficgeo: geocoded \(s.total): \(s.foundTotal) found (\(byPrecision.isEmpty ? "-" : byPrecision)), \(s.notFound) not found, "
                  + "\(s.failed) failed; \(s.statistics.requests) requests, \(s.statistics.cacheHits) from cache, "
                  + String(format: "%.1f s", seconds))
        }
        if let reason = s.stoppedBecause { Terminal.printError("trafficgeo: error: stopped early: \(reason)") }
        return s
    }
}
