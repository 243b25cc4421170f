import Foundation
import TrafficGeoModel
import TrafficGeoProjection
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

    /// The page: its markup and style, then the script (`MapPage.script`, a file of its own), each
    /// made once.
    private static let page = markup + "\n" + script + "\n" + closing

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
      html, body { height: 100%; margin: 0; font: 14px/1.35 system-ui, -apple-system, "DejaVu Sans", sans-serif; }
      body { display: flex; flex-direction: row; }
      #map { flex: 1 1 auto; min-height: 200px; background: #e8eef3; }
      #side { flex: 0 0 24rem; display: flex; flex-direction: column; border-left: 1px solid #ccc; background: #fff; min-height: 0; }
      #side header { padding: .6rem .8rem; border-bottom: 1px solid #ddd; }
      #side h1 { font-size: 1.05rem; margin: 0 0 .2rem; }
      #status, #tiles-note { color: #555; font-size: .85rem; }
      #tiles-note { color: #8a5a00; }
      #filters { display: grid; grid-template-columns: 1fr 1fr; gap: .3rem .5rem; margin-top: .4rem; font-size: .85rem; }
      #filters label { display: flex; flex-direction: column; gap: .1rem; }
      #filters label.check { flex-direction: row; align-items: center; gap: .3rem; }
      #filters input, #filters select { font: inherit; padding: .15rem .25rem; min-width: 0; }
      #list { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1 1 auto; }
      #list li { padding: .5rem .8rem .5rem 2rem; border-bottom: 1px solid #eee; cursor: pointer; position: relative; }
      #list li:hover, #list li:focus { background: #f5f8fb; outline: 2px solid #2a6fdb; outline-offset: -2px; }
      #list li.selected { background: #eaf2ff; }
      #list li::before { content: ""; position: absolute; left: .7rem; top: .75rem; width: .8rem; height: .8rem; border-radius: 50%; background: var(--pin); }
      #list li.line::before { border-radius: 2px; height: .35rem; top: .95rem; }
      #list .title { font-weight: 600; display: block; }
      #list .subtitle, #list .meta { color: #444; font-size: .85rem; display: block; }
      #list .subtitle { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
      .problem { color: #a00; }
      #list li.over { color: #777; }
      #list li.over::before { background: transparent; border: 2px solid var(--pin); width: .55rem; height: .55rem; }
      #key, #controls { margin-top: .4rem; font-size: .85rem; }
      #key summary, #controls summary { cursor: pointer; color: #2a5db0; }
      #legend { font-size: .8rem; color: #444; margin-top: .3rem; display: flex; flex-wrap: wrap; gap: .2rem .8rem; }
      #legend span::before { content: ""; display: inline-block; width: .7rem; height: .7rem; border-radius: 50%; margin-right: .3rem; vertical-align: -1px; background: var(--pin); }
      #legend span.over::before { background: transparent; border: 2px solid #888; width: .45rem; height: .45rem; }
      #legend span.line::before { background: #555; border-radius: 2px; height: .3rem; vertical-align: 2px; }
      #legend span.shape::before { display: none; }
      #legend span.shape svg { width: .9rem; height: .9rem; vertical-align: -2px; margin-right: .25rem; color: #555; }
      .tg-icon, .tg-arrow { background: none; border: 0; }
      .tg-icon svg { display: block; filter: drop-shadow(0 0 1px rgba(0,0,0,.6)); }
      .tg-icon.over svg { opacity: .45; }
      .tg-icon.chosen svg { transform: scale(1.6); filter: drop-shadow(0 0 3px #000); }
      .tg-icon.fresh svg { transform: scale(1.35); transition: transform .3s; }
      #list li.fresh { animation: fresh 4s ease-out; }
      @keyframes fresh { from { background: #fff3b0; } to { background: transparent; } }
      #route-tools { display: flex; flex-wrap: wrap; gap: .3rem .5rem; align-items: center; margin-top: .4rem; font-size: .85rem; }
      #route-tools button, #route-tools select { font: inherit; }
      #route-tools input[type=file] { max-width: 12rem; font-size: .8rem; }
      #changes { color: #555; font-size: .85rem; }
      #details { flex: 0 0 auto; position: relative; border-bottom: 1px solid #ddd; padding: .6rem .8rem; max-height: 45%; overflow-y: auto; background: #fbfcfe; }
      #details h2 { font-size: 1rem; margin: 0 2rem .3rem 0; }
      #details dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .6rem; margin: .3rem 0; font-size: .85rem; }
      #details dt { color: #555; }
      #details dd { margin: 0; }
      #details ul { margin: .2rem 0; padding-left: 1.1rem; font-size: .85rem; }
      #details .close { position: absolute; right: .8rem; font-size: 1.1rem; border: 0; background: none; cursor: pointer; }
      @media (max-width: 700px) {
        body { flex-direction: column; }
        #map { flex: 0 0 50vh; }
        #side { flex: 1 1 auto; border-left: 0; border-top: 1px solid #ccc; }
      }
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
