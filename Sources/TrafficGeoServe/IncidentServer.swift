import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// `trafficgeo serve`: the store, read-only, over HTTP — OGC API – Features Part 1 (Core,
/// GeoJSON, HTML, OpenAPI 3.0) for the collection `incidents`, trafficgeo's own nearest and
/// within parameters on its items, Server-Sent Events from the change feed, and the map page.
/// On Hummingbird 2 under swift-service-lifecycle; its `StopRequest` (the same stop as the feed
/// loop's and watch's: `StopRequest.onSignals()` for SIGTERM and Ctrl-C) shuts it down
/// gracefully: event streams end, requests in flight are answered.
///
///     let server = IncidentServer(store: try StoreOpening.open(path, readOnly: true))
///     try await server.run(until: .onSignals()) { port in print("listening on \(port)") }
public struct IncidentServer: Sendable {
    public let store: any StoreReader
    public let configuration: ServeConfiguration
    public let logger: Logger

    public init(store: any StoreReader, configuration: ServeConfiguration = ServeConfiguration(), logger: Logger = Logger(label: "trafficgeo.serve")) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        // Where the database can stop a statement itself (PostgreSQL), it does so a little
        // after the request's time limit, when the client has had its 503.
        store.limitStatements(to: configuration.requestTimeout + .seconds(1))
    }

    /// Serves until `stop` is requested, then shuts down gracefully; `onListening` gets the port
    /// (the chosen one when configured with 0). Cancelling the task that runs it is abrupt.
    public func run(until stop: StopRequest, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let runner = QueryRunner(threads: configuration.queryThreads, timeout: configuration.requestTimeout)
        let api = IncidentAPI(store: store, configuration: configuration, runner: runner, logger: logger)
        let responder = CallbackResponder<BasicRequestContext> { request, context in await api.respond(to: request) }
        // Hummingbird's own news ("Server started and listening on …") is debugging detail: the
        // caller is told the port (`onListening`) and says so in its words.
        var serverLogger = logger
        if serverLogger.logLevel > .debug { serverLogger.logLevel = max(serverLogger.logLevel, .notice) }
        let app = Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: .seconds(configuration.idleTimeout.components.seconds))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "trafficgeo"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: serverLogger
        )
        // Signals are the StopRequest's (one way to stop for every long run), not the group's.
        var lifecycle = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        // A request that does not finish must not keep a stopping server up: after the request
        // time limit and a little more, what is left is cancelled.
        lifecycle.maximumGracefulShutdownDuration = configuration.requestTimeout + .seconds(5)
        let group = ServiceGroup(configuration: lifecycle)
        // A request that comes before the group runs is kept by the group (it starts, then stops).
        let stopping = Task {
            await stop.requested()
            if !Task.isCancelled { await group.triggerGracefulShutdown() }
        }
        defer {
            stopping.cancel()
            Task { await runner.shutdown() }
        }
        try await group.run()
    }
}

/// Answers one request: routing, content negotiation, problems, ETags and the access log.
struct IncidentAPI: Sendable {
    let store: any StoreReader
    let configuration: ServeConfiguration
    let runner: QueryRunner
    let logger: Logger
    let engine: QueryEngine
    /// The data's extent, kept with the change-feed head it was computed at: every change to
    /// a position is an event there, so an unchanged head means an unchanged extent.
    private let extentCache = NIOLockedValueBox<(head: Int64, box: LonLatBox?)?>(nil)

    init(store: any StoreReader, configuration: ServeConfiguration, runner: QueryRunner, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.runner = runner
        self.logger = logger
        engine = QueryEngine(store: store)
    }

    /// The box of every located incident, for the collection's `extent` (nil: none located).
    private func dataExtent() async throws -> LonLatBox? {
        let store = self.store, cache = extentCache
        return try await runner.run {
            let head = try store.changeFeedBounds().latest
            if let kept = cache.withLockedValue({ $0 }), kept.head == head { return kept.box }
            let box = try store.locatedExtent()
            cache.withLockedValue { $0 = (head, box) }
            return box
        }
    }

    func respond(to request: Request) async -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await route(request)
        } catch let problem as Problem {
            response = Self.problem(problem, instance: request.uri.path)
        } catch {
            // The detail (files, SQL, the database's words) goes to the log, never to the client.
            logger.error("\(request.method) \(Self.loggable(request)): \(error)")
            response = Self.problem(Problem(status: .internalServerError, title: "The store could not answer",
                                            detail: "An internal error; it is in the server's log. Try again, or tell the server's operator."),
                                    instance: request.uri.path)
        }
        if request.method == .head { response = response.createHeadResponse() }
        let elapsed = ContinuousClock.now - started
        let served = ServeRoute(path: Self.path(of: request))
        let route = served?.rawValue ?? "other"
        configuration.metrics.request(route: route, status: response.status.code, duration: elapsed)
        // The access log: one line per request, as web servers write it. A load balancer's and
        // Prometheus's polling would drown it: those only with --verbose.
        let level: Logger.Level = served?.isProbe == true && response.status.code < 500 ? .debug : .info
        let ms = (elapsed.inSeconds * 10_000).rounded() / 10
        logger.log(level: level, "\(request.method) \(Self.loggable(request)) \(response.status.code) \(String(format: "%.1f", ms)) ms",
                   metadata: ["method": "\(request.method)", "route": "\(route)", "status": .stringConvertible(response.status.code),
                              "ms": .stringConvertible(ms)])
        return response
    }

    /// The request target as the log shows it: at most 512 bytes (a hostile client's 8 KiB
    /// target is refused, and need not fill the log either).
    static func loggable(_ request: Request) -> String {
        let target = request.uri.string
        return target.utf8.count <= 512 ? target : String(decoding: target.utf8.prefix(512), as: UTF8.self) + "… (\(target.utf8.count) bytes)"
    }

    // MARK: - Routing

    private func route(_ request: Request) async throws -> Response {
        guard request.uri.string.utf8.count <= configuration.maxURILength else {
            throw Problem(status: .uriTooLong, title: "Request target too long",
                          detail: "The request target is longer than \(configuration.maxURILength) bytes; ask with fewer or shorter parameters.")
        }
        let path = Self.path(of: request)
        guard request.method == .get || request.method == .head else {
            var p = Problem(status: .methodNotAllowed, title: "Method not allowed",
                            detail: "\(request.method) is not supported: this server is read-only; use GET.")
            p.headers[.allow] = "GET, HEAD"
            throw p
        }
        let parameters = try QueryParameters(request.uri.query)
        let accept = request.headers[.accept]
        let base = baseURL(request)
        let items = ServeRoute.items.rawValue
        guard let route = ServeRoute(path: path) else {
            throw Problem.notFound("There is nothing at \(path). The API starts at / (links to everything), the incidents are at \(items).")
        }

        switch route {
        case .landing:
            try parameters.allowOnly(ItemsQuery.itemsParameters)
            if try ResponseFormat.negotiate(parameters, accept: accept) == .html {
                return try await mapPage(parameters, request: request)
            }
            try parameters.allowOnly(["f"])
            return tagged(FeatureDocuments.landing(base: base), type: MediaType.json, request)
        case .conformance:
            return try document(request, parameters, title: "Conformance", json: FeatureDocuments.conformance(), base: base, links: [])
        case .api:
            try parameters.allowOnly(["f"])
            let json = OpenAPIDocument.json(base: base)
            if try ResponseFormat.negotiate(parameters, accept: accept) == .html {
                return tagged(HTMLPages.document(title: "API definition (OpenAPI 3.0)",
                                                           links: [Link(href: base + "/api?f=json", rel: "service-desc", type: MediaType.openAPI, title: "The definition as JSON")],
                                                           json: json), type: MediaType.html, request)
            }
            return tagged(json, type: MediaType.openAPI, request)
        case .collections:
            return try document(request, parameters, title: "Collections", json: FeatureDocuments.collections(base: base, extent: try await dataExtent()), base: base,
                                links: [Link(href: base + "/collections/incidents", rel: "item", type: "text/html", title: "Road-traffic incidents")])
        case .collection:
            return try document(request, parameters, title: "Road-traffic incidents", json: FeatureDocuments.collection(base: base, extent: try await dataExtent()), base: base,
                                links: [Link(href: base + items + "?f=html", rel: "items", type: "text/html", title: "The incidents on a map"),
                                        Link(href: base + items + "?f=json", rel: "items", type: MediaType.geoJSON, title: "The incidents as GeoJSON")])
        case .items:
            return try await itemsResponse(request, parameters, base: base)
        case .item:
            return try await item(route.variable(in: path), request, parameters, base: base)
        case .events:
            return try events(request, parameters)
        case .clusters:
            return try await clusters(request, parameters)
        case .queryables:
            try parameters.allowOnly(["f"])
            let json = FeatureDocuments.queryables(base: base)
            if try ResponseFormat.negotiate(parameters, accept: accept) == .html {
                return tagged(HTMLPages.document(title: "Queryables", links: [Link(href: base + path + "?f=json", rel: "alternate", type: MediaType.schemaJSON, title: "As JSON Schema")],
                                                 json: json), type: MediaType.html, request)
            }
            return tagged(json, type: MediaType.schemaJSON, request)
        case .health:
            try parameters.allowOnly([])
            return Self.body(#"{"status":"alive"}"#, type: MediaType.json, cacheable: false)
        case .ready:
            try parameters.allowOnly([])
            return await readiness()
        case .metrics:
            try parameters.allowOnly([])
            return try await metricsExposition()
        case .leafletFile:
            return try leafletFile(route.variable(in: path), request)
        }
    }

    /// The request's path as routed: a trailing slash is not part of it (`/collections/`).
    static func path(of request: Request) -> String {
        let path = request.uri.path
        return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Links point where the client reached the server: `--public-url`, else the Host header
    /// when it is a plain host[:port], else the address listened on.
    private func baseURL(_ request: Request) -> String {
        if let url = configuration.publicURL { return url.hasSuffix("/") ? String(url.dropLast()) : url }
        // Checked as bytes: Character by Character was 1 % of a nearest request.
        if let host = request.head.authority, !host.isEmpty, host.utf8.count < 256,
           host.utf8.allSatisfy(Self.isHostByte) {
            return "http://" + host
        }
        return "http://\(configuration.host):\(configuration.port)"
    }

    /// What a Host header may hold here: ASCII letters and digits, `.-:[]` (IPv6 in brackets).
    private static func isHostByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"): true
        default: false
        }
    }

    // MARK: - Resources

    private func document(_ request: Request, _ parameters: QueryParameters, title: String, json: String, base: String, links: [Link]) throws -> Response {
        try parameters.allowOnly(["f"])
        if try ResponseFormat.negotiate(parameters, accept: request.headers[.accept]) == .html {
            let all = links + [Link(href: base + request.uri.path + "?f=json", rel: "alternate", type: MediaType.json, title: "This document as JSON")]
            return tagged(HTMLPages.document(title: title, links: all, json: json), type: MediaType.html, request)
        }
        return tagged(json, type: MediaType.json, request)
    }

    private func mapPage(_ parameters: QueryParameters, request: Request) async throws -> Response {
        let query = try ItemsQuery(parameters, savedRoutes: configuration.routes)
        // With no place in its URL the page opens on the data.
        let extent = query.bbox == nil && query.reference == nil && query.corridor == nil ? try await dataExtent() : nil
        return tagged(MapPage.html(configuration: configuration, parameters: parameters, query: query, dataExtent: extent), type: MediaType.html, request)
    }

    private func itemsResponse(_ request: Request, _ parameters: QueryParameters, base: String) async throws -> Response {
        let query = try ItemsQuery(parameters, savedRoutes: configuration.routes)
        if try ResponseFormat.negotiate(parameters, accept: request.headers[.accept]) == .html {
            return try await mapPage(parameters, request: request)
        }
        let engine = self.engine
        let page = try await runner.run(heavy: query.isHeavy) { try ItemsSearch.page(query, engine: engine) }
        let href = base + request.uri.path + "?"
        var links = [
            Link(href: href + parameters.encoded(changing: ["f": "json"]), rel: "self", type: MediaType.geoJSON, title: "This page"),
            Link(href: href + parameters.encoded(changing: ["f": "html"]), rel: "alternate", type: "text/html", title: "This page on a map"),
        ]
        let nextEnd = query.offset + 2 * query.limit
        if query.offset + page.results.count < page.numberMatched, !page.results.isEmpty,
           !query.ranksEveryIncidentBeforeThePage || nextEnd <= ItemsQuery.maxRankedDepth {
            links.append(Link(href: href + parameters.encoded(changing: ["f": "json", "offset": String(query.offset + query.limit), "limit": String(query.limit)]),
                              rel: "next", type: MediaType.geoJSON, title: "The next page"))
        }
        if query.offset > 0 {
            links.append(Link(href: href + parameters.encoded(changing: ["f": "json", "offset": String(max(0, query.offset - query.limit)), "limit": String(query.limit)]),
                              rel: "prev", type: MediaType.geoJSON, title: "The previous page"))
        }
        links.append(Link(href: base + "/collections/\(FeatureDocuments.collectionID)", rel: "collection", type: MediaType.json, title: "The collection"))
        configuration.metrics.returned(items: page.results.count)
        // The states in the answer use the question's unconfirmed-after.
        let json = IncidentFilter.$answerUnconfirmedAfter.withValue(query.filter.unconfirmedAfter) {
            FeatureDocuments.featureCollection(page, geometry: query.geometry, links: links, timeStamp: Date())
        }
        return tagged(json.bytes, type: MediaType.geoJSON, request, tagFrom: json.stableCount)
    }

    private func item(_ idText: String, _ request: Request, _ parameters: QueryParameters, base: String) async throws -> Response {
        try parameters.allowOnly(["f"])
        let format = try ResponseFormat.negotiate(parameters, accept: request.headers[.accept])
        let decoded = idText.removingPercentEncoding ?? idText
        guard let id = Int64(decoded), id > 0 else {
            throw Problem.notFound("'\(decoded)' is not an incident id here: ids are the whole numbers in each feature's id.")
        }
        let store = self.store
        guard let stored = try await runner.run({ try store.incident(id: id) }) else {
            throw Problem.notFound("There is no incident \(id) (it may have been pruned).")
        }
        let json = FeatureDocuments.item(QueryResult(stored: stored), base: base)
        if format == .html {
            return tagged(HTMLPages.document(title: stored.incident.title, links: [
                Link(href: base + request.uri.path + "?f=json", rel: "alternate", type: MediaType.geoJSON, title: "This incident as GeoJSON"),
                Link(href: base + "/?lat=\(stored.incident.position?.latitude ?? 0)&lon=\(stored.incident.position?.longitude ?? 0)", rel: "related", type: "text/html", title: "On the map"),
            ], json: json), type: MediaType.html, request)
        }
        return tagged(json, type: MediaType.geoJSON, request)
    }

    private func clusters(_ request: Request, _ parameters: QueryParameters) async throws -> Response {
        let question = try ViewClusters(parameters)
        if try ResponseFormat.negotiate(parameters, accept: nil) == .html {
            throw Problem.badParameter("f", "the clusters are GeoJSON only: f=json (the map page draws them).")
        }
        let engine = self.engine
        let (cells, total) = try await runner.run(heavy: true) { try question.cells(engine: engine) }
        return tagged(ViewClusters.featureCollection(cells, total: total), type: MediaType.geoJSON, request)
    }

    private func events(_ request: Request, _ parameters: QueryParameters) throws -> Response {
        let query = try ItemsQuery(parameters, allowed: ItemsQuery.eventParameters)
        var lastEventID: Int64?
        if let text = request.headers[HTTPField.Name("Last-Event-ID")!] {
            guard let n = Int64(text.trimmingCharacters(in: .whitespaces)), n >= 0 else {
                throw Problem(status: .badRequest, title: "Invalid Last-Event-ID", detail: "Last-Event-ID '\(text)' must be the id of an event this server sent (a whole number).")
            }
            lastEventID = n
        }
        let stream = EventStream(query: query, lastEventID: lastEventID, store: store, runner: runner, configuration: configuration, logger: logger)
        var headers = HTTPFields()
        headers[.contentType] = MediaType.eventStream
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: stream.body())
    }

    /// Leaflet's files, from the directory Debian installs them in; nothing outside it.
    private func leafletFile(_ name: String, _ request: Request) throws -> Response {
        let allowed = name.split(separator: "/").allSatisfy { part in
            !part.isEmpty && !part.hasPrefix(".") && part.allSatisfy { $0.isLetter || $0.isNumber || "._-".contains($0) }
        }
        let path = configuration.leafletDirectory + "/" + name
        guard allowed, name.split(separator: "/").count <= 2, let data = FileManager.default.contents(atPath: path) else {
            throw Problem.notFound("\(name) is not one of Leaflet's files in \(configuration.leafletDirectory) (on Debian: apt install libjs-leaflet).")
        }
        let type: String
        switch (name as NSString).pathExtension {
        case "js": type = "text/javascript; charset=utf-8"
        case "css": type = "text/css; charset=utf-8"
        case "png": type = "image/png"
        case "svg": type = "image/svg+xml"
        case "map": type = MediaType.json
        default: type = "application/octet-stream"
        }
        var response = Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        response.headers[.cacheControl] = "public, max-age=86400"
        return response
    }
}
