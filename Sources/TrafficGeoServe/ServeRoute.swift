/// Every route `serve` answers, declared once: the dispatch in `IncidentAPI` switches over it,
/// the metrics and the access log label a request with its template (never the raw path: ids
/// would make a series per incident), and `ServeAPITests` checks that the OpenAPI document's
/// paths are these templates (up to the name of a variable).
///
/// Not on Hummingbird's `Router` (kept for a later step): with 2.x a method a path lacks is a
/// 404, not a 405, and middleware reaches only the routes that matched, while every request
/// here — a 404, a 405, a 414 — is counted, logged and answered as a problem by one responder.
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
    case leafletFile = "/map/leaflet/{file}"

    /// The route of a path (without a trailing slash), and what its template's variable holds.
    init?(path: String) {
        if let exact = Self.exact[path] {
            self = exact
            return
        }
        for route in [ServeRoute.item, .leafletFile] where path.hasPrefix(route.prefix) && path.count > route.prefix.count {
            self = route
            return
        }
        return nil
    }

    /// The part of a path the template's `{…}` stands for (an item's id, a file's name).
    func variable(in path: String) -> String { String(path.dropFirst(prefix.count)) }

    /// A template's text before its variable.
    private var prefix: String {
        guard let brace = rawValue.firstIndex(of: "{") else { return rawValue }
        return String(rawValue[..<brace])
    }

    // Looked up for every request: a table made once.
    private static let exact = Dictionary(uniqueKeysWithValues: allCases.filter { !$0.rawValue.contains("{") }.map { ($0.rawValue, $0) })

    /// Routes a load balancer or Prometheus polls (their access-log lines are debug messages).
    var isProbe: Bool { self == .health || self == .ready || self == .metrics }
}
