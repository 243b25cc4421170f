import ArgumentParser
import Foundation
import Logging
import NIOConcurrencyHelpers
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoPROJ
import TrafficGeoStore
import TrafficGeoSupport

struct IngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Read incident feeds into the database.",
        discussion: """
            SOURCE is a file (or a file:// URL), - for stdin, or an http(s) URL. The format (atom, rss, autobahn, geojson, \
            csv, the road authorities' standards datex2, wzdx, open511, Waze's CIFS as waze, and GIS files through GDAL as gis: \
            KML, GML, Shapefile, GeoPackage, FlatGeobuf, …) is detected from the content; a gzip-compressed feed (.gz) is inflated first. DATEX II records located only \
            by ALERT-C codes need --tmc-table (else their words are geocoded). Each feed is stored in one transaction: an interrupted \
            ingest leaves the database as it was. Re-reading a feed updates its incidents in place.

            autobahn: reads the Autobahn GmbH API (every road; autobahn:A1,A3 some): each road's \
            warning, roadworks and closure lists, at most 4 requests at once, with retries and \
            conditional requests. It is a snapshot: incidents the API no longer lists end (they keep \
            their history; `--active-at now` leaves them out; `prune --ended` deletes them). A road \
            that fails is reported (exit 3) and its incidents are left as they were. --snapshot reads \
            any other feed the same way.

            Every new, changed and ended incident is recorded in the change feed (`trafficgeo \
            changes`, `trafficgeo watch`), kept for --keep-changes.

            A feed's incidents are filed under the feed's own identity: an Atom feed's <id> (else \
            its self link), an RSS channel's <link>, "autobahn" for the Autobahn API; other feeds \
            under their file name (without the folder), a URL as given, stdin as "stdin". So the \
            same feed saved twice, or piped in, updates the same incidents. --source-name overrides.

            With --every (2m, 30s), ingest keeps going: each source is read on its own schedule, \
            every --every from the start of its last read, each read a snapshot of the source \
            (--no-snapshot: not); one that fails is tried again after a \
            backoff that doubles each time (with jitter, at most --max-backoff), and feed health \
            records it (`trafficgeo stats`, serve's /ready). SIGTERM or Ctrl-C stops it: a write in \
            progress finishes, downloads are abandoned, exit 0. --metrics-file writes the loop's \
            numbers for node_exporter's textfile collector (docs/operations.md).

            A summary line per feed goes to stderr (--quiet leaves it out), like every message; \
            ingest writes nothing to stdout.

            Broken entries are reported on stderr and skipped. Exit status: 0 all feeds read, \
            3 some feeds failed, ended early or stored nothing (what was read is kept), 65 bad feed \
            data (also: every feed stored nothing it read: all entries skipped, or none placed), \
            66 missing input, 69 download failed, 1 database error.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Feeds to read: files, - for stdin, http(s) URLs, or autobahn: / autobahn:A1,A3.", valueName: "source"))
    var sources: [String]

    @OptionGroup(title: "Live sources") var live: LiveSourceOptions

    @Option(help: "The feed format, when detection from the content is not wanted.")
    var format: FeedFormat?

    @Option(name: .customLong("source-name"), help: "File the incidents under this source name instead of the feed's own identity or file name.")
    var sourceName: String?

    @Option(help: "Refuse feeds larger than this many bytes.")
    var maxFeedBytes: Int64 = FeedInput.defaultMaxBytes

    @Option(help: "Read at most this many entries of one feed; a longer feed keeps these and counts as broken (exit 3).")
    var maxEntries: Int = FeedIngestor.defaultMaxEntries

    @Flag(help: "Store incidents without a position as they are; geocode them later with `trafficgeo geocode pending`.")
    var noGeocode = false

    @Option(help: ArgumentHelp("The CRS of positions in CSV (x/y or easting/northing columns) and GeoJSON (any PROJ definition: EPSG:25832, EPSG:31467, a PROJ string, WKT), and of a GIS layer that names none. A GeoJSON file's own legacy crs member, and a GIS file's own CRS, are read without it. A position outside where the CRS is used is reported and not stored.", valueName: "crs"))
    var crs: String?

    @Option(name: .customLong("field"), help: ArgumentHelp("For a CSV feed or a GIS file's attributes: which column is which field, ROLE=COLUMN (title=advisorymessage, road=carretera, starts=fecha, latitude=head_latitude, geometry=wkt); repeat it for several. Roles: \(CSVColumns.Role.allCases.map(\.rawValue).joined(separator: ", ")). Columns not named are recognised by their names and contents, and the ingest says which it took.", valueName: "role=column"))
    var fields: [String] = []

    @Flag(name: .customLong("forget-reading"), help: "Drop the --field and --crs an earlier ingest of the source was given (each source is read with them until --field or --crs replaces them).")
    var forgetReading = false

    @OptionGroup var geocoding: GeocoderOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Keep reading the sources, each this long after its last read began (2m, 30s); stop with SIGTERM or Ctrl-C.", valueName: "duration"))
    var every: String?

    @Option(name: .customLong("fetch-timeout"), help: ArgumentHelp("Give up on a download that has not answered after this long.", valueName: "duration"))
    var fetchTimeout = "60s"

    @Option(name: .customLong("metrics-file"), help: ArgumentHelp("With --every: write the loop's metrics here after each read, in Prometheus's text format (for node_exporter's textfile collector: a *.prom file in its directory).", valueName: "file"))
    var metricsFile: String?

    func validate() throws {
        if sourceName != nil && sources.count > 1 {
            throw ValidationError("--source-name names one feed; give one source with it.")
        }
        if maxFeedBytes <= 0 { throw ValidationError("--max-feed-bytes must be positive.") }
        if maxEntries <= 0 { throw ValidationError("--max-entries must be positive.") }
        do { _ = try CSVColumns.mapping(fields) } catch { throw ValidationError("--field \(error)") }
        if sources.filter({ $0 == "-" }).count > 1 { throw ValidationError("stdin (-) can be read only once.") }
        guard try DurationArgument.validated(fetchTimeout, option: "--fetch-timeout") > 0 else { throw ValidationError("--fetch-timeout must be positive.") }
        if let every {
            guard try DurationArgument.validated(every, option: "--every") >= 1 else { throw ValidationError("--every must be at least 1s.") }
            if sources.contains("-") { throw ValidationError("--every reads its sources again and again; stdin (-) can be read only once.") }
            if let metricsFile { try MetricsTextfile.validate(metricsFile) }
        } else if metricsFile != nil {
            throw ValidationError("--metrics-file is for the loop: give --every too.")
        }
        if let crs, !Projector.isWGS84(crs) {
            // Checked before any feed is read: a CRS PROJ does not know is a usage error.
            do { try Projector.checkReadable(crs) } catch { throw ValidationError("--crs: \(error)") }
        }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore()
            var ingestor = FeedIngestor(store: store, format: format, sourceName: sourceName)
            try live.configure(&ingestor, looping: every != nil)
            ingestor.maxFeedBytes = maxFeedBytes
            ingestor.maxEntries = maxEntries
            ingestor.crs = crs
            ingestor.fields = try CSVColumns.mapping(fields)
            ingestor.forgetsKeptReading = forgetReading
            ingestor.fetchTimeout = DurationArgument.duration(fetchTimeout, or: 60)
            if every != nil { return try await runLoop(ingestor, store: store) }
            ingestor.progress = Self.progressReporter(verbose: global.verbose, quiet: global.quiet)
            var failures: [Error] = []
            var partial = false
            // Feeds that stored nothing they read (every entry skipped, or none with a position
            // and none placed): a data error, not a quiet day.
            var storedNothing = 0
            // Made on first need: loading the gazetteer costs time and memory that feeds with
            // coordinates never use. (The --geocoder spec was already checked in validate().)
            var service: GeocodingService?
            for source in sources {
                do {
                    let summary = try await ingestor.ingest(source)
                    if Terminal.stderrIsTerminal && !global.quiet { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                    for conflict in summary.positionConflicts.prefix(Self.conflictLines) {
                        Terminal.printError("trafficgeo: warning: \(source): \(conflict)")
                    }
                    if summary.positionConflicts.count > Self.conflictLines {
                        Terminal.printError("trafficgeo: warning: \(source): … and \(summary.positionConflicts.count - Self.conflictLines) more positions that contradict their junctions")
                    }
                    if !global.quiet { Terminal.printError(Self.describe(summary, location: source == "-" ? "stdin" : source)) }
                    var placed: Int?
                    if !noGeocode, summary.withoutPosition > 0 {
                        let geocoder = try service ?? geocoding.makeService(cache: store)
                        service = geocoder
                        let run = try await GeocodeRunner.run(store: store, service: geocoder, source: summary.source,
                                                              retryNotFound: false, limit: nil, quiet: global.quiet)
                        if run.stoppedBecause != nil { partial = true }
                        placed = run.foundTotal
                    }
                    if let why = Self.storedNothing(summary, placed: placed) {
                        Terminal.printError("trafficgeo: error: \(source == "-" ? "stdin" : source): \(why)")
                        storedNothing += 1
                    }
                    if let feedError = Self.feedProblem(summary) {
                        // A document of the Autobahn API that failed leaves its incidents as they were;
                        // a feed that broke off keeps what came before the break.
                        // (A feed over the entry limit says itself what was stored.)
                        let kept = summary.format == .autobahn && AutobahnAPI.roads(inLocation: source) != nil
                            ? " (the other documents were stored; the failed ones' incidents are kept as they were)"
                            : summary.feedFailure?.code == .tooManyEntries ? "" : " (entries before it were stored)"
                        Terminal.printError("trafficgeo: error: \(feedError)\(kept)")
                        partial = true
                    }
                } catch let error as FeedError {
                    Terminal.printError("trafficgeo: error: \(TrafficGeoExit.describe(error))")
                    failures.append(error)
                }
            }
            try await live.pruneChanges(store)
            if failures.count == sources.count, let first = failures.first {
                throw TrafficGeoExit.code(for: first)
            }
            if storedNothing > 0, storedNothing + failures.count == sources.count { throw TrafficGeoExit.dataError }
            if partial || !failures.isEmpty || storedNothing > 0 { throw TrafficGeoExit.partial }
        }
    }

    /// `--every`: the feed loop (`FeedLoop`) until SIGTERM or Ctrl-C; exit 0 when stopped.
    private func runLoop(_ ingestor: FeedIngestor, store: any IncidentStore) async throws {
        let metrics = metricsFile.map { MetricsTextfile(path: $0) }
        var loop = FeedLoop(ingestor: ingestor, sources: sources)
        loop.interval = DurationArgument.duration(every ?? "2m", or: 120)
        loop.maxBackoff = live.maxBackoffDuration
        loop.keepChanges = live.keepChangesDuration
        let quiet = global.quiet, noGeocode = self.noGeocode, geocoding = self.geocoding
        // Made on first need, then shared by every source (the service is an actor).
        let service = NIOLockedValueBox<GeocodingService?>(nil)
        loop.afterRead = { _, summary in
            guard !noGeocode, summary.withoutPosition > 0 else { return }
            let geocoder = try service.withLockedValue { made in
                if let made { return made }
                let new = try geocoding.makeService(cache: store)
                made = new
                return new
            }
            _ = try await GeocodeRunner.run(store: store, service: geocoder, source: summary.source, retryNotFound: false, limit: nil, quiet: true)
        }
        loop.onRead = { read in
            if case .read = read.outcome, quiet {} else { Terminal.printError(Self.describe(read), fields: Self.fields(of: read)) }
            // A file written (and renamed): on a thread for blocking work.
            if let metrics { _ = try? await BlockingThreads.runToEnd { metrics.write() } }
        }
        if !quiet {
            Terminal.printError("trafficgeo: reading \(loop.sources.count) source(s) every \(every ?? "2m") into \(store.location) (SIGTERM or Ctrl-C stops)")
        }
        let stop = StopRequest.onSignals(saying: "writes in progress finish")
        await loop.run(until: stop)
        metrics?.write()
        if !quiet { Terminal.printError("trafficgeo: ingest loop stopped") }
    }

    /// Why a feed was read only in part, in the command line's words (the feed's own error with
    /// the option that helps, else the summary's text).
    static func feedProblem(_ summary: IngestSummary) -> String? {
        summary.feedFailure.map(TrafficGeoExit.describe) ?? summary.feedError
    }

    /// One read of the feed loop (or of `watch --source`) in words.
    static func describe(_ read: FeedLoopRead) -> String {
        let next = read.nextReadIn.map { " (next read in \(DurationText.describe($0.inSeconds)))" } ?? ""
        switch read.outcome {
        case let .read(summary):
            return "trafficgeo: " + describe(summary, location: read.location) + next
        case let .partial(summary):
            return "trafficgeo: warning: \(read.location): \(Self.feedProblem(summary) ?? "read in part"); \(read.failuresInARow) in a row\(next)"
        case let .failed(error):
            return "trafficgeo: warning: \(failure(of: read.location, error)); \(read.failuresInARow) failure(s) in a row\(next)"
        }
    }

    /// The same read as fields of a JSON log line.
    static func fields(of read: FeedLoopRead) -> [String: Any] {
        var fields: [String: Any] = ["location": read.location, "failures_in_a_row": read.failuresInARow,
                                     "seconds": (read.duration.inSeconds * 1000).rounded() / 1000]
        if let next = read.nextReadIn { fields["next_read_seconds"] = (next.inSeconds * 10).rounded() / 10 }
        if let summary = read.outcome.summary {
            fields["source"] = summary.source
            fields["read"] = summary.read
            fields["new"] = summary.new
            fields["updated"] = summary.updated
            fields["ended"] = summary.ended
        }
        return fields
    }

    /// What went wrong reading a source, the source named once (most errors name it themselves).
    static func failure(of location: String, _ error: any Error) -> String {
        let text = TrafficGeoExit.describe(error)
        return text.hasPrefix(location) ? text : "\(location): \(text)"
    }

    /// On a terminal: one line rewritten in place. Otherwise, with --verbose: a line every 10,000 entries.
    static func progressReporter(verbose: Bool, quiet: Bool) -> (@Sendable (Int) -> Void)? {
        if quiet { return nil }
        if Terminal.stderrIsTerminal {
            return { count in FileHandle.standardError.write(Data("\r… \(count) entries read\u{1B}[K".utf8)) }
        }
        guard verbose else { return nil }
        return { count in if count % 10_000 == 0 { Terminal.printError("trafficgeo: … \(count) entries read") } }
    }

    /// Why a feed that was read stored nothing a query can answer, or nil: every entry it read
    /// was skipped, or none of those kept has a position and geocoding (`placed`: how many it
    /// placed; nil when it did not run) placed none. An empty feed is no error: a quiet day.
    static func storedNothing(_ s: IngestSummary, placed: Int?) -> String? {
        guard s.read > 0 else { return nil }
        if s.skipped.count >= s.read {
            return "all \(s.read) entries were skipped (the reasons above): nothing was stored. "
                + "Is it the feed you meant? --format names its format; docs/feeds.md says what each format needs."
        }
        let kept = s.read - s.skipped.count
        if let placed, placed == 0, s.withoutPosition >= kept {
            return "none of the \(kept) entries kept has a position, and geocoding placed none: no query by place will find them. "
                + "Does the feed have position fields under other names? docs/feeds.md; or try another geocoder (--geocoder)."
        }
        return nil
    }

    /// Contradicted positions reported one by one, at most this many per feed.
    static let conflictLines = 20

    static func describe(_ s: IngestSummary, location: String) -> String {
        // The source when it is not simply the location's name (a feed that names itself).
        let filedAs = s.source == FeedIdentity.sourceName(forLocation: location) ? "" : ", source \(s.source)"
        var text = "\(location) (\(s.format?.rawValue ?? "?")\(filedAs)): \(s.read) read, \(s.new) new, \(s.updated) updated, "
            + "\(s.unchanged) unchanged, \(s.skipped.count) skipped, \(s.withoutPosition) without position"
        if s.ended > 0 { text += ", \(s.ended) ended" }
        if s.merged > 0 { text += ", \(s.merged) merged into events other feeds report" }
        if s.positionsIgnored > 0 { text += " (\(s.positionsIgnored) whose feed position could not be used)" }
        if s.junctionObservations > 0 { text += ", \(s.junctionObservations) junction positions learned" }
        if !s.positionConflicts.isEmpty {
            let swapped = s.positionConflicts.filter(\.swapped).count
            text += ", \(s.positionConflicts.count) positions contradict their junctions (\(swapped) latitude/longitude swapped back)"
        }
        if !s.skipped.isEmpty {
            var reasons: [String: Int] = [:]
            for entry in s.skipped { reasons[entry.reason.prefix(while: { $0 != "'" }).trimmingCharacters(in: .whitespaces), default: 0] += 1 }
            let top = reasons.sorted { $0.value > $1.value || $0.value == $1.value && $0.key < $1.key }.prefix(5)
            text += "\n  skipped: " + top.map { "\($0.value)× \($0.key)" }.joined(separator: "; ")
        }
        return text
    }
}

extension FeedFormat: ExpressibleByArgument {
    /// Any case, as the output formats: `--format WZDx` is `wzdx`.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}
