import Hummingbird

/// Every route `serve` answers, declared once. `IncidentAPI.responder()` puts each on
/// Hummingbird's `Router` (which matches paths, ignores trailing slashes, answers HEAD from GET
/// and reads `{id}`), `IncidentAPI.answer` has one case per route (the compiler checks that
/// none is left out), the metrics and the access log label a request with its template (never
/// the raw path: ids would make a series per incident), and `ServeAPITests` checks that the
/// OpenAPI document's paths are these templates (up to the name of a variable).
enum ServeRoute: String, CaseIterable, Sendable {
    case landing = "/"
    case conformance = "/conformance"
    case api = "/api"
    case collections = "/collections"
    case collection = "/collections/incidents"
    case items = "/collections/incidents/items"
    /// `{id}` here (the label operators' dashboards know), `{featureId}` in the OpenAPI document.
    case item = "/collections/incidents/items/{id}"
    case clusters = "/collections/incidents/clusters"
    case queryables = "/collections/incidents/queryables"
    case events = "/collections/incidents/events"
    case health = "/health"
    case ready = "/ready"
    case metrics = "/metrics"
    /// Leaflet's files, some in a folder (`images/marker-icon.png`): one or more segments.
    case leafletFile = "/map/leaflet/{file}"

    /// The path as the Router is told it: a template's variable spanning segments is `**`.
    var routerPath: RouterPath {
        self == .leafletFile ? "/map/leaflet/**" : RouterPath(stringLiteral: rawValue)
    }

    /// The route the Router matched, from the endpoint path it records in the request's
    /// context (nil: none matched).
    init?(endpointPath: String?) {
        guard let endpointPath, let route = Self.byEndpointPath[endpointPath] else { return nil }
        self = route
    }

    // Looked up for every request: a table made once.
    private static let byEndpointPath = Dictionary(uniqueKeysWithValues: allCases.map { ($0.routerPath.description, $0) })

    /// Routes a load balancer or Prometheus polls (their access-log lines are debug messages).
    var isProbe: Bool { self == .health || self == .ready || self == .metrics }
}
