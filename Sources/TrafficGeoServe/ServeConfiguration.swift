import Foundation
import TrafficGeoModel

/// How `trafficgeo serve` listens and what its pages use; every default is what a person
/// running it on their own machine wants.
public struct ServeConfiguration: Sendable {
    /// Loopback by default: a server reachable from elsewhere is a choice (`--host 0.0.0.0`).
    public var host = "127.0.0.1"
    /// 0 lets the system choose (the tests); the chosen port is reported when listening.
    public var port = 8080
    /// The URL clients reach the server at, for links (behind a proxy); by default the request's
    /// Host header (or host:port).
    public var publicURL: String?
    /// Background tiles of the map page, a Leaflet URL template.
    public var tileURL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    /// Shown in the map's corner; the default is what the OpenStreetMap tile policy asks for.
    public var tileAttribution = "&copy; <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap</a> contributors"
    /// Where Leaflet's files are (Debian's libjs-leaflet); the page is served without a CDN.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// How often an event stream looks at the change feed.
    public var eventPollInterval: Duration = .milliseconds(500)
    /// A comment line on idle event streams, so proxies and browsers keep them open.
    public var eventHeartbeat: Duration = .seconds(15)
    /// A request whose query takes longer is answered 503 (the query is not a denial of service).
    public var requestTimeout: Duration = .seconds(10)
    /// Longer request targets are answered 414.
    public var maxURILength = 8192
    /// Threads that run store queries (SQLite calls block; they stay off Swift's cooperative pool).
    public var queryThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
    /// Connections idle this long are closed.
    public var idleTimeout: Duration = .seconds(75)
    /// `/ready` answers 503 unless every source in the store's feed health was fetched
    /// successfully within this long (`--ready-max-age`); nil: the store answering is enough.
    public var readyMaxAge: Duration?
    /// The sources `/ready` judges (`--ready-source`); nil: every source in feed health. A
    /// named source that was never fetched is stale.
    public var readySources: [String]?
    /// Routes asked along by name (`route=NAME`), from `serve --route NAME=FILE`.
    public var routes: [String: [Coordinate]] = [:]
    /// What `/metrics` shows; each server counts into a registry of its own.
    public var metrics = ServeMetrics()

    public init() {}
}
