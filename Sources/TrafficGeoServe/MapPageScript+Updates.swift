extension MapPage {
    /// The second part of the map page's script (`MapPage.script`): the server's counts of a
    /// view, the refresh, the event stream, drawing and loading a route; it ends the function
    /// the first part opens.
    static let scriptUpdatesAndRoute = #"""
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
    """#
}
