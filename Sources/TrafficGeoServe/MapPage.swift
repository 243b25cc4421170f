import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// The map page (`/` and `items?f=html`): Leaflet from the server itself (Debian's
/// libjs-leaflet), pins coloured like the annotations, popups, and beside the map the incidents
/// in view sorted by distance from the map centre (or from the point last clicked). It asks
/// the items endpoint like any client, and refreshes when the event stream reports a change.
/// Without tiles the pins and the list still work; without Leaflet, the list does.
enum MapPage {
    /// The conditions the page passes on to its requests (its own URL's, already checked) and
    /// keeps in its URL as they change.
    static let passedParameters = QueryField.taken(on: .mapPage).map { $0.name(on: .parameter) } + ["datetime", "filter"]

    /// The measures' fields as the script makes their controls: the parameter, a label, an example.
    static let measureControls: [String] = QueryField.taken(on: .mapPage).compactMap { field in
        guard let measure = field.measure else { return nil }
        var control = JSONObjectText()
        control.add("parameter", field.name(on: .parameter))
        control.add("label", measure.title + " at least")
        control.add("example", measure.example)
        return control.closed()
    }

    /// `dataExtent`: where the incidents are, the first view when the URL names no place.
    static func html(configuration: ServeConfiguration, parameters: QueryParameters, query: ItemsQuery, dataExtent: LonLatBox? = nil) -> String {
        var passed = JSONObjectText()
        for name in passedParameters {
            if let value = parameters.items.last(where: { $0.name == name })?.value { passed.add(name, value) }
        }
        var view = JSONObjectText()
        if let corridor = query.corridor {
            // A route in the URL (drawn, loaded or saved): the page shows it, and what is along it.
            view.add(raw: "route", "[" + corridor.course.route.map { "[\(JSONObjectText.number($0.latitude)),\(JSONObjectText.number($0.longitude))]" }.joined(separator: ",") + "]")
            view.add("buffer", parameters.items.last(where: { $0.name == "buffer" })?.value ?? "2km")
            // A saved route keeps its name in the page's URL (its line may be long).
            let routeText = parameters.items.last(where: { $0.name == "route" })?.value
            view.add("routeName", routeText.flatMap { configuration.routes[$0] != nil ? $0 : nil })
        }
        if let box = query.bbox ?? query.corridor.flatMap({ RouteCourse.bounds(of: $0.course.route, buffer: $0.buffer) }) ?? dataExtent {
            view.add(raw: "bbox", "[" + [box.west, box.south, box.east, box.north].map { JSONObjectText.number($0) }.joined(separator: ",") + "]")
        }
        let centre = query.reference ?? Coordinate(latitude: 51.16, longitude: 10.45)
        view.add("lat", centre.latitude)
        view.add("lon", centre.longitude)
        view.add("zoom", query.reference != nil ? 11 : 6)
        view.add("point", query.reference != nil ? 1 : 0)
        var config = JSONObjectText()
        config.add("tiles", configuration.tileURL)
        config.add("attribution", configuration.tileAttribution)
        config.add("itemsPath", "/collections/incidents/items")
        config.add("eventsPath", "/collections/incidents/events")
        config.add("clustersPath", "/collections/incidents/clusters")
        config.add("pageLimit", 500)
        config.add(raw: "query", passed.closed())
        config.add(raw: "view", view.closed())
        config.add(raw: "categories", "[" + IncidentCategory.allCases.map { JSONObjectText.string($0.rawValue) }.joined(separator: ",") + "]")
        config.add(raw: "severities", "[" + Severity.allCases.map { JSONObjectText.string($0.name) }.joined(separator: ",") + "]")
        // A control for each measure's field the page takes (`QueryField.measure`): made by the script.
        config.add(raw: "measureControls", "[" + measureControls.joined(separator: ",") + "]")
        var icons = JSONObjectText()
        for category in IncidentCategory.allCases { icons.add(category.rawValue, IconShape(category).svg) }
        icons.add("", IconShape.other.svg)
        config.add(raw: "icons", icons.closed())
        // Inside <script>, "</" would end the element.
        let configText = config.closed().replacingOccurrences(of: "</", with: "<\\/")
        return page.replacingOccurrences(of: "{{CONFIG}}", with: configText).replacingOccurrences(of: "{{LEGEND}}", with: legend)
    }

    /// What each pin colour means, from the categories themselves (`IncidentCategory.pinColor`),
    /// so the legend cannot disagree with the pins.
    static let legend: String = {
        let spans = [PinColor.red, .purple, .green].map { colour in
            let categories = IncidentCategory.allCases.filter { $0.pinColor == colour }.map(\.rawValue).joined(separator: ", ")
            return "<span style=\"--pin:\(colour.hex)\">\(colour.rawValue): \(categories)</span>"
        }
        let shapes = IconShape.allCases.map { shape in
            let categories = IncidentCategory.allCases.filter { IconShape($0) == shape }.map(\.rawValue)
            return "<span class=\"shape\">\(shape.svg)\(categories.isEmpty ? "unknown" : categories.joined(separator: ", "))</span>"
        }
        return spans.joined() + "<span class=\"over\">hollow, faded: expired or ended</span><span class=\"line\">line: along the road it covers, the arrow its direction</span>"
            + shapes.joined()
    }()

    /// The shape of a kind's icon: kinds differ by shape as well as colour (for colour-blind
    /// readers, and on a grey screen). Inline SVG in the page, nothing fetched; the legend and
    /// the pins come from this one table.
    enum IconShape: CaseIterable {
        case warning, noEntry, works, queue, weather, detour, other

        init(_ category: IncidentCategory?) {
            switch category {
            case .wrongWayDriver?, .accident?, .obstacle?, .danger?: self = .warning
            case .closure?: self = .noEntry
            case .roadworks?: self = .works
            case .queue?, .slowTraffic?, .standstill?: self = .queue
            case .weather?: self = .weather
            case .detour?: self = .detour
            default: self = .other
            }
        }

        /// Filled with `currentColor` (the kind's pin colour), outlined in white.
        var svg: String {
            let shape: String
            switch self {
            case .warning: shape = ##"<path d="M10 1.5 19 18H1z"/><path d="M9 7h2v5.5H9zM9 14h2v2H9z" fill="#fff" stroke="none"/>"##
            case .noEntry: shape = ##"<circle cx="10" cy="10" r="8.5"/><path d="M4.5 8.5h11v3h-11z" fill="#fff" stroke="none"/>"##
            case .works: shape = ##"<path d="M10 1 19 10 10 19 1 10z"/><path d="M7 13l5-5 1 1-5 5z" fill="#fff" stroke="none"/>"##
            case .queue: shape = ##"<rect x="1.5" y="1.5" width="17" height="17" rx="3"/><path d="M5 5.5h10v2H5zM5 9h10v2H5zM5 12.5h10v2H5z" fill="#fff" stroke="none"/>"##
            case .weather: shape = ##"<circle cx="10" cy="10" r="8.5"/><path d="M10 4v12M4.8 7l10.4 6M4.8 13l10.4-6" stroke="#fff" stroke-width="1.8"/>"##
            case .detour: shape = ##"<path d="M1.5 10 10 1.5V6h8.5v8H10v4.5z"/>"##
            case .other: shape = ##"<rect x="2.5" y="2.5" width="15" height="15" rx="2"/><circle cx="10" cy="10" r="2.5" fill="#fff" stroke="none"/>"##
            }
            return ##"<svg viewBox="0 0 20 20" width="20" height="20" fill="currentColor" stroke="#fff" stroke-width="1.2" aria-hidden="true">"## + shape + "</svg>"
        }
    }

    /// The page: its markup with the styles, then the script, made once. The styles and the
    /// script are files of the package (MapPage/map.css, MapPage/map.js), embedded in the binary.
    private static let page = markup.replacingOccurrences(of: "{{STYLE}}", with: embedded(PackageResources.map_css))
        + "\n" + script + "\n" + closing

    /// The map page's script, between `<script>` and `</script>` in `page` (a test checks that
    /// nothing in it ends the element early).
    static let script = embedded(PackageResources.map_js)

    private static func embedded(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static let markup = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>trafficgeo – incidents</title>
    <link rel="stylesheet" href="/map/leaflet/leaflet.css">
    <link rel="stylesheet" href="/map/leaflet/MarkerCluster.css">
    <link rel="stylesheet" href="/map/leaflet/MarkerCluster.Default.css">
    <link rel="alternate" type="application/json" href="/?f=json" title="The landing page as JSON">
    <style>
    {{STYLE}}
    </style>
    </head>
    <body>
    <div id="map" role="region" aria-label="Map of incidents"></div>
    <aside id="side">
      <header><h1>Traffic incidents</h1><div id="status" role="status">Loading…</div><div id="changes" aria-live="polite"></div><div id="tiles-note" hidden></div>
        <details id="controls" open><summary>Filters and route</summary>
        <form id="filters" aria-label="Which incidents">
          <label class="check"><input type="checkbox" id="f-current"> Current only</label>
          <label>In effect at <input type="datetime-local" id="f-at"></label>
          <label>Kind <select id="f-category"><option value="">any</option></select></label>
          <label>Severity at least <select id="f-min-severity"><option value="">any</option></select></label>
          <label>Road <input id="f-road" placeholder="A3, M25, I-25" autocomplete="off"></label>
          <label>Words <input id="f-q" type="search" placeholder="closure, Baustelle" autocomplete="off"></label>
        </form>
        <div id="route-tools" aria-label="Along a route">
          <button type="button" id="route-draw">Draw a route</button>
          <label>within <select id="route-buffer"><option>500m</option><option>1km</option><option>2km</option><option>5km</option><option>10km</option></select></label>
          <label>or load <input type="file" id="route-file" accept=".gpx,.geojson,.json,application/gpx+xml,application/geo+json"></label>
          <button type="button" id="route-clear" hidden>Clear the route</button>
        </div></details>
        <details id="key"><summary>What the colours, shapes and lines mean</summary>
        <div id="legend" aria-label="What the colours, shapes and lines mean">{{LEGEND}}</div></details></header>
      <section id="details" hidden aria-live="polite" aria-label="The incident chosen"></section>
      <ol id="list" aria-label="Incidents in view, nearest first"></ol>
    </aside>
    <script type="application/json" id="tg-config">{{CONFIG}}</script>
    <script src="/map/leaflet/leaflet.js"></script>
    <script src="/map/leaflet/leaflet.markercluster.js"></script>
    <script>
    """#

    private static let closing = #"""
    </script>
    </body>
    </html>
    """#
}
