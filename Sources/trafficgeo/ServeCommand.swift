import ArgumentParser
import Foundation
import Logging
import NIOCore
import TrafficGeo
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoServe
import TrafficGeoStore
import TrafficGeoSupport

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the incidents over HTTP: OGC API – Features, live events and a map page.",
        discussion: """
            Read-only over the store; `trafficgeo ingest` may write to it meanwhile (readers \
            never wait for it). Open http://127.0.0.1:8080/ in a browser for the map; GIS tools \
            (QGIS, GDAL: ogrinfo OAPIF:http://127.0.0.1:8080) read the collection `incidents`.

            Endpoints: / (the map; JSON with f=json), /conformance, /api (OpenAPI 3.0), \
            /collections, /collections/incidents, /collections/incidents/items (bbox, datetime, \
            limit, offset, nearest, filter (CQL2); the query fields, as docs/query-fields.md \
            lists them: \(QueryField.taken(on: .items).filter { $0 != .bbox }.map { $0.name(on: .parameter) }.joined(separator: ", "))), \
            /collections/incidents/items/ID, and /collections/incidents/events (Server-Sent Events \
            from the change feed; \(QueryField.taken(on: .eventStream).map { $0.name(on: .parameter) }.joined(separator: ", "))).

            For operators (docs/operations.md): /health (200 while the process runs), /ready (200 \
            when the store answers and, with --ready-max-age, every source was fetched within that \
            long; else 503 with a JSON body naming the stale sources), /metrics (Prometheus's \
            text format: requests, latency, items, event streams, the store's incidents, each \
            source's age and failures).

            Every request is logged on stderr (--quiet: errors only; probes of /health, /ready and \
            /metrics with --verbose only; --log-format json for one JSON object a line). Ctrl-C or SIGTERM stops \
            gracefully. docs/serve.md has the details.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The address to listen on (0.0.0.0: every interface; think before you do).", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("The port to listen on (0: any free one, reported on stderr).", valueName: "port"))
    var port = 8080

    @Option(name: .customLong("public-url"), help: ArgumentHelp("The URL clients reach the server at, for links (behind a proxy). Default: what the request's Host header says.", valueName: "url"))
    var publicURL: String?

    @Option(help: ArgumentHelp("The map's background tiles, a URL template with {z}/{x}/{y} (default: OpenStreetMap's tile server).", valueName: "url"))
    var tiles: String?

    @Option(name: .customLong("tiles-attribution"), help: ArgumentHelp("The attribution the tiles require (HTML).", valueName: "html"))
    var tilesAttribution: String?

    @Option(name: .customLong("leaflet-dir"), help: ArgumentHelp("Where Leaflet's files are (Debian's libjs-leaflet).", valueName: "dir"))
    var leafletDirectory = "/usr/share/javascript/leaflet"

    @Option(help: ArgumentHelp("Answer 503 when a query takes longer (10s, 500ms).", valueName: "duration"))
    var timeout = "10s"

    @Option(name: .customLong("query-threads"), help: ArgumentHelp("Threads that run store queries (default: the number of cores, at least 2).", valueName: "n"))
    var queryThreads: Int?

    @Option(name: .customLong("ready-max-age"), help: ArgumentHelp("/ready answers 503 unless every source was fetched successfully within this long (15m, 2h).", valueName: "duration"))
    var readyMaxAge: String?

    @Option(name: .customLong("ready-source"), help: ArgumentHelp("With --ready-max-age: judge only this source (repeatable; the names `trafficgeo stats` shows). Default: every source the store has fetched.", valueName: "name"))
    var readySources: [String] = []

    @Option(help: ArgumentHelp("A route clients ask along by name (route=NAME): NAME=FILE, a GeoJSON LineString or a GPX file (repeatable).", valueName: "name=file"))
    var route: [String] = []

    /// The saved routes, read now: a missing file is a mistake to hear about at start, not at a request.
    func savedRoutes() throws -> [String: [Coordinate]] {
        var routes: [String: [Coordinate]] = [:]
        for entry in route {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex, entry.index(after: equals) != entry.endIndex else {
                throw ValidationError("--route '\(entry)' must be NAME=FILE, such as --route commute=commute.gpx.")
            }
            let name = String(entry[..<equals]), path = String(entry[entry.index(after: equals)...])
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                throw ValidationError("--route '\(entry)': a route's name is letters, digits, '-', '_' and '.' (it goes in a URL).")
            }
            guard routes[name] == nil else { throw ValidationError("--route '\(name)' is given twice.") }
            do { routes[name] = try RouteLine.read(path: path) } catch { throw ValidationError("--route \(name): \(error).") }
        }
        return routes
    }

    func validate() throws {
        _ = try savedRoutes()
        if !readySources.isEmpty && readyMaxAge == nil { throw ValidationError("--ready-source needs --ready-max-age (how old is stale).") }
        if let readyMaxAge {
            guard try DurationArgument.validated(readyMaxAge, option: "--ready-max-age") > 0 else {
                throw ValidationError("--ready-max-age '\(readyMaxAge)' is not a positive length of time, such as 15m.")
            }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a port: use 1 … 65535 (0: any free one).") }
        guard try DurationArgument.validated(timeout, option: "--timeout") > 0 else {
            throw ValidationError("--timeout '\(timeout)' is not a positive length of time, such as 10s.")
        }
        if let queryThreads, !(1...256).contains(queryThreads) { throw ValidationError("--query-threads must be 1 … 256.") }
        if let publicURL, URL(string: publicURL)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw ValidationError("--public-url '\(publicURL)' must be an http:// or https:// URL.")
        }
        if let tiles, !(tiles.contains("{z}") && tiles.contains("{x}") && tiles.contains("{y}")) {
            throw ValidationError("--tiles '\(tiles)' must be a URL template with {z}, {x} and {y}, such as https://tile.openstreetmap.org/{z}/{x}/{y}.png.")
        }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore(readOnly: true)
            var configuration = ServeConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.publicURL = publicURL
            if let tiles { configuration.tileURL = tiles }
            if let tilesAttribution { configuration.tileAttribution = tilesAttribution }
            configuration.leafletDirectory = leafletDirectory
            configuration.routes = try savedRoutes()
            if let queryThreads { configuration.queryThreads = queryThreads }
            configuration.requestTimeout = DurationArgument.duration(timeout, or: 10)
            configuration.readySources = readySources.isEmpty ? nil : readySources
            configuration.readyMaxAge = readyMaxAge.map { DurationArgument.duration($0, or: 900) }
            if !FileManager.default.fileExists(atPath: leafletDirectory + "/leaflet.js") {
                Terminal.printError("trafficgeo: warning: no leaflet.js in \(leafletDirectory): the map page shows only the list (on Debian: apt install libjs-leaflet, or --leaflet-dir)")
            }
            if !readySources.isEmpty {
                // A misspelt name would keep /ready at 503 for ever: say so now.
                let known = Set(try await store.feedHealth().map(\.source))
                for name in readySources where !known.contains(name) {
                    Terminal.printError("trafficgeo: warning: --ready-source '\(name)' has never been fetched into this store "
                                        + "(`trafficgeo stats` lists the sources: \(known.sorted().joined(separator: ", "))); /ready counts it as stale")
                }
            }
            let server = IncidentServer(store: store, configuration: configuration, logger: Logger(label: "trafficgeo.serve"))
            let quiet = global.quiet
            let location = store.location
            do {
                try await server.run(until: .onSignals(saying: "requests in flight are answered")) { chosen in
                    // With --port 0 the port is news even to a quiet user.
                    if !quiet || port == 0 {
                        let shown = host.contains(":") ? "[\(host)]" : host
                        Terminal.printError("trafficgeo: serving \(location) at http://\(shown):\(chosen)/ (Ctrl-C stops)")
                    }
                }
                if !quiet { Terminal.printError("trafficgeo: serve stopped") }
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                throw ServeError("port \(port) on \(host) is in use (another server?): choose another with --port")
            } catch let error as IOError where error.errnoCode == EACCES {
                throw ServeError("not allowed to listen on port \(port): ports below 1024 need root; choose another with --port")
            }
        }
    }
}

struct ServeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
