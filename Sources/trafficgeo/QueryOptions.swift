import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoQuery
import TrafficGeoRoadTitles
import TrafficGeoStore
import TrafficGeoSupport

/// A query location given as --lat/--lon, read by the query model (`QueryText.center`): the
/// same numbers, ranges and words as `serve`'s lat/lon and a watches file's.
struct LocationOptions: ParsableArguments {
    // `.unconditional`: the value may start with a minus (--lon -0.12, west of Greenwich), which
    // the parser would otherwise take for an option.
    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.lat.help(on: .commandLine), valueName: "degrees"))
    var lat: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.lon.help(on: .commandLine), valueName: "degrees"))
    var lon: String?

    func validate() throws { _ = try coordinateIfGiven() }

    var isGiven: Bool { lat != nil || lon != nil }

    func add(to text: inout QueryText) {
        text.add(.lat, lat)
        text.add(.lon, lon)
    }

    /// The position, or nil when neither --lat nor --lon is given.
    func coordinateIfGiven() throws -> Coordinate? {
        var text = QueryText()
        add(to: &text)
        return try CommandLineQuery.read { () throws(QueryTextError) in try text.center() }
    }

    /// The position (the command has checked that one is given).
    func coordinate() throws -> Coordinate {
        guard let c = try coordinateIfGiven() else { throw ValidationError("Give --lat and --lon.") }
        return c
    }
}

/// The query model's refusals (`QueryTextError`) as the command line's usage errors (exit 64),
/// naming the options as they are typed.
enum CommandLineQuery {
    static func read<T>(_ body: () throws(QueryTextError) -> T) throws -> T {
        do throws(QueryTextError) { return try body() } catch { throw refusal(error) }
    }

    /// The area of a standing question (`QueryText.area`; reading the route may fail otherwise).
    static func area(_ text: QueryText, routeLine: (String) throws -> [Coordinate]) throws -> QueryArea? {
        do { return try text.area(routeLine: routeLine) } catch let error as QueryTextError { throw refusal(error) }
    }

    static func refusal(_ error: QueryTextError) -> ValidationError { ValidationError(error.message(on: .commandLine) + ".") }

    /// An empty answer to `--active-at` says, when incidents match without the time, that none of
    /// them was in effect then and why that can be: an empty list alone reads as "no data".
    static func explainNothingInEffect(_ filter: IncidentFilter, matchesWithout: (IncidentFilter) throws -> Bool) {
        guard let at = filter.activeAt else { return }
        var untimed = filter
        untimed.activeAt = nil
        guard (try? matchesWithout(untimed)) == true else { return }
        let unconfirmed = filter.unconfirmedAfter.map { "not heard of for \(DurationExpression.words($0)) with no end given (--unconfirmed-after)" }
        let reasons = ["over", "not yet begun", "outside their schedule's hours", unconfirmed].compactMap { $0 }.joined(separator: ", or ")
        Terminal.printError("trafficgeo: note: incidents match without --active-at, but none was in effect at \(TimestampParser.format(at)): they are \(reasons)")
    }

    /// An empty answer from a store that holds nothing a question by place can find says why:
    /// no incident at all, or none with a position (a feed whose positions were not read, or
    /// titles not yet geocoded). An empty list alone reads as "no traffic".
    @available(*, noasync, message: "blocks its thread: call it on a store thread")
    static func explainEmptyStore(_ store: any StoreReader) {
        guard let s = try? store.statistics() else { return }
        if s.total == 0 {
            Terminal.printError("trafficgeo: note: the database holds no incidents yet: read a feed first (trafficgeo ingest FEED)")
        } else if s.located == 0 {
            Terminal.printError("trafficgeo: note: none of its \(s.total) incidents has a position, so no question by place finds one: "
                + "`trafficgeo geocode pending` places them from their words (if the feed gives positions under names trafficgeo did not read, see docs/feeds.md)")
        }
    }

    /// A distance option that is one of the model's fields (--radius, --buffer).
    static func distance(_ field: QueryField, _ value: String) throws -> Double {
        var text = QueryText()
        text.add(field, value)
        return try read { () throws(QueryTextError) in try text.distance(field) ?? 0 }
    }
}

/// A place name instead of coordinates (`trafficgeo near Köln`), found by the configured geocoder.
struct PlaceOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("A place to search around instead of --lat/--lon (e.g. Köln, \"Paris, France\"), found by the geocoder.", valueName: "place"))
    var place: String?

    @OptionGroup(title: "Geocoder (for a place name)") var geocoding: GeocoderOptions

    /// The place's coordinate, saying on stderr which place was taken (and the others of its
    /// name far from it); exit 2 when none is found. A country after a comma is where it is
    /// looked for; without one, a place near the store's incidents comes first (`TypedPlace`).
    func resolve(quiet: Bool, store: (any StoreReader)? = nil) async throws -> Coordinate? {
        guard let place else { return nil }
        let service = try geocoding.makeService(cache: nil)
        let typed = TypedPlace(place, countries: CountryNames.shared())
        var nearness: (@Sendable (Coordinate) async throws -> Double?)?
        if let store {
            nearness = { point in
                let nearest: [QueryResult] = try await store.nearest(to: point, limit: 1, maxDistance: TypedPlace.nearIncidents, filter: IncidentFilter())
                return nearest.first?.distance
            }
        }
        guard let choice = try await typed.find(with: service, distanceToIncidents: nearness) else {
            let provider = service.providers.map(\.name).joined(separator: ", ")
            Terminal.printError("trafficgeo: not found: \(provider) knows no place '\(place)'; give --lat and --lon, or another --geocoder")
            throw TrafficGeoExit.notFound
        }
        if !quiet {
            let best = choice.taken
            // States are named where they tell places apart (the names are read only then: a tenth of a second).
            let names = place.contains(",") || !choice.others.isEmpty ? CountryNames.shared() : nil
            let label = { (c: GeocodeCandidate) in CountryNames.label(c, names: names) }
            if choice.countryIgnored {
                Terminal.printError("trafficgeo: warning: " + typed.areaIgnoredWarning)
            }
            // "Paris, Texarkana" answered by Paris, France: said (with an area given, what follows it is not).
            let unread = typed.isAnywhere ? typed.partsNotIn(best) : []
            if !unread.isEmpty, let first = typed.name.split(separator: ",").first {
                Terminal.printError("trafficgeo: warning: '\(unread.joined(separator: ", "))' is no country or state trafficgeo knows, and \(label(best)) does not show it: "
                    + "if you meant another \(first), give its country (\"\(first), US\", \"\(first), Canada\") or --lat and --lon")
            }
            var line = String(format: "trafficgeo: %@ is at %.5f, %.5f (%@, from %@)", label(best),
                              best.coordinate.latitude, best.coordinate.longitude, best.kind.rawValue, best.provider ?? "the geocoder")
            if let reason = choice.reason { line += ", \(reason)" }
            Terminal.printError(line)
            if !choice.others.isEmpty {
                let others = choice.others.map { "\(label($0.place)) (\(Int(($0.distance / 1000).rounded())) km away)" }
                // A country tells one apart from the places of another country, a state from
                // those of another state.
                let ask = choice.others.lazy.compactMap { other -> String? in
                    if let country = other.place.countryCode, country != best.countryCode { return country.uppercased() }
                    guard let country = other.place.countryCode, other.place.admin1 != best.admin1,
                          let admin1 = other.place.admin1 else { return nil }
                    return names?.shortName(of: PlaceArea(country: country, admin1: admin1))
                }.first.map { "\"\(typed.name), \($0)\"" }
                Terminal.printError("trafficgeo: note: also named '\(typed.name)': \(others.joined(separator: "; "))"
                    + (ask.map { "; ask for \($0) to take another" } ?? "; give --lat and --lon for another"))
            }
        }
        return choice.taken.coordinate
    }
}

/// Many query points from a file, answered in one process (`--queries`) on one read snapshot, with optional timing.
struct BatchQueryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Answer every point of this CSV (columns qid or id, lat, lon; each qid once; - reads stdin) in one process; rows qid,id,distance_m.", valueName: "file"))
    var queries: String?

    @Flag(help: "With --queries: report the time of each query on stderr (a summary line and a JSON line).")
    var timing = false

    @Option(parsing: .unconditional, help: ArgumentHelp("With --queries: answer on this many threads at once, every one on the same state of the database (default: one per core, at most \(Self.maxThreads); fewer than 32 points, or a PostgreSQL database, answer on one).", valueName: "n"))
    var threads: Int?

    static let maxThreads = 8

    /// `--queries` writes CSV rows: another --format, an `-o` file named for another format, or
    /// an option of the incidents' output (order, CRS, geometry) would be silently ignored, so it
    /// is refused; so are the batch options without `--queries`.
    func check(_ query: QueryOptions) throws {
        let format = query.format, output = query.output
        if queries == nil, threads != nil || timing {
            throw ValidationError("\(threads != nil ? "--threads" : "--timing") is for batch queries: give --queries FILE too, or leave it out.")
        }
        if let threads, !(1...Self.maxThreads).contains(threads) { throw ValidationError("--threads must be 1 … \(Self.maxThreads).") }
        guard queries != nil else { return }
        if let format, format != .csv {
            throw ValidationError("--queries writes CSV rows (qid,id,distance_m); leave out --format \(format.rawValue), or use --format csv.")
        }
        if format == nil, let output, let named = OutputFormat.forFile(output), named != .csv {
            throw ValidationError("--queries writes CSV rows (qid,id,distance_m), but -o \(output) would be written as --format \(named.rawValue): name the file .csv.")
        }
        let ignored = [query.sort.map { _ in "--sort" }, query.crs.map { _ in "--crs" }, query.geometry != .point ? "--geometry" : nil]
        if let option = ignored.compactMap({ $0 }).first {
            throw ValidationError("\(option) does not apply to --queries: its rows are each point's answers nearest first, with geodesic distances in metres; leave \(option) out.")
        }
    }

    /// Runs `answer` for every point (`NeighbourBatch`, on `--threads` sessions of the store),
    /// writing `qid,id,distance_m` rows; the timing goes to stderr.
    func run(output: String?, quiet: Bool, engine: QueryEngine,
             answer: @escaping @Sendable (any NeighbourSearch, Coordinate) throws -> [Neighbour]) async throws {
        guard let queries else { return }
        // A file or standard input (which may block): on a thread for blocking work.
        let points = try await BlockingThreads.run { try QueryLocations.read(path: queries) }
        if points.isEmpty && !quiet { Terminal.printError("trafficgeo: warning: \(QueryLocations.name(of: queries)) holds no query points (a header only): nothing to answer") }
        let sink = try output.map { try TextSink(path: $0) } ?? TextSink()
        let sessions = threads ?? min(Self.maxThreads, ProcessInfo.processInfo.activeProcessorCount)
        let batch = try await NeighbourBatch.run(points, into: sink, store: engine.store, sessions: sessions, answer: answer)
        if !quiet, batch.unanswered > 0 {
            // Such a point has no row: say so, or it would seem forgotten.
            Terminal.printError("trafficgeo: note: \(batch.unanswered) of \(points.count) points have no answer (nothing within reach that the filters let through), so no row")
        }
        if let output, !quiet {
            Terminal.printError("trafficgeo: wrote \(batch.rows) rows for \(points.count) point\(points.count == 1 ? "" : "s") to \(output)")
        }
        if timing {
            let threads = "\(batch.sessions) thread\(batch.sessions == 1 ? "" : "s")"
            Terminal.printError(String(format: "trafficgeo: timing: %d queries in %.3f s on %@, median %.3f ms, p95 %.3f ms per query",
                                       points.count, batch.seconds, threads, batch.median, batch.p95))
            // One JSON object a script reads: keys sorted, so that the line is the same shape every run.
            let json = try JSONSerialization.data(withJSONObject: ["total_s": batch.seconds, "lat_ms": batch.latencies, "queries": points.count,
                                                                   "rows": batch.rows, "threads": batch.sessions], options: [.sortedKeys])
            Terminal.printError(String(decoding: json, as: UTF8.self))
        }
    }
}
/// Options whose text the query model reads (`add(to:)`): their filter is the model's reading.
protocol QueryTextOptions {
    func add(to text: inout QueryText)
}

extension QueryTextOptions {
    func filter(now: Date = Date()) throws -> IncidentFilter {
        var text = QueryText()
        add(to: &text)
        return try CommandLineQuery.read { () throws(QueryTextError) in try text.filter(now: now) }
    }
}

/// The conditions every query, `changes` and `watch` accept: the incident's update time, and
/// the rest (`ContentFilterOptions`; `changes` has its own --since, a sequence number or time).
struct FilterOptions: ParsableArguments, QueryTextOptions {
    @OptionGroup var content: ContentFilterOptions

    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.since.help(on: .commandLine), valueName: "time"))
    var since: String?

    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.until.help(on: .commandLine), valueName: "time"))
    var until: String?

    func validate() throws { _ = try filter() }

    func add(to text: inout QueryText) {
        content.add(to: &text)
        text.add(.since, since)
        text.add(.until, until)
    }

}

/// Conditions on what an incident is: active, road, category, words, placement. Read by the
/// query model (`QueryText.filter`), as `serve`'s parameters and a watches file's keys are.
struct ContentFilterOptions: ParsableArguments, QueryTextOptions {
    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.activeAt.help(on: .commandLine), valueName: "time"))
    var activeAt: String?

    @Option(name: .customLong("unconfirmed-after"), help: ArgumentHelp(QueryField.unconfirmedAfter.help(on: .commandLine), valueName: "duration"))
    var unconfirmedAfter: String?

    @Option(help: ArgumentHelp(QueryField.road.help(on: .commandLine), valueName: "road"))
    var road: [String] = []

    @Option(help: ArgumentHelp(QueryField.category.help(on: .commandLine), valueName: "list"))
    var category: [String] = []

    @Option(help: ArgumentHelp(QueryField.search.help(on: .commandLine), valueName: "words"))
    var search: String?

    @Option(name: .customLong("min-confidence"), help: ArgumentHelp(QueryField.minConfidence.help(on: .commandLine), valueName: "c"))
    var minConfidence: String?

    @Option(name: .customLong("min-severity"), help: ArgumentHelp(QueryField.minSeverity.help(on: .commandLine), valueName: "level"))
    var minSeverity: String?

    @Option(help: ArgumentHelp(QueryField.precision.help(on: .commandLine), valueName: "list"))
    var precision: String?

    @Option(name: .customLong("min-delay"), help: ArgumentHelp(QueryField.minDelay.help(on: .commandLine), valueName: "duration"))
    var minDelay: String?

    @Flag(help: ArgumentHelp(QueryField.reports.help(on: .commandLine)))
    var reports = false

    func validate() throws { _ = try filter() }

    func add(to text: inout QueryText) {
        text.add(.activeAt, activeAt)
        text.add(.road, road)
        text.add(.category, category)
        text.add(.search, search)
        text.add(.minConfidence, minConfidence)
        text.add(.precision, precision)
        text.add(.minSeverity, minSeverity)
        text.add(.minDelay, minDelay)
        text.add(.unconfirmedAfter, unconfirmedAfter)
        if reports { text.add(.reports, "true") }
    }

}

/// Filters, sorting and output shared by every query command.
struct QueryOptions: ParsableArguments {
    @OptionGroup var filters: FilterOptions

    @Option(help: ArgumentHelp(QueryField.sort.help(on: .commandLine), valueName: "key"))
    var sort: String?

    /// `--sort`, read by the query model as `serve`'s sortby is (`hasCenter`: the command
    /// measures distances from a point, as near and within do).
    func sortOrder(hasCenter: Bool = true) throws -> QuerySort? {
        var text = QueryText()
        text.add(.sort, sort)
        return try CommandLineQuery.read { () throws(QueryTextError) in try text.sort(hasCenter: hasCenter) }
    }

    @Option(name: .shortAndLong, help: "Output format (default: from -o's extension — .geojson, .json, .csv, .geojsons, .txt — else annotations on a terminal, json otherwise; export: geojson).")
    var format: OutputFormat?

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Write to this file (atomically) instead of stdout ('-' is stdout).", valueName: "file"))
    var outputArgument: String?

    /// The file to write; nil for stdout (`-o -` is stdout, as everywhere on the command line).
    var output: String? { outputArgument == "-" ? nil : outputArgument }

    @Option(help: ArgumentHelp("GeoJSON geometry: point (every incident, one type as GIS tools want), segment (LineStrings; incidents without a segment are left out), mixed (LineString where known, else Point; for map viewers).", valueName: "kind"))
    var geometry: GeometryChoice = .point

    @Option(help: ArgumentHelp("Write CSV and GeoPackage positions in this CRS (any PROJ definition: EPSG:25832, EPSG:31467, a PROJ string, WKT); columns named for its axes. GeoJSON stays WGS84 (RFC 7946).", valueName: "crs"))
    var crs: String?

    func filter() throws -> IncidentFilter { try filters.filter() }

    func validate() throws {
        _ = try sortOrder()
        if format == nil, let output, OutputFormat.forFile(output) == nil {
            let suffix = (output as NSString).pathExtension
            if !suffix.isEmpty {
                throw ValidationError("-o '\(output)': '.\(suffix)' names no output format; name the file .geojson, .json, .csv, .geojsons, .txt or .gpkg, or give --format.")
            }
        }
        if outputFormat == .gpkg, output == nil {
            throw ValidationError("A GeoPackage is a file: give its name with -o (e.g. -o incidents.gpkg).")
        }
    }

    /// The CRS of CSV and GeoPackage positions; stderr says when `--crs` does not apply.
    func outputCRS(quiet: Bool) throws -> OutputCRS {
        guard let crs else { return .wgs84 }
        guard outputFormat.takesOtherCRS else {
            if !quiet {
                Terminal.printError("trafficgeo: note: \(outputFormat.rawValue) positions are WGS84 longitude/latitude (GeoJSON by RFC 7946); --crs applies to --format csv and gpkg")
            }
            return .wgs84
        }
        do {
            return try OutputCRS(crs)
        } catch {
            throw ValidationError("--crs: \(error)")
        }
    }

    /// `--format`, else what `-o`'s extension names (out.geojson is GeoJSON), else cards on a
    /// terminal and JSON otherwise.
    var outputFormat: OutputFormat { format ?? output.flatMap(OutputFormat.forFile) ?? (output == nil && Terminal.stdoutIsTerminal ? .annotations : .json) }

    /// Streams results to stdout or the output file; returns how many were written. With
    /// `--geometry segment`, the results without a segment are left out, and stderr says how many.
    /// The answer's states use the question's `--unconfirmed-after` (`IncidentFilter.answerUnconfirmedAfter`).
    @discardableResult
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    /// `alongRoute`: the answers are along a route (`along`: CSV adds its column).
    func write(quiet: Bool = false, alongRoute: Bool = false, _ produce: ((QueryResult) throws -> Void) throws -> Void) throws -> Int {
        // nil ("never") is a limit too: not the default.
        let limit: TimeInterval? = (try? filter()).map(\.unconfirmedAfter) ?? IncidentFilter.defaultUnconfirmedAfter
        return try IncidentFilter.$answerUnconfirmedAfter.withValue(limit) { try writeAnswer(quiet: quiet, alongRoute: alongRoute, produce) }
    }

    private func writeAnswer(quiet: Bool, alongRoute: Bool, _ produce: ((QueryResult) throws -> Void) throws -> Void) throws -> Int {
        let format = outputFormat
        let now = Date()
        let crs = try outputCRS(quiet: quiet)
        // A GeoPackage writes its own file; the text sink then holds nothing and is not committed.
        let sink = try format == .gpkg ? TextSink() : (output.map { try TextSink(path: $0) } ?? TextSink())
        let writer = format.makeWriter(sink: sink, color: output == nil && Terminal.useColor, geometry: geometry,
                                       width: output == nil ? Terminal.columns : nil, crs: crs, file: output, alongRoute: alongRoute)
        let onlySegments = geometry == .segment && (format == .geojson || format == .geojsonseq)
        var count = 0, leftOut = 0, over = 0, unconfirmed = 0
        defer {
            if leftOut > 0 && !quiet {
                Terminal.printError("trafficgeo: note: \(leftOut) incidents without a segment were left out (--geometry point writes every incident)")
            }
            if crs.failures > 0 && !quiet {
                Terminal.printError("trafficgeo: warning: \(crs.failures) positions cannot be expressed in \(self.crs ?? "the CRS") and were written without one (\(crs.firstFailure ?? "")); choose a CRS that covers them")
            }
        }
        do {
            try writer.begin()
            try produce { result in
                if onlySegments && !geometry.fits(result.incident) { leftOut += 1; return }
                try writer.write(result)
                if !result.stored.isLive(at: now) { over += 1 }
                else if IncidentFilter.isUnconfirmed(result.stored, at: now, after: IncidentFilter.answerUnconfirmedAfter) { unconfirmed += 1 }
                count += 1
            }
            try writer.end()
            if format != .gpkg { try sink.commit() }
        } catch {
            sink.abandon()
            (writer as? GeoPackageWriter)?.abandon()
            throw error
        }
        if !quiet {
            if let output {
                let named = format == OutputFormat.forFile(output) ? "" : " (\(format.rawValue))"
                Terminal.printError("trafficgeo: wrote \(count) incidents to \(output)\(named)")
            }
            // The answer holds incidents that are over (their state says so in every format):
            // say how to leave them out, so that nobody takes them for today's traffic.
            if over > 0, filters.content.activeAt == nil {
                Terminal.printError("trafficgeo: note: \(over) of \(count) incidents have expired or ended (state in the output); --active-at now leaves them out")
            }
            if unconfirmed > 0, filters.content.activeAt == nil, let limit = IncidentFilter.answerUnconfirmedAfter {
                Terminal.printError("trafficgeo: note: \(unconfirmed) of \(count) incidents give no end and have not been heard of for \(DurationExpression.words(limit)) (state unconfirmed: a file read once, not a feed followed); --active-at now leaves them out, --unconfirmed-after changes the limit")
            }
        }
        return count
    }
}

extension GeometryChoice: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {
    /// Any case: `--format GeoJSON` is `geojson`.
    public init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}

/// Distances on the command line: `DistanceExpression` (`25km`, `500m`, `3mi`; the unit is required).
enum DistanceArgument {
    static func parse(_ text: String) -> Double? { DistanceExpression.parse(text) }

    static func validated(_ text: String, option: String) throws -> Double {
        guard let metres = parse(text), metres.isFinite else {
            throw ValidationError("\(option) '\(text)' is not a distance: \(DistanceExpression.explain(text)).")
        }
        guard metres > 0 else { throw ValidationError("\(option) must be positive.") }
        return metres
    }
}

/// Lengths of time on the command line: `DurationExpression` (`90s`, `2m`, `12h`, `7d`, `2w`; the
/// unit is required), with the option's name in its refusal.
enum DurationArgument {
    static func parse(_ text: String) -> Double? { DurationExpression.parse(text) }

    /// A validated option's text as a Swift `Duration` (`fallback` seconds if it does not parse,
    /// which `validated` has already ruled out).
    static func duration(_ text: String, or fallback: Double) -> Duration {
        .milliseconds(Int64((parse(text) ?? fallback) * 1000))
    }

    static func validated(_ text: String, option: String) throws -> Double {
        guard let seconds = parse(text) else {
            throw ValidationError("\(option) '\(text)' is not a length of time: \(DurationExpression.explain(text)).")
        }
        guard seconds <= DurationExpression.longest else { throw ValidationError("\(option) '\(text)' is longer than a century.") }
        return seconds
    }
}
