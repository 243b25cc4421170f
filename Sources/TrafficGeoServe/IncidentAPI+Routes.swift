import Foundation
import HTTPTypes
import Hummingbird
import TrafficGeoQuery
import TrafficGeoStore

/// Routing: which answer each route gives, and the base of the links in it.
extension IncidentAPI {
    /// The server's responder: Hummingbird's `Router` with every `ServeRoute` on it, behind
    /// `ServeAccessMiddleware`. HEAD is answered from GET (`autoGenerateHeadEndpoints`); a
    /// trailing slash, or a doubled one, is not part of a path's match.
    ///
    /// What the Router costs, measured (docs/benchmarks.md, "serve on Hummingbird's Router"):
    /// its trie, the middleware chain and the handler's closure are 0.3 % of the server's CPU
    /// samples under wrk; alternated A/B runs against the hand-written dispatch it replaced put
    /// it between 0.88× and 1.02× the requests per second, inside the machine's spread.
    func responder() -> RouterResponder<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self, options: [.autoGenerateHeadEndpoints])
        router.add(middleware: ServeAccessMiddleware(maxURILength: configuration.maxURILength, metrics: configuration.metrics, logger: logger))
        for route in ServeRoute.allCases {
            router.get(route.routerPath) { request, context in try await answer(route, request, context) }
        }
        return router.buildResponder()
    }

    /// One route's answer. A case per route, so that a route declared and not answered does
    /// not compile.
    private func answer(_ route: ServeRoute, _ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let parameters = try QueryParameters(request.uri.query)
        let accept = request.headers[.accept]
        let base = baseURL(request)
        let items = ServeRoute.items.rawValue

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
            return try await item(context.parameters.get("id") ?? "", request, parameters, base: base)
        case .events:
            return try events(request, parameters)
        case .clusters:
            return try await clusters(request, parameters)
        case .queryables:
            try parameters.allowOnly(["f"])
            let json = FeatureDocuments.queryables(base: base)
            if try ResponseFormat.negotiate(parameters, accept: accept) == .html {
                return tagged(HTMLPages.document(title: "Queryables", links: [Link(href: base + route.rawValue + "?f=json", rel: "alternate", type: MediaType.schemaJSON, title: "As JSON Schema")],
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
            return try leafletFile(context.parameters.getCatchAll().joined(separator: "/"), request)
        }
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
}
