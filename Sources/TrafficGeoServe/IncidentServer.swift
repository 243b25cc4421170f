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
        let responder = api.responder()
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

/// Answers the routes (`IncidentAPI+Routes`): content negotiation, documents, items, ETags.
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
    func dataExtent() async throws -> LonLatBox? {
        let store = self.store, cache = extentCache
        return try await runner.run {
            let head = try store.changeFeedBounds().latest
            if let kept = cache.withLockedValue({ $0 }), kept.head == head { return kept.box }
            let box = try store.locatedExtent()
            cache.withLockedValue { $0 = (head, box) }
            return box
        }
    }

    // MARK: - Resources

    func document(_ request: Request, _ parameters: QueryParameters, title: String, json: String, base: String, links: [Link]) throws -> Response {
        try parameters.allowOnly(["f"])
        if try ResponseFormat.negotiate(parameters, accept: request.headers[.accept]) == .html {
            let all = links + [Link(href: base + request.uri.path + "?f=json", rel: "alternate", type: MediaType.json, title: "This document as JSON")]
            return tagged(HTMLPages.document(title: title, links: all, json: json), type: MediaType.html, request)
        }
        return tagged(json, type: MediaType.json, request)
    }

    func mapPage(_ parameters: QueryParameters, request: Request) async throws -> Response {
        let query = try ItemsQuery(parameters, savedRoutes: configuration.routes)
        // With no place in its URL the page opens on the data.
        let extent = query.bbox == nil && query.reference == nil && query.corridor == nil ? try await dataExtent() : nil
        return tagged(MapPage.html(configuration: configuration, parameters: parameters, query: query, dataExtent: extent), type: MediaType.html, request)
    }

    func itemsResponse(_ request: Request, _ parameters: QueryParameters, base: String) async throws -> Response {
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

    func item(_ idText: String, _ request: Request, _ parameters: QueryParameters, base: String) async throws -> Response {
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

    func clusters(_ request: Request, _ parameters: QueryParameters) async throws -> Response {
        let question = try ViewClusters(parameters)
        if try ResponseFormat.negotiate(parameters, accept: nil) == .html {
            throw Problem.badParameter("f", "the clusters are GeoJSON only: f=json (the map page draws them).")
        }
        let engine = self.engine
        let (cells, total) = try await runner.run(heavy: true) { try question.cells(engine: engine) }
        return tagged(ViewClusters.featureCollection(cells, total: total), type: MediaType.geoJSON, request)
    }

    func events(_ request: Request, _ parameters: QueryParameters) throws -> Response {
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
    func leafletFile(_ name: String, _ request: Request) throws -> Response {
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
