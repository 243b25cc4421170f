import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore

extension AsyncParsableCommand {
    /// near and within ask around one of: a place name, --lat/--lon, or the points of --queries.
    static func checkOneLocation(_ location: LocationOptions, _ batch: BatchQueryOptions, _ place: PlaceOptions) throws {
        guard [location.isGiven, batch.queries != nil, place.place != nil].filter({ $0 }).count == 1 else {
            if let name = place.place, location.isGiven || batch.queries != nil {
                // A stray word after a misspelt option (`--limti 3`), or one this command does not
                // have (`within --limit 3`), lands here as the place: name that option.
                let arguments = CommandLine.arguments
                if let at = arguments.lastIndex(of: name), at > 1, arguments[at - 1].hasPrefix("-"), arguments[at - 1].count > 1,
                   Double(arguments[at - 1]) == nil {   // not a negative number, the value of the option before
                    throw ValidationError("\(arguments[at - 1]) is not an option of \(Self.configuration.commandName ?? "this command") (see --help), so '\(name)' after it was read as a place name.")
                }
                throw ValidationError("'\(name)' was read as a place name, but \(location.isGiven ? "--lat/--lon" : "--queries") is given too: is an option before it misspelt (see --help)? Give a place name, --lat and --lon, or --queries FILE (one of them).")
            }
            throw ValidationError("Give a place name, --lat and --lon, or --queries FILE (one of them).")
        }
    }
}

struct NearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "near",
        abstract: "The incidents nearest to a location, by exact WGS84 distance.")

    /// The most neighbours one query asks for (a million: more than any feed holds nearby).
    static let maxLimit = 1_000_000

    @OptionGroup var global: GlobalOptions
    @OptionGroup var location: LocationOptions

    @Option(name: [.customShort("k"), .long], help: "How many incidents.")
    var limit = 10

    @Option(help: ArgumentHelp("Only incidents within this distance (e.g. 50km).", valueName: "distance"))
    var maxDistance: String?

    @OptionGroup var query: QueryOptions
    @OptionGroup var batch: BatchQueryOptions
    @OptionGroup var place: PlaceOptions

    func validate() throws {
        try Self.checkOneLocation(location, batch, place)
        guard (1...NearCommand.maxLimit).contains(limit) else { throw ValidationError("--limit must be 1 … \(NearCommand.maxLimit).") }
        try batch.check(query)
        if let maxDistance { _ = try DistanceArgument.validated(maxDistance, option: "--max-distance") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let engine = QueryEngine(store: try await global.openStore(readOnly: true))
            let max = try maxDistance.map { try DistanceArgument.validated($0, option: "--max-distance") }
            let filter = try query.filter()
            if batch.queries != nil {
                try await batch.run(output: query.output, quiet: global.quiet, engine: engine) { search, point in
                    try search.nearestNeighbours(to: point, limit: limit, maxDistance: max, filter: filter)
                }
                return
            }
            let center = try await place.resolve(quiet: global.quiet, store: engine.store) ?? location.coordinate()
            try await StoreThreads.run {
                var results = try engine.nearest(to: center, limit: limit, maxDistance: max, filter: filter)
                if let sort = try query.sortOrder() { results = QueryEngine.sort(results, by: sort) }
                try query.write(quiet: global.quiet) { emit in try results.forEach(emit) }
                if results.isEmpty && !global.quiet {
                    CommandLineQuery.explainNothingInEffect(filter) { try !engine.nearest(to: center, limit: 1, maxDistance: max, filter: $0).isEmpty }
                    CommandLineQuery.explainEmptyStore(engine.store)
                }
            }
        }
    }
}

struct WithinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "within",
        abstract: "Every incident within a radius of a location (boundary included), nearest first.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var location: LocationOptions

    @Option(name: [.customShort("r"), .long], parsing: .unconditional, help: ArgumentHelp(QueryField.radius.help(on: .commandLine), valueName: "distance"))
    var radius: String

    @OptionGroup var query: QueryOptions
    @OptionGroup var batch: BatchQueryOptions
    @OptionGroup var place: PlaceOptions

    func validate() throws {
        try Self.checkOneLocation(location, batch, place)
        _ = try CommandLineQuery.distance(.radius, radius)
        try batch.check(query)
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let engine = QueryEngine(store: try await global.openStore(readOnly: true))
            let metres = try CommandLineQuery.distance(.radius, radius)
            let filter = try query.filter()
            if batch.queries != nil {
                try await batch.run(output: query.output, quiet: global.quiet, engine: engine) { search, point in
                    try search.withinNeighbours(radius: metres, of: point, filter: filter)
                }
                return
            }
            let center = try await place.resolve(quiet: global.quiet, store: engine.store) ?? location.coordinate()
            try await StoreThreads.run {
                let results = try engine.within(radius: metres, of: center, filter: filter)
                let sorted = try query.sortOrder().map { QueryEngine.sort(results, by: $0) } ?? results
                try query.write(quiet: global.quiet) { emit in try sorted.forEach(emit) }
                if sorted.isEmpty && !global.quiet {
                    CommandLineQuery.explainEmptyStore(engine.store)
                    // An empty circle says how far the nearest match is, so a radius that was too
                    // small is seen at once.
                    let nearest = try engine.nearest(to: center, limit: 1, filter: filter).first?.distance
                    Terminal.printError("trafficgeo: nothing within \(Annotation.formatDistance(metres)); "
                        + (nearest.map { "the nearest match is \(Annotation.formatDistance($0)) away" } ?? "no incident matches at any distance"))
                    CommandLineQuery.explainNothingInEffect(filter) { try !engine.within(radius: metres, of: center, filter: $0).isEmpty }
                }
            }
        }
    }
}

struct BoundingBoxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bbox",
        abstract: "Every incident inside a longitude/latitude box (west > east crosses the antimeridian).")

    @OptionGroup var global: GlobalOptions
    @Option(parsing: .unconditional, help: ArgumentHelp("Western edge, longitude -180 … 180.", valueName: "degrees")) var west: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Southern edge, latitude -90 … 90.", valueName: "degrees")) var south: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Eastern edge, longitude -180 … 180 (less than --west: the box crosses the antimeridian).", valueName: "degrees")) var east: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Northern edge, latitude -90 … 90.", valueName: "degrees")) var north: String?
    @Option(parsing: .unconditional, help: ArgumentHelp(QueryField.bbox.help(on: .commandLine), valueName: "w,s,e,n")) var bbox: String?
    @OptionGroup var query: QueryOptions

    func validate() throws {
        _ = try box()
        _ = try query.sortOrder(hasCenter: false)
    }

    /// The box, read by the query model (`QueryText.box`) from --bbox or the four edges.
    func box() throws -> LonLatBox {
        let edges = [west, south, east, north]
        if let bbox {
            guard edges.allSatisfy({ $0 == nil }) else { throw ValidationError("Give --bbox or the four edges, not both.") }
            return try CommandLineQuery.read { () throws(QueryTextError) in try QueryText.box(bbox) }
        }
        guard let west, let south, let east, let north else {
            throw ValidationError("Give --west, --south, --east and --north (or --bbox west,south,east,north).")
        }
        let text = "\(west),\(south),\(east),\(north)"
        do throws(QueryTextError) { return try QueryText.box(text) } catch {
            throw ValidationError("--west,--south,--east,--north '\(text)' \(error.problem).")
        }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let engine = QueryEngine(store: try await global.openStore(readOnly: true))
            let box = try box(), filter = try query.filter(), sort = try query.sortOrder(hasCenter: false)
            // The store's work blocks: on a store thread (StoreThreads), not the task's.
            try await StoreThreads.run {
                if let sort {
                    var results: [QueryResult] = []
                    try engine.inBoundingBox(box, filter: filter) { results.append($0) }
                    try query.write(quiet: global.quiet) { emit in try QueryEngine.sort(results, by: sort).forEach(emit) }
                } else {
                    try query.write(quiet: global.quiet) { emit in
                        try engine.inBoundingBox(box, filter: filter, handle: emit)
                    }
                }
            }
        }
    }
}

struct AlongCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "along",
        abstract: "What is on the way: every incident within a buffer of a route, in the order a driver meets them.",
        discussion: """
            The route is a GeoJSON LineString (a geometry, a Feature, the first line of a \
            FeatureCollection; a MultiLineString's lines joined) or a GPX file's track (or route; \
            several track segments are joined in order). An incident is placed where the route \
            first passes within the buffer of it (a route that turns back meets it on the way \
            out); one with a road segment (a work zone) where the route first comes within the \
            buffer of its line. Each answer says how far along the route that is and how far off \
            it (table: ALONG, OFF). A route file that is not there exits 66, one that holds no \
            line 65.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp(QueryField.route.help(on: .commandLine), valueName: "file"))
    var route: String

    @Option(help: ArgumentHelp(QueryField.buffer.help(on: .commandLine), valueName: "distance"))
    var buffer: String?

    @OptionGroup var query: QueryOptions

    func validate() throws {
        // The buffer and the order now; the route file when the command runs (a file that is not
        // there is exit 66, one that is no route 65, as for a feed).
        _ = try area(routeLine: { _ in [] })
        _ = try query.sortOrder()
    }

    /// The corridor, read by the query model as `watch --route` reads it.
    func area(routeLine: (String) throws -> [Coordinate] = RouteLine.read(path:)) throws -> (route: [Coordinate], buffer: Double) {
        var text = QueryText()
        text.add(.route, route)
        text.add(.buffer, buffer)
        guard case let .corridor(line, metres)? = try CommandLineQuery.area(text, routeLine: routeLine) else {
            throw ValidationError("Give --route FILE.")
        }
        return (line, metres)
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let engine = QueryEngine(store: try await global.openStore(readOnly: true))
            let (line, metres) = try area()
            let course = RouteCourse(line)
            let filter = try query.filter(), sort = try query.sortOrder()
            try await StoreThreads.run {
                let met = try engine.along(course, buffer: metres, filter: filter)
                let results = sort.map { QueryEngine.sort(met, by: $0) } ?? met
                try query.write(quiet: global.quiet, alongRoute: true) { emit in try results.forEach(emit) }
                if results.isEmpty && !global.quiet {
                    Terminal.printError("trafficgeo: nothing within \(Annotation.formatDistance(metres)) of the route (\(Annotation.formatDistance(course.length)) long)")
                    CommandLineQuery.explainNothingInEffect(filter) { try !engine.along(course, buffer: metres, filter: $0).isEmpty }
                }
            }
        }
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the whole store, or a filtered part, for map viewers (GeoJSON by default), streamed.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Include incidents that have no position yet (as features with a null geometry).")
    var includeUnlocated = false

    @OptionGroup var query: QueryOptions

    func validate() throws { _ = try query.sortOrder(hasCenter: false) }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            var options = query
            if options.format == nil { options.format = options.output.flatMap(OutputFormat.forFile) ?? .geojson }
            let engine = QueryEngine(store: try await global.openStore(readOnly: true))
            let filter = try query.filter(), sort = try query.sortOrder(hasCenter: false)
            // Streamed from the store into the writer on a store thread (StoreThreads); sorted
            // (which needs every result first) only when --sort asks.
            _ = try await StoreThreads.run { [options] in
                try options.write(quiet: global.quiet) { emit in
                    guard let sort else { return try engine.all(filter: filter, locatedOnly: !includeUnlocated, handle: emit) }
                    var results: [QueryResult] = []
                    try engine.all(filter: filter, locatedOnly: !includeUnlocated) { results.append($0) }
                    try QueryEngine.sort(results, by: sort).forEach(emit)
                }
            }
            // What was left out, said: an incident the feed gave no usable position (an ALERT-C
            // record without a location table) is not silently missing from an export.
            if !includeUnlocated, !global.quiet {
                let unlocated = try await engine.store.count(filter: filter, locatedOnly: false) - engine.store.count(filter: filter, locatedOnly: true)
                if unlocated > 0 {
                    Terminal.printError("trafficgeo: note: \(unlocated) incident\(unlocated == 1 ? "" : "s") without a position left out (--include-unlocated writes them, with a null geometry)")
                }
            }
        }
    }
}
