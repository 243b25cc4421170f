import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoSupport

/// The map page (`/` and `items?f=html`): Leaflet from the server itself (Debian's
/// libjs-leaflet), pins coloured like the annotations, popups, and beside the map the incidents
/// in view sorted by distance from the map centre (or from the point last clicked). It asks
/// the items endpoint like any client, and refreshes when the event stream reports a change.
/// Without tiles the pins and the list still work; without Leaflet, the list does.
enum MapPage {
    /// The conditions the page passes on to its requests (its own URL's, already checked).
    static let passedParameters = ["road", "category", "q", "active-at", "unconfirmed-after", "datetime", "min-confidence", "precision", "min-severity", "sortby"]

    static func html(configuration: ServeConfiguration, parameters: QueryParameters, query: ItemsQuery) -> String {
        var passed = JSONObjectText()
        for name in passedParameters {
            if let value = parameters.items.last(where: { $0.name == name })?.value { passed.add(name, value) }
        }
        var view = JSONObjectText()
        if let box = query.bbox {
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
        config.add("pageLimit", 500)
        config.add(raw: "query", passed.closed())
        config.add(raw: "view", view.closed())
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
        return spans.joined() + "<span class=\"over\">hollow: expired or ended</span>"
    }()

    private static let page = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>trafficgeo – incidents</title>
    <link rel="stylesheet" href="/map/leaflet/leaflet.css">
    <link rel="alternate" type="application/json" href="/?f=json" title="The landing page as JSON">
    <style>
      html, body { height: 100%; margin: 0; font: 14px/1.35 system-ui, -apple-system, "DejaVu Sans", sans-serif; }
      body { display: flex; flex-direction: row; }
      #map { flex: 1 1 auto; min-height: 200px; background: #e8eef3; }
      #side { flex: 0 0 24rem; display: flex; flex-direction: column; border-left: 1px solid #ccc; background: #fff; }
      #side header { padding: .6rem .8rem; border-bottom: 1px solid #ddd; }
      #side h1 { font-size: 1.05rem; margin: 0 0 .2rem; }
      #status { color: #555; font-size: .85rem; }
      #list { list-style: none; margin: 0; padding: 0; overflow-y: auto; flex: 1 1 auto; }
      #list li { padding: .5rem .8rem .5rem 2rem; border-bottom: 1px solid #eee; cursor: pointer; position: relative; }
      #list li:hover { background: #f5f8fb; }
      #list li::before { content: ""; position: absolute; left: .7rem; top: .75rem; width: .8rem; height: .8rem; border-radius: 50%; background: var(--pin); }
      #list .title { font-weight: 600; display: block; }
      #list .subtitle, #list .meta { color: #444; font-size: .85rem; display: block; }
      #list .subtitle { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
      .problem { color: #a00; }
      #list li.over { color: #777; }
      #list li.over::before { background: transparent; border: 2px solid var(--pin); width: .55rem; height: .55rem; }
      #legend { font-size: .8rem; color: #444; margin-top: .3rem; display: flex; flex-wrap: wrap; gap: .2rem .8rem; }
      #legend span::before { content: ""; display: inline-block; width: .7rem; height: .7rem; border-radius: 50%; margin-right: .3rem; vertical-align: -1px; background: var(--pin); }
      #legend span.over::before { background: transparent; border: 2px solid #888; width: .45rem; height: .45rem; }
      @media (max-width: 700px) {
        body { flex-direction: column; }
        #map { flex: 0 0 58vh; }
        #side { flex: 1 1 auto; border-left: 0; border-top: 1px solid #ccc; min-height: 0; }
      }
    </style>
    </head>
    <body>
    <div id="map" role="region" aria-label="Map of incidents"></div>
    <aside id="side">
      <header><h1>Traffic incidents</h1><div id="status">Loading…</div>
        <div id="legend" aria-label="What the pin colours mean">{{LEGEND}}</div></header>
      <ol id="list" aria-label="Incidents in view, nearest first"></ol>
    </aside>
    <script type="application/json" id="tg-config">{{CONFIG}}</script>
    <script src="/map/leaflet/leaflet.js"></script>
    <script>
    (function () {
      "use strict";
      var cfg = JSON.parse(document.getElementById("tg-config").textContent);
      var list = document.getElementById("list"), status = document.getElementById("status");
      var conditions = new URLSearchParams(cfg.query);
      var map = null, layer = null, markers = {}, queryPoint = null, pointMarker = null, timer = null, generation = 0;

      function wrap(lon) { while (lon > 180) lon -= 360; while (lon < -180) lon += 360; return lon; }
      function distanceText(m) { return m < 1000 ? Math.round(m) + " m" : (m / 1000).toFixed(m < 10000 ? 1 : 0) + " km"; }
      function timeText(t) { return t ? t.replace("T", " ").replace(/:\d\dZ$/, " UTC").replace(/Z$/, " UTC") : ""; }
      function overText(p) {
        if (p.state === "ended") return "Ended " + timeText(p.ended);
        if (p.state === "expired") return "Expired " + timeText(p.expires);
        return "";
      }

      function itemsURL() {
        var p = new URLSearchParams(conditions);
        var c;
        if (map) {
          var b = map.getBounds(), w = b.getWest(), e = b.getEast();
          if (e - w >= 360) { w = -180; e = 180; } else { w = wrap(w); e = wrap(e); }
          var s = Math.max(-90, b.getSouth()), n = Math.min(90, b.getNorth());
          p.set("bbox", [w, s, e, n].map(function (x) { return x.toFixed(6); }).join(","));
          c = queryPoint || map.getCenter();
        } else {
          c = queryPoint || { lat: cfg.view.lat, lng: cfg.view.lon };
          if (cfg.view.bbox) p.set("bbox", cfg.view.bbox.join(","));
        }
        p.set("lat", c.lat.toFixed(6));
        p.set("lon", wrap(c.lng).toFixed(6));
        p.set("limit", String(cfg.pageLimit));
        p.set("f", "json");
        return cfg.itemsPath + "?" + p.toString();
      }

      function line(cls, text) { var s = document.createElement("span"); s.className = cls; s.textContent = text; return s; }

      function popup(f) {
        var p = f.properties, d = document.createElement("div");
        var t = document.createElement("strong"); t.textContent = p.title; d.appendChild(t);
        if (p.subtitle) { d.appendChild(document.createElement("br")); d.appendChild(document.createTextNode(p.subtitle)); }
        if (p.updated) { d.appendChild(document.createElement("br")); d.appendChild(document.createTextNode("Updated " + timeText(p.updated))); }
        if (overText(p)) { d.appendChild(document.createElement("br")); d.appendChild(document.createTextNode(overText(p))); }
        if (p.distance_m != null) { d.appendChild(document.createElement("br")); d.appendChild(document.createTextNode(distanceText(p.distance_m) + " away")); }
        if (p.weblink && /^https?:/.test(p.weblink)) {
          d.appendChild(document.createElement("br"));
          var a = document.createElement("a"); a.href = p.weblink; a.textContent = "More"; a.rel = "noopener"; a.target = "_blank"; d.appendChild(a);
        }
        return d;
      }

      function render(fc, url) {
        if (layer) layer.clearLayers();
        markers = {};
        list.replaceChildren();
        fc.features.forEach(function (f) {
          var p = f.properties, li = document.createElement("li");
          li.dataset.id = String(f.id);
          li.dataset.pin = p.pinColor;
          li.dataset.state = p.state || "active";
          var over = p.state === "expired" || p.state === "ended";
          if (over) li.className = "over";
          li.style.setProperty("--pin", p["marker-color"]);
          li.appendChild(line("title", p.title));
          if (p.subtitle) li.appendChild(line("subtitle", p.subtitle));
          var meta = [];
          if (p.distance_m != null) meta.push(distanceText(p.distance_m));
          if (p.updated) meta.push(timeText(p.updated));
          if (over) { var t = overText(p); meta.push(t.charAt(0).toLowerCase() + t.slice(1)); }
          if (meta.length) li.appendChild(line("meta", meta.join(" · ")));
          if (map && f.geometry && f.geometry.type === "Point") {
            var c = f.geometry.coordinates;
            // An incident that is over: a hollow ring in its colour, like the legend says.
            var m = over ? L.circleMarker([c[1], c[0]], { radius: 7, color: p["marker-color"], weight: 3, fillColor: "#fff", fillOpacity: 0.6 })
                         : L.circleMarker([c[1], c[0]], { radius: 8, color: "#fff", weight: 2, fillColor: p["marker-color"], fillOpacity: 0.95 });
            m.bindPopup(popup(f));
            m.addTo(layer);
            markers[f.id] = m;
            li.addEventListener("click", function () { map.panTo(m.getLatLng()); m.openPopup(); });
          }
          list.appendChild(li);
        });
        list.dataset.itemsUrl = url;
        list.dataset.count = String(fc.numberReturned);
        status.textContent = fc.numberReturned + (fc.numberMatched > fc.numberReturned ? " of " + fc.numberMatched : "") +
          " incidents in view, by distance from " + (queryPoint ? "the point clicked" : "the map centre");
        status.className = "";
        document.body.dataset.state = "ready";
      }

      function refresh() {
        var url = itemsURL(), mine = ++generation;
        fetch(url, { headers: { Accept: "application/geo+json" } })
          .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
          .then(function (answer) {
            if (mine !== generation) return;
            if (!answer.ok) { status.textContent = answer.body.detail || answer.body.title; status.className = "problem"; return; }
            render(answer.body, url);
          })
          .catch(function (e) { status.textContent = "The server did not answer: " + e; status.className = "problem"; });
      }
      function soon() { clearTimeout(timer); timer = setTimeout(refresh, 300); }

      function changed(data) {
        var d = JSON.parse(data), f = d.feature;
        if (!map || !f || !f.geometry || markers[d.id]) { soon(); return; }
        var c = f.geometry.coordinates;
        if (map.getBounds().contains([c[1], c[0]])) soon();
      }

      // The event stream read through fetch, not EventSource: an open EventSource keeps a page
      // from ever settling for headless browsers (Chromium's --virtual-time-budget waits for it
      // forever), so screenshots and scripts could not finish; a streamed fetch does not hold
      // them. The text/event-stream format is parsed here, and a dropped stream is resumed with
      // Last-Event-ID after the server's retry time, as EventSource would.
      function listen() {
        var p = new URLSearchParams();
        ["road", "category", "q", "min-confidence", "precision", "min-severity"].forEach(function (k) { if (conditions.has(k)) p.set(k, conditions.get(k)); });
        var url = cfg.eventsPath + (p.toString() ? "?" + p.toString() : "");
        if (!window.fetch || !window.ReadableStream || !window.TextDecoder) {
          if (!window.EventSource) return;
          var source = new EventSource(url);
          ["new", "updated", "ended", "removed"].forEach(function (kind) {
            source.addEventListener(kind, function (event) { changed(event.data); });
          });
          return;
        }
        var lastId = null, retry = 2000;
        function dispatch(block) {
          var kind = "message", data = [];
          block.split("\n").forEach(function (line) {
            var colon = line.indexOf(":");
            if (colon === 0) return;
            var field = colon < 0 ? line : line.slice(0, colon), value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") lastId = value;
            else if (field === "event") kind = value;
            else if (field === "data") data.push(value);
            else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
          });
          if (data.length && ["new", "updated", "ended", "removed"].indexOf(kind) >= 0) changed(data.join("\n"));
        }
        function connect() {
          var headers = { Accept: "text/event-stream" };
          if (lastId !== null) headers["Last-Event-ID"] = lastId;
          fetch(url, { headers: headers, cache: "no-store" }).then(function (r) {
            if (!r.ok || !r.body) throw new Error("HTTP " + r.status);
            var reader = r.body.getReader(), decoder = new TextDecoder(), buffer = "";
            function pump() {
              return reader.read().then(function (chunk) {
                if (chunk.done) return;
                buffer = (buffer + decoder.decode(chunk.value, { stream: true })).replace(/\r\n?/g, "\n");
                var end;
                while ((end = buffer.indexOf("\n\n")) >= 0) { dispatch(buffer.slice(0, end)); buffer = buffer.slice(end + 2); }
                return pump();
              });
            }
            return pump();
          }).catch(function () {}).then(function () { setTimeout(connect, retry); });
        }
        connect();
      }

      if (window.L) {
        map = L.map("map", { worldCopyJump: true });
        L.tileLayer(cfg.tiles, { maxZoom: 19, attribution: cfg.attribution }).addTo(map);
        layer = L.layerGroup().addTo(map);
        if (cfg.view.bbox) {
          var b = cfg.view.bbox, east = b[2] < b[0] ? b[2] + 360 : b[2];
          map.fitBounds([[b[1], b[0]], [b[3], east]]);
        } else {
          map.setView([cfg.view.lat, cfg.view.lon], cfg.view.zoom);
        }
        if (cfg.view.point) queryPoint = L.latLng(cfg.view.lat, cfg.view.lon);
        map.on("click", function (e) {
          queryPoint = e.latlng;
          if (pointMarker) pointMarker.setLatLng(e.latlng); else pointMarker = L.marker(e.latlng, { title: "Query point" }).addTo(map);
          refresh();
        });
        map.on("moveend", soon);
      } else {
        document.getElementById("map").textContent = "The map needs Leaflet (on Debian: apt install libjs-leaflet); the list works without it.";
      }
      refresh();
      listen();
    })();
    </script>
    </body>
    </html>
    """#
}
