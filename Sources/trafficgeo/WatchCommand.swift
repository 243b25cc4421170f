import ArgumentParser
import Foundation
import Logging
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoHTTP
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport
import TrafficGeoWatch

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Report incidents that enter, change within or leave an area, as they happen.",
        discussion: """
            A standing query: a circle (--lat --lon --radius), a box (--bbox), or a corridor along \
            a route you drive (--route route.geojson --buffer 2km), with every query filter. Many \
            at once from --watches FILE (docs/live.md). With --source, the watch reads those \
            sources every --every (autobahn: for the Autobahn API); without, it follows the \
            change feed of ingests run by another process.

            At its first start a watch reports what is inside now (enter events). It saves where \
            it is in the change feed after each batch (--state), so a restarted watch goes on \
            from there: nothing is missed. Deliveries are at least once: a watch killed while \
            delivering a batch delivers that batch again; every event carries a key that is the \
            same when repeated ("key" in its JSON, Idempotency-Key for webhooks, \
            $TRAFFICGEO_EVENT_KEY for --exec), so a receiver can drop repeats. Ctrl-C or SIGTERM \
            stops it cleanly once the deliveries under way are done (exit 0); a second Ctrl-C quits at once.

            Events go to stdout (a line each on a terminal, NDJSON otherwise), and to --exec \
            (a command run per event, the JSON on stdin), --webhook (POSTed JSON, retried) and \
            --ntfy (an ntfy topic URL). Exit status: 0 stopped, 1 database error, 64 usage.
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup(title: "Area") var location: LocationOptions

    @Option(help: ArgumentHelp("With --lat/--lon: how far around (25km, 500m, 3mi; default 25km).", valueName: "distance"))
    var radius: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("A box instead: west,south,east,north in degrees (west > east crosses the antimeridian).", valueName: "w,s,e,n"))
    var bbox: String?

    @Option(help: ArgumentHelp("A corridor instead: a GeoJSON LineString (file) you drive along.", valueName: "file"))
    var route: String?

    @Option(help: ArgumentHelp("With --route: how far from the route (default 2km).", valueName: "distance"))
    var buffer: String?

    @Option(help: "The watch's name in its events.")
    var name = "watch"

    @Option(help: ArgumentHelp("Many standing queries from a JSON file (docs/live.md) instead of the area options.", valueName: "file"))
    var watches: String?

    @OptionGroup(title: "Filters") var filters: FilterOptions

    @Option(help: ArgumentHelp("Read this source every --every (repeatable): a feed URL or file, or autobahn: / autobahn:A1,A3.", valueName: "source"))
    var source: [String] = []

    @OptionGroup(title: "Live sources") var live: LiveSourceOptions

    @Option(help: ArgumentHelp("How often to read each source (default 2m; a failing one backs off, at most --max-backoff) or, without --source, look at the change feed (default 5s).", valueName: "duration"))
    var every: String?

    @Flag(help: "One round (read the sources, report, save the state), then exit.")
    var once = false

    @Option(help: ArgumentHelp("Where the watch keeps its place (default: under $XDG_STATE_HOME/trafficgeo, named for the database and the queries).", valueName: "file"))
    var state: String?

    @Option(help: ArgumentHelp("Run this shell command per event, the event's JSON on its stdin.", valueName: "command"))
    var exec: String?

    @Option(help: ArgumentHelp("POST each event's JSON to this URL (retried).", valueName: "url"))
    var webhook: [String] = []

    @Option(help: ArgumentHelp("Publish each event to this ntfy topic URL (https://ntfy.sh/mytopic).", valueName: "url"))
    var ntfy: String?

    enum Format: String, ExpressibleByArgument, CaseIterable { case lines, ndjson }

    @Option(name: .shortAndLong, help: "stdout: lines (for people; the default on a terminal) or ndjson (the default otherwise).")
    var format: Format?

    @Flag(help: "Print nothing on stdout (the other destinations still get every event).")
    var noStdout = false

    func validate() throws {
        let areas = [location.isGiven, bbox != nil, route != nil, watches != nil].filter { $0 }.count
        guard areas == 1 else {
            throw ValidationError(areas == 0 ? "Say where to watch: --lat/--lon (with --radius), --bbox, --route, or --watches FILE."
                                             : "Give one of --lat/--lon, --bbox, --route and --watches.")
        }
        if watches == nil {
            // The area's text as the query model reads it; the route file is read when the watch starts.
            var text = areaText
            text.add(.route, route)
            _ = try CommandLineQuery.area(text) { _ in [] }
        }
        if let every {
            guard try DurationArgument.validated(every, option: "--every") >= 0.1 else { throw ValidationError("--every must be at least 100ms.") }
        }
        for url in webhook + (ntfy.map { [$0] } ?? []) {
            let lower = url.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { throw ValidationError("'\(url)' is not an http(s) URL.") }
            if let problem = HTTPLocation.problem(url) { throw ValidationError("'\(url)': \(problem).") }
        }
        if let ntfy, NtfyDelivery(url: ntfy) == nil { throw ValidationError("--ntfy '\(ntfy)' names no topic: use https://ntfy.sh/TOPIC.") }
    }

    /// The area options as the query model's text (the route is added where it is read).
    private var areaText: QueryText {
        var text = QueryText()
        location.add(to: &text)
        text.add(.radius, radius)
        text.add(.bbox, bbox)
        text.add(.buffer, buffer)
        return text
    }

    /// The watch of the command line's options, or the watches file's.
    func standingQueries() throws -> [StandingQuery] {
        if let watches { return try WatchDefinitions.read(path: watches) }
        var text = areaText
        filters.add(to: &text)
        text.add(.route, route)
        guard let area = try CommandLineQuery.area(text, routeLine: RouteLine.read(path:)) else { throw ValidationError("Say where to watch.") }
        return [try CommandLineQuery.read { () throws(QueryTextError) in try StandingQuery(name: name, area: area, text: text) }]
    }

    /// The default state file: one per database and set of queries. One saved under the name
    /// the fingerprint before `WatchQuestion` gave is moved to its new name, so that the watch
    /// goes on from where it was.
    func statePath(queries: [StandingQuery]) -> String {
        if let state { return state }
        let environment = ProcessInfo.processInfo.environment
        let stateHome = UserFolders.folder(.state, environment: environment)
        func path(_ fingerprint: String) -> String {
            var hash = StableHash()
            hash.combine(global.databasePath)
            hash.combine(fingerprint)
            return (stateHome as NSString).appendingPathComponent("trafficgeo/watch-\(String(UInt64(bitPattern: hash.int64), radix: 16)).json")
        }
        let current = path(WatchMatcher.fingerprint(queries)), former = path(LegacyWatchFingerprint.text(queries))
        let files = FileManager.default
        if !files.fileExists(atPath: current), files.fileExists(atPath: former) {
            try? files.moveItem(atPath: former, toPath: current)
        }
        return current
    }

    func run() async throws {
        global.bootstrapLogging()
        // A closed pipe is an error to handle (an --exec command that did not read its input,
        // stdout's reader gone), not a signal that ends the watch mid-delivery.
        signal(SIGPIPE, SIG_IGN)
        try await TrafficGeoExit.run {
            let queries: [StandingQuery]
            do { queries = try standingQueries() } catch let problem as WatchDefinitions.Problem {
                Terminal.printError("trafficgeo: error: \(problem)")
                throw ExitCode.validationFailure
            } catch let problem as RouteLine.Problem {
                Terminal.printError("trafficgeo: error: \(problem)")
                throw ExitCode.validationFailure
            } catch let problem as ValidationError {
                Terminal.printError("trafficgeo: error: \(problem.message)")
                throw ExitCode.validationFailure
            }
            // Following another process's ingests needs its database; reading sources makes one.
            let store = try await global.openStore(readOnly: source.isEmpty)
            let stateURL = URL(fileURLWithPath: statePath(queries: queries))
            let saved: WatchState?
            do { saved = try await BlockingThreads.run { try WatchState.load(from: stateURL) } } catch {
                Terminal.printError("trafficgeo: warning: the watch state \(stateURL.path) is unreadable (\(error)); starting over")
                saved = nil
            }
            var matcher = WatchMatcher(queries: queries, state: saved)
            if !global.quiet {
                let resumed = saved != nil && matcher.state.lastSequence != nil
                Terminal.printError("trafficgeo: watching \(queries.count == 1 ? "'\(queries[0].name)'" : "\(queries.count) areas") "
                                    + (resumed ? "from seq \(matcher.state.lastSequence!)" : "from now") + "; state in \(stateURL.path)")
            }
            let logger = Logger(label: "trafficgeo.watch")
            var deliveries: [any WatchDelivery] = []
            if !noStdout {
                deliveries.append(ConsoleDelivery(style: (format ?? (Terminal.stdoutIsTerminal ? .lines : .ndjson)) == .lines ? .lines : .ndjson))
            }
            if let exec { deliveries.append(ExecDelivery(command: exec, logger: logger)) }
            deliveries += webhook.map { WebhookDelivery(url: $0, logger: logger) }
            if let ntfy, let delivery = NtfyDelivery(url: ntfy, logger: logger) { deliveries.append(delivery) }

            var ingestor = FeedIngestor(store: store)
            try live.configure(&ingestor, looping: !source.isEmpty)
            let interval = every.map { DurationArgument.duration($0, or: 120) } ?? .seconds(source.isEmpty ? 5 : 120)
            var loop = WatchLoop(store: store, ingestor: ingestor, stateURL: stateURL)
            loop.sources = source
            loop.interval = interval
            loop.once = once
            loop.keepChanges = live.keepChangesDuration
            loop.deliveries = deliveries
            loop.maxBackoff = live.maxBackoffDuration
            let verbose = global.verbose
            loop.onIngest = { read in
                // Good reads only with --verbose: the events are the watch's output.
                if case .read = read.outcome, !verbose { return }
                Terminal.printError(IngestCommand.describe(read), fields: IngestCommand.fields(of: read))
            }
            let stop = once ? StopRequest() : StopRequest.onSignals(saying: "the watch's place is saved")
            try await loop.run(&matcher, until: stop)
            if !global.quiet { Terminal.printError("trafficgeo: watch stopped at seq \(matcher.state.lastSequence ?? 0)") }
        }
    }
}

enum DurationText {
    static func describe(_ seconds: Double) -> String {
        seconds >= 3600 ? "\(Int(seconds / 3600))h" : seconds >= 60 ? "\(Int(seconds / 60))m" : seconds >= 10 || seconds == seconds.rounded() ? "\(Int(seconds.rounded()))s" : String(format: "%.1fs", seconds)
    }
}
