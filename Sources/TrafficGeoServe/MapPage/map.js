// The map page's script (trafficgeo serve, `/` and `items?f=html`), inlined into the page by
// MapPage.swift from the binary (Package.swift embeds this file: no CDN, no file beside the
// binary). Its configuration comes from the page's JSON (#tg-config), never from Swift text.
// Checked by `node --check` (scripts/test); the browser suite (ServeClientsTests) runs it.
// It must not contain the characters that end a script element (a closing script tag).
// Parts: the page's state, filters, URL, list, pins and details; then the server's counts,
// the refresh, the event stream and the route.
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("tg-config").textContent);
  var list = document.getElementById("list"), status = document.getElementById("status"), details = document.getElementById("details");
  var conditions = new URLSearchParams(cfg.query);
  // Current incidents unless the URL asks otherwise (active-at= with no value: all of them).
  if (!conditions.has("active-at") && !conditions.has("datetime")) conditions.set("active-at", "now");
  var map = null, layer = null, lineLayer = null, countLayer = null, markers = {}, features = {}, queryPoint = null, pointMarker = null, timer = null, generation = 0;
  var selected = (location.hash.match(/^#incident=(\d+)$/) || [])[1] || null;
  // Along a route: its positions ({lat, lng}), drawn on the map, loaded from a file or given
  // in the URL (a saved route keeps its name there).
  var route = cfg.view.route ? cfg.view.route.map(function (p) { return { lat: p[0], lng: p[1] }; }) : null;
  var routeName = cfg.view.routeName || null, routeBuffer = cfg.view.buffer || "2km", drawing = false, routeLayer = null;
  // What the event stream brought since the page was opened, and when (marked for a while).
  var recent = {}, changeCount = 0;
  function hasRoute() { return route && route.length >= 2; }
  function routeWKT() {
    return "LINESTRING(" + route.map(function (p) { return wrap(p.lng).toFixed(5) + " " + p.lat.toFixed(5); }).join(",") + ")";
  }

  function wrap(lon) { while (lon > 180) lon -= 360; while (lon < -180) lon += 360; return lon; }
  function distanceText(m) { return m < 1000 ? Math.round(m) + " m" : (m / 1000).toFixed(m < 10000 ? 1 : 0) + " km"; }
  function timeText(t) { return t ? t.replace("T", " ").replace(/:\d\dZ$/, " UTC").replace(/Z$/, " UTC") : ""; }
  function overText(p) {
    if (p.state === "ended") return "Ended " + timeText(p.ended);
    if (p.state === "expired") return "Expired " + timeText(p.expires);
    return "";
  }

  // The filters are the query model's own parameters: the page asks the server, which
  // filters exactly as the command line does.
  var form = {
    current: document.getElementById("f-current"), at: document.getElementById("f-at"),
    category: document.getElementById("f-category"), "min-severity": document.getElementById("f-min-severity"),
    road: document.getElementById("f-road"), q: document.getElementById("f-q")
  };
  // The text conditions, and a box for each measure the server declares (min-delay: 10m).
  var textKeys = ["category", "min-severity", "road", "q"];
  cfg.measureControls.forEach(function (m) {
    var label = document.createElement("label"), input = document.createElement("input");
    input.id = "f-" + m.parameter; input.placeholder = m.example; input.autocomplete = "off"; input.size = 6;
    label.appendChild(document.createTextNode(m.label + " "));
    label.appendChild(input);
    document.getElementById("filters").appendChild(label);
    form[m.parameter] = input;
    textKeys.push(m.parameter);
  });
  cfg.categories.forEach(function (c) { var o = document.createElement("option"); o.value = o.textContent = c; form.category.appendChild(o); });
  cfg.severities.forEach(function (c) { var o = document.createElement("option"); o.value = o.textContent = c; form["min-severity"].appendChild(o); });
  function showConditions() {
    var at = conditions.get("active-at") || "";
    form.current.checked = at === "now";
    form.at.value = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(at) ? localInput(at) : "";
    textKeys.forEach(function (k) { form[k].value = conditions.get(k) || ""; });
  }
  function localInput(iso) {
    var d = new Date(iso); if (isNaN(d)) return "";
    var z = new Date(d.getTime() - d.getTimezoneOffset() * 60000);
    return z.toISOString().slice(0, 16);
  }
  function readConditions(changed) {
    if (changed === form.current) {
      conditions.set("active-at", form.current.checked ? "now" : "");
    } else if (changed === form.at) {
      var d = form.at.value ? new Date(form.at.value) : null;
      conditions.set("active-at", d && !isNaN(d) ? d.toISOString().replace(/\.\d+Z$/, "Z") : (form.current.checked ? "now" : ""));
    }
    conditions.delete("datetime");
    textKeys.forEach(function (k) {
      var v = form[k].value.trim(); if (v) conditions.set(k, v); else conditions.delete(k);
    });
    showConditions();
    syncURL();
    refresh();
  }
  Object.keys(form).forEach(function (k) {
    var el = form[k];
    el.addEventListener("change", function () { readConditions(el); });
    if (el.tagName === "INPUT" && el.type !== "checkbox" && el.type !== "datetime-local") {
      el.addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); readConditions(el); } });
    }
  });
  document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
  // On a phone the map and the list come first: the filters fold away until asked for.
  if (window.matchMedia && window.matchMedia("(max-width: 700px)").matches) document.getElementById("controls").open = false;
  showConditions();

  function viewBox() {
    var b = map.getBounds(), w = b.getWest(), e = b.getEast();
    if (e - w >= 360) { w = -180; e = 180; } else { w = wrap(w); e = wrap(e); }
    var s = Math.max(-90, b.getSouth()), n = Math.min(90, b.getNorth());
    return [w, s, e, n];
  }

  // The page's own URL says what it shows (view, point, filters; the incident chosen after
  // #), so a link shows another person the same map.
  function syncURL() {
    var p = new URLSearchParams(conditions);
    if (hasRoute()) {
      p.set("route", routeName || routeWKT());
      p.set("buffer", routeBuffer);
    } else {
      if (map) p.set("bbox", viewBox().map(function (x) { return x.toFixed(5); }).join(","));
      else if (cfg.view.bbox) p.set("bbox", cfg.view.bbox.join(","));
      if (queryPoint) { p.set("lat", queryPoint.lat.toFixed(6)); p.set("lon", wrap(queryPoint.lng).toFixed(6)); }
    }
    var url = location.pathname + "?" + p.toString() + (selected ? "#incident=" + selected : "");
    try { history.replaceState(null, "", url); } catch (e) {}
  }

  function itemsURL() {
    var p = new URLSearchParams(conditions);
    var c;
    if (hasRoute()) {
      // What is on the way, in the order the driver meets it (as `trafficgeo along`).
      p.set("route", routeName || routeWKT());
      p.set("buffer", routeBuffer);
      p.set("limit", String(cfg.pageLimit));
      p.set("geometry", "mixed");
      p.set("f", "json");
      return cfg.itemsPath + "?" + p.toString();
    }
    if (map) {
      p.set("bbox", viewBox().map(function (x) { return x.toFixed(6); }).join(","));
      c = queryPoint || map.getCenter();
    } else {
      c = queryPoint || { lat: cfg.view.lat, lng: cfg.view.lon };
      if (cfg.view.bbox) p.set("bbox", cfg.view.bbox.join(","));
    }
    p.set("lat", c.lat.toFixed(6));
    p.set("lon", wrap(c.lng).toFixed(6));
    p.set("limit", String(cfg.pageLimit));
    p.set("geometry", "mixed");
    p.set("f", "json");
    return cfg.itemsPath + "?" + p.toString();
  }

  function line(cls, text) { var s = document.createElement("span"); s.className = cls; s.textContent = text; return s; }

  // The details of one incident: what a desk needs to act on it.
  function showDetails(id) {
    var f = features[id];
    selected = f ? id : null;
    syncURL();
    Array.prototype.forEach.call(list.querySelectorAll("li"), function (li) { li.classList.toggle("selected", li.dataset.id === selected); });
    if (!f) { details.hidden = true; details.replaceChildren(); return; }
    var p = f.properties;
    details.replaceChildren();
    var close = document.createElement("button"); close.className = "close"; close.type = "button"; close.textContent = "×";
    close.setAttribute("aria-label", "Close the details");
    close.addEventListener("click", function () { showDetails(null); });
    details.appendChild(close);
    var h = document.createElement("h2"); h.textContent = p.title; details.appendChild(h);
    var dl = document.createElement("dl");
    function row(name, value) {
      if (value == null || value === "") return;
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = name; dd.textContent = value; dl.appendChild(dt); dl.appendChild(dd);
    }
    row("Kind", p.category);
    row("Severity", p.severityLevel ? p.severityLevel + (p.severity && p.severity !== p.severityLevel ? " (" + p.severity + ")" : "") : p.severity);
    row("Road", [p.road, p.roadName].filter(function (x, i, all) { return x && all.indexOf(x) === i; }).join(" · "));
    row("Direction", p.direction);
    row("Place", p.location);
    row("State", p.state + (overText(p) ? " (" + overText(p).toLowerCase() + ")" : ""));
    row("Starts", timeText(p.validFrom));
    row("Ends", timeText(p.expires || p.returnToNormal));
    row("Delay", p.delayMinutes != null ? p.delayMinutes + " min" : null);
    row("Lanes", p.lanesRestricted);
    row("Updated", timeText(p.updated));
    if (p.distance_m != null) row(p.along_m != null ? "Along the route" : "Distance", p.along_m != null ? distanceText(p.along_m) : distanceText(p.distance_m));
    details.appendChild(dl);
    if (p.description) { var d = document.createElement("p"); d.textContent = p.description; details.appendChild(d); }
    var reports = p.reports || [];
    if (reports.length) {
      var t = document.createElement("div"); t.textContent = reports.length === 1 ? "Reported by" : "Reported by " + reports.length + " feeds"; details.appendChild(t);
      var ul = document.createElement("ul"); ul.className = "reports";
      reports.forEach(function (r) { var li = document.createElement("li"); li.textContent = r.source + (r.updated ? ", " + timeText(r.updated) : "") + " (" + r.id + ")"; ul.appendChild(li); });
      details.appendChild(ul);
    }
    if (p.weblink && /^https?:/.test(p.weblink)) {
      var a = document.createElement("a"); a.href = p.weblink; a.textContent = "The feed's page"; a.rel = "noopener"; a.target = "_blank"; details.appendChild(a);
    }
    details.hidden = false;
  }
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && selected) showDetails(null); });

  function render(fc, url) {
    // More in view than a page holds: the map shows how many there are, area by area
    // (counted by the server), and the list the page nearest the centre.
    var counted = map && !hasRoute() && fc.numberMatched > fc.numberReturned;
    // The counts may have come first (asked beside this answer): they stay.
    if (layer) { layer.clearLayers(); lineLayer.clearLayers(); if (!counted) countLayer.clearLayers(); }
    markers = {}; features = {};
    list.replaceChildren();
    var lines = 0, drawn = 0;
    fc.features.forEach(function (f) {
      var p = f.properties, li = document.createElement("li"), id = String(f.id);
      features[id] = f;
      li.dataset.id = id;
      li.dataset.pin = p.pinColor;
      li.dataset.state = p.state || "active";
      li.tabIndex = 0;
      li.setAttribute("role", "button");
      var over = p.state === "expired" || p.state === "ended";
      var isLine = f.geometry && f.geometry.type === "LineString";
      var fresh = recent[id] && Date.now() - recent[id] < 60000;
      li.className = (over ? "over" : "") + (isLine ? " line" : "") + (id === selected ? " selected" : "") + (fresh ? " fresh" : "");
      li.style.setProperty("--pin", p["marker-color"]);
      li.appendChild(line("title", p.title));
      if (p.subtitle) li.appendChild(line("subtitle", p.subtitle));
      var meta = [];
      if (p.along_m != null) meta.push(distanceText(p.along_m) + " along");
      else if (p.distance_m != null) meta.push(distanceText(p.distance_m));
      if (p.updated) meta.push(timeText(p.updated));
      if (over) { var t = overText(p); meta.push(t.charAt(0).toLowerCase() + t.slice(1)); }
      if (meta.length) li.appendChild(line("meta", meta.join(" · ")));
      var m = null;
      if (map && isLine) {
        var path = f.geometry.coordinates.map(function (c) { return [c[1], c[0]]; });
        m = L.polyline(path, { color: p["marker-color"], weight: 6, opacity: over ? 0.45 : 0.9, dashArray: over ? "6 6" : null });
        // The direction it covers: an arrowhead where the segment ends, turned along its last stretch.
        if (!counted && path.length >= 2) {
          var a = map.project(path[path.length - 2], 10), b = map.project(path[path.length - 1], 10);
          var angle = Math.atan2(b.y - a.y, b.x - a.x) * 180 / Math.PI;
          var head = L.marker(path[path.length - 1], { interactive: false, keyboard: false, icon: L.divIcon({ className: "tg-arrow", iconSize: [14, 14], iconAnchor: [7, 7],
            html: '<svg viewBox="0 0 14 14" width="14" height="14" style="transform: rotate(' + angle.toFixed(1) + 'deg); color:' + p["marker-color"] +
                  '"><path d="M2 2 13 7 2 12 5 7z" fill="currentColor" stroke="#fff" stroke-width="1"/></svg>' }) });
          lineLayer.addLayer(head);
        }
        lines++;
      } else if (map && f.geometry && f.geometry.type === "Point") {
        var c = f.geometry.coordinates;
        // The kind's shape in its colour; an incident that is over is faded, like the legend says.
        var svg = cfg.icons[p.category || ""] || cfg.icons[""];
        m = L.marker([c[1], c[0]], {
          icon: L.divIcon({ className: "tg-icon" + (over ? " over" : "") + (fresh ? " fresh" : ""), iconSize: [20, 20], iconAnchor: [10, 10],
                            html: '<span style="color:' + p["marker-color"] + '">' + svg + "</span>" }),
          title: p.title, alt: (p.category || "incident") + ": " + p.title, keyboard: false
        });
      }
      if (m && !counted) {
        // While a route is drawn, a click on an incident is a point of the route too.
        m.on("click", function (e) { if (drawing) addRoutePoint(clickedAt(e)); else showDetails(id); });
        (isLine ? lineLayer : layer).addLayer(m);
        markers[id] = m;
        drawn++;
      }
      function choose() {
        showDetails(id);
        if (!m) return;
        // Moved to, not zoomed to: zooming in would shrink the list the choice was made from.
        map.panTo(m.getBounds ? m.getBounds().getCenter() : m.getLatLng());
        Array.prototype.forEach.call(document.querySelectorAll(".tg-icon.chosen"), function (el) { el.classList.remove("chosen"); });
        var element = m.getElement ? m.getElement() : null;
        if (element) element.classList.add("chosen");
      }
      li.addEventListener("click", choose);
      li.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(); }
        else if (e.key === "ArrowDown" && li.nextSibling) { e.preventDefault(); li.nextSibling.focus(); }
        else if (e.key === "ArrowUp" && li.previousSibling) { e.preventDefault(); li.previousSibling.focus(); }
      });
      list.appendChild(li);
    });
    list.dataset.itemsUrl = url;
    list.dataset.count = String(fc.numberReturned);
    list.dataset.lines = String(lines);
    list.dataset.drawn = String(drawn);
    countedView = counted;
    if (counted) countInView();
    if (hasRoute()) {
      status.textContent = fc.numberReturned + (fc.numberMatched > fc.numberReturned ? " of " + fc.numberMatched : "") +
        (conditions.get("active-at") === "now" ? " current" : "") + " incidents within " + routeBuffer + " of the route (" +
        distanceText(routeLength()) + "), in the order you meet them" +
        (fc.numberMatched === 0 && conditions.get("active-at") === "now" ? " (untick Current only to see ended and unconfirmed ones)" : "");
      status.className = "";
      if (selected && features[selected]) showDetails(selected);
      document.body.dataset.state = "ready";
      document.body.dataset.drawnAt = String(Math.round(performance.now()));
      return;
    }
    status.textContent = fc.numberReturned + (fc.numberMatched > fc.numberReturned ? " of " + fc.numberMatched : "") +
      (conditions.get("active-at") === "now" ? " current" : "") +
      " incidents in view, by distance from " + (queryPoint ? "the point clicked" : "the map centre") +
      (counted ? "; the map counts them by area (zoom in to see each)" : "") +
      (fc.numberMatched === 0 && conditions.get("active-at") === "now" ? " (untick Current only to see ended and unconfirmed ones)" : "");
    status.className = "";
    if (selected && features[selected]) showDetails(selected);
    document.body.dataset.state = "ready";
    document.body.dataset.drawnAt = String(Math.round(performance.now()));
  }

  // The server's counts of the view, cell by cell: bubbles sized and labelled by count; a
  // click zooms in towards the incidents themselves.
  var countedView = false, countsAsked = -1;
  function countInView() {
    if (countsAsked === generation) return;
    countsAsked = generation;
    var p = new URLSearchParams(conditions), size = map.getSize();
    p.set("bbox", viewBox().map(function (x) { return x.toFixed(6); }).join(","));
    p.set("cells", Math.max(1, Math.min(64, Math.round(size.x / 70))) + "x" + Math.max(1, Math.min(64, Math.round(size.y / 70))));
    var mine = generation;
    fetch(cfg.clustersPath + "?" + p.toString(), { headers: { Accept: "application/geo+json" } })
      .then(function (r) { return r.json(); })
      .then(function (fc) {
        if (mine !== generation || !fc.features) return;
        countLayer.clearLayers();
        fc.features.forEach(function (f) {
          var n = f.properties.count, c = f.geometry.coordinates;
          var kind = n < 10 ? "small" : n < 100 ? "medium" : "large", px = n < 10 ? 30 : n < 100 ? 36 : 44;
          var bubble = L.marker([c[1], c[0]], {
            icon: L.divIcon({ className: "marker-cluster marker-cluster-" + kind + " tg-count", iconSize: [px, px],
                              html: "<div><span>" + n + "</span></div>" }),
            title: n + " incidents here: click to zoom in", keyboard: false
          });
          bubble.on("click", function (e) {
            if (drawing) addRoutePoint(clickedAt(e)); else map.setView([c[1], c[0]], Math.min(map.getZoom() + 2, 18));
          });
          countLayer.addLayer(bubble);
        });
        list.dataset.counted = String(fc.numberMatched);
        list.dataset.cells = String(fc.features.length);
        document.body.dataset.countedAt = String(Math.round(performance.now()));
      })
      .catch(function () {});
  }

  function refresh() {
    var url = itemsURL(), mine = ++generation;
    // A view that held more than a page is counted again beside the items request, not after it.
    if (countedView && map && !hasRoute()) countInView();
    fetch(url, { headers: { Accept: "application/geo+json" } })
      .then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (answer) {
        if (mine !== generation) return;
        if (!answer.ok) { status.textContent = answer.body.detail || answer.body.title; status.className = "problem"; return; }
        render(answer.body, url);
      })
      .catch(function (e) { status.textContent = "The server did not answer: " + e; status.className = "problem"; });
  }
  // Changes from the event stream come in bursts (an ingest): one request for a burst. A
  // move of the map has ended already: asked at once, nearly.
  function soon(delay) { clearTimeout(timer); timer = setTimeout(refresh, delay == null ? 300 : delay); }

  function changed(data) {
    var d = JSON.parse(data), f = d.feature;
    recent[String(d.id)] = Date.now();
    changeCount++;
    document.getElementById("changes").textContent = changeCount + (changeCount === 1 ? " change" : " changes") + " since you opened the page";
    if (hasRoute()) { soon(); return; }
    if (!map || !f || !f.geometry || markers[d.id]) { soon(); return; }
    var c = f.geometry.type === "LineString" ? f.geometry.coordinates[0] : f.geometry.coordinates;
    if (map.getBounds().contains([c[1], c[0]])) soon();
  }

  // The event stream read through fetch, not EventSource: an open EventSource keeps a page
  // from ever settling for headless browsers (Chromium's --virtual-time-budget waits for it
  // forever), so screenshots and scripts could not finish; a streamed fetch does not hold
  // them. The text/event-stream format is parsed here, and a dropped stream is resumed with
  // Last-Event-ID after the server's retry time, as EventSource would.
  function listen() {
    // Every change, whatever the filters: they change on the page, the stream stays open;
    // a change outside the view is dropped here, one inside asks the server again.
    var url = cfg.eventsPath;
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
    // Closed when the page goes (a reload, another page): a stream left to the browser kept
    // its connection for about a minute, and a few reloads used up the six a browser opens
    // to one server, so the next page's requests waited for one (58 s, Benchmarks/map-page.py).
    var controller = window.AbortController ? new AbortController() : null, leaving = false;
    window.addEventListener("pagehide", function () { leaving = true; if (controller) controller.abort(); });
    function connect() {
      if (leaving) return;
      var headers = { Accept: "text/event-stream" };
      if (lastId !== null) headers["Last-Event-ID"] = lastId;
      fetch(url, { headers: headers, cache: "no-store", signal: controller ? controller.signal : undefined }).then(function (r) {
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
    var tiles = L.tileLayer(cfg.tiles, { maxZoom: 19, attribution: cfg.attribution }).addTo(map);
    // Without a tile server the page says so, and the incidents and the list still work.
    var tilesFailed = 0, tilesLoaded = 0;
    tiles.on("tileload", function () { tilesLoaded++; });
    tiles.on("tileerror", function () {
      if (++tilesFailed !== 3 || tilesLoaded) return;
      var note = document.getElementById("tiles-note"), host = cfg.tiles.replace(/^[a-z]+:\/\/([^\/]+).*$/i, "$1");
      note.textContent = "No background map: the tile server (" + host + ") did not answer. The incidents and the list are complete; whoever runs this server can name another tile server.";
      note.hidden = false;
      document.body.dataset.tiles = "failed";
    });
    // Pins cluster where they crowd, with their count (Leaflet.markercluster, Debian's
    // libjs-leaflet.markercluster, served beside Leaflet); lines stay lines.
    layer = L.markerClusterGroup ? L.markerClusterGroup({ disableClusteringAtZoom: 14, maxClusterRadius: 50, chunkedLoading: true, zoomToBoundsOnClick: false })
                                 : L.layerGroup();
    layer.on("clusterclick", function (e) { if (drawing) addRoutePoint(clickedAt(e)); else e.layer.zoomToBounds({ padding: [20, 20] }); });
    layer.addTo(map);
    lineLayer = L.layerGroup().addTo(map);
    countLayer = L.layerGroup().addTo(map);
    if (cfg.view.bbox) {
      var b = cfg.view.bbox, east = b[2] < b[0] ? b[2] + 360 : b[2];
      if (b[0] === b[2] && b[1] === b[3]) map.setView([b[1], b[0]], 12);
      else map.fitBounds([[b[1], b[0]], [b[3], east]]);
    } else {
      map.setView([cfg.view.lat, cfg.view.lon], cfg.view.zoom);
    }
    if (cfg.view.point) queryPoint = L.latLng(cfg.view.lat, cfg.view.lon);
    map.on("click", function (e) {
      if (drawing) { addRoutePoint(e.latlng); return; }
      if (hasRoute()) return;
      queryPoint = e.latlng;
      if (pointMarker) pointMarker.setLatLng(e.latlng); else pointMarker = L.marker(e.latlng, { title: "Query point" }).addTo(map);
      syncURL();
      refresh();
    });
    map.on("moveend", function () { syncURL(); if (!hasRoute()) soon(30); });
    window.trafficgeoMap = map;
  } else {
    document.getElementById("map").textContent = "The map needs Leaflet (on Debian: apt install libjs-leaflet); the list works without it.";
  }
  // Along a route: drawn by clicking points, or loaded from a GPX or GeoJSON file.
  var drawButton = document.getElementById("route-draw"), clearButton = document.getElementById("route-clear");
  var bufferSelect = document.getElementById("route-buffer"), routeFile = document.getElementById("route-file");
  if (!Array.prototype.some.call(bufferSelect.options, function (o) { return o.value === routeBuffer; })) {
    var o = document.createElement("option"); o.textContent = routeBuffer; bufferSelect.appendChild(o);
  }
  bufferSelect.value = routeBuffer;
  function routeLength() {
    var total = 0;
    for (var i = 1; route && i < route.length; i++) {
      total += map ? map.distance(route[i - 1], route[i]) : 0;
    }
    return total;
  }
  // Where a click on a pin, a cluster or a count was: the place clicked, not the marker's.
  function clickedAt(e) { return e.originalEvent ? map.mouseEventToLatLng(e.originalEvent) : e.latlng; }
  function addRoutePoint(latlng) {
    route = (route || []).concat([{ lat: latlng.lat, lng: latlng.lng }]);
    routeName = null;
    drawRoute();
    syncURL();
    if (hasRoute()) refresh();
  }
  function drawRoute() {
    clearButton.hidden = !route;
    drawButton.textContent = drawing ? "Finish the route" : "Draw a route";
    document.getElementById("map").style.cursor = drawing ? "crosshair" : "";
    if (!map) return;
    if (routeLayer) { map.removeLayer(routeLayer); routeLayer = null; }
    if (route && route.length) {
      routeLayer = L.polyline(route.map(function (p) { return [p.lat, p.lng]; }), { color: "#1f4e9c", weight: 4, opacity: 0.8, dashArray: "2 8", interactive: false }).addTo(map);
    }
  }
  drawButton.addEventListener("click", function () {
    drawing = !drawing;
    if (drawing) {
      route = []; routeName = null; queryPoint = null;
      if (pointMarker) { map.removeLayer(pointMarker); pointMarker = null; }
      status.textContent = "Click the map along your way, then Finish the route.";
    }
    drawRoute();
    syncURL();
    if (!drawing && !hasRoute()) { route = null; drawRoute(); refresh(); }
  });
  clearButton.addEventListener("click", function () {
    route = null; routeName = null; drawing = false;
    drawRoute(); syncURL(); refresh();
  });
  bufferSelect.addEventListener("change", function () {
    routeBuffer = bufferSelect.value; syncURL(); if (hasRoute()) refresh();
  });
  function lineOf(text) {
    if (/^\s*</.test(text)) {
      var doc = new DOMParser().parseFromString(text, "application/xml");
      var points = doc.getElementsByTagName("trkpt");
      if (!points.length) points = doc.getElementsByTagName("rtept");
      return Array.prototype.map.call(points, function (p) { return { lat: Number(p.getAttribute("lat")), lng: Number(p.getAttribute("lon")) }; });
    }
    var g = JSON.parse(text);
    if (g.type === "FeatureCollection") g = (g.features.filter(function (f) { return f.geometry && /LineString$/.test(f.geometry.type); })[0] || {}).geometry;
    if (g && g.type === "Feature") g = g.geometry;
    if (!g) return [];
    var coordinates = g.type === "MultiLineString" ? [].concat.apply([], g.coordinates) : g.type === "LineString" ? g.coordinates : [];
    return coordinates.map(function (c) { return { lat: c[1], lng: c[0] }; });
  }
  routeFile.addEventListener("change", function () {
    var file = routeFile.files && routeFile.files[0];
    if (!file) return;
    file.text().then(function (text) {
      var line = lineOf(text).filter(function (p) { return isFinite(p.lat) && isFinite(p.lng); });
      if (line.length < 2) throw new Error("no line in " + file.name + " (a GPX track or route, or a GeoJSON LineString)");
      // A long recorded track is thinned to what a URL holds: every nth position, the ends kept.
      var step = Math.ceil(line.length / 300);
      route = line.filter(function (p, i) { return i % step === 0 || i === line.length - 1; });
      routeName = null; drawing = false;
      drawRoute();
      if (map) map.fitBounds(routeLayer.getBounds(), { padding: [20, 20] });
      syncURL(); refresh();
    }).catch(function (e) { status.textContent = "The route could not be read: " + e.message; status.className = "problem"; });
  });
  drawRoute();
  syncURL();
  refresh();
  listen();
})();
