#!/usr/bin/env python3
"""The map page with 100,000 incidents, in headless Chromium: how long until the first view is
drawn, and until the map is drawn again after a pan. Issue 50's targets on two cores: first
render <= 1.5 s, a pan <= 300 ms.

    Benchmarks/map-page.py --binary .build/release/trafficgeo            # 100,000 incidents, 7 rounds
    Benchmarks/map-page.py --binary .build/release/trafficgeo --incidents 20000 --rounds 3

It writes a national desk's day with a seeded generator (incidents along 60 roads across Germany,
one in seven with a road segment, every one current), ingests it with the binary, serves it on
loopback with tiles switched off (nothing fetched from elsewhere), and loads the page with the
browser's cache disabled. Each round loads two views, alternating their order: the whole country
(the data's extent, the page's first view: more than a page of incidents, so the map counts them
by area through /collections/incidents/clusters) and a city region (each incident drawn). Times
are the page's own (performance.now(): from navigation to the list and the map drawn, counts
included; from the pan to the same); medians and the spread (min-max) are printed.

Needs: chromium, python3's websocket-client (scripts/setup installs both).
"""
import argparse, json, math, os, random, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from devtools import Chromium  # noqa: E402

CATEGORIES = ["Unfall", "Baustelle", "Stau", "Sperrung", "Gefahr", "Glätte", "stockender Verkehr", "Hindernis"]


def write_feed(path, count, seed):
    rng = random.Random(seed)
    roads = []
    for r in range(60):
        lat, lon = rng.uniform(47.6, 54.6), rng.uniform(6.2, 14.6)
        heading = rng.uniform(0, 2 * math.pi)
        line = [(lon, lat)]
        for _ in range(40):
            heading += rng.uniform(-0.3, 0.3)
            lat = min(54.8, max(47.4, lat + 0.05 * math.cos(heading)))
            lon = min(14.9, max(6.0, lon + 0.08 * math.sin(heading)))
            line.append((lon, lat))
        roads.append((f"A{r + 1}", line))
    now = time.time()
    with open(path, "w") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        for i in range(count):
            name, line = roads[i % len(roads)]
            k = rng.randrange(len(line) - 1)
            t = rng.random()
            (x0, y0), (x1, y1) = line[k], line[k + 1]
            lon, lat = x0 + t * (x1 - x0) + rng.gauss(0, 0.002), y0 + t * (y1 - y0) + rng.gauss(0, 0.002)
            if i % 7 == 0:
                geometry = {"type": "LineString", "coordinates": [[round(lon + j * (x1 - x0) / 8, 6), round(lat + j * (y1 - y0) / 8, 6)] for j in range(4)]}
            else:
                geometry = {"type": "Point", "coordinates": [round(lon, 6), round(lat, 6)]}
            category = CATEGORIES[rng.randrange(len(CATEGORIES))]
            updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - rng.uniform(0, 6 * 3600)))
            expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 2 * 86400))
            feature = {"type": "Feature", "id": f"n{i}", "geometry": geometry,
                       "properties": {"title": f"{name} : Abschnitt {k} {category}", "road": name, "updated": updated, "expires": expires,
                                      "description": f"{category} auf der {name}"}}
            f.write(("," if i else "") + json.dumps(feature, ensure_ascii=False) + "\n")
        f.write("]}\n")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True, help="the trafficgeo to serve with (the release build)")
    ap.add_argument("--incidents", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed", type=int, default=50)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="trafficgeo-map-bench-")
    feed, db = os.path.join(work, "desk.geojson"), os.path.join(work, "desk.sqlite")
    write_feed(feed, args.incidents, args.seed)
    started = time.time()
    subprocess.run([args.binary, "ingest", "--db", db, "--quiet", feed], check=True)
    print(f"map-page: {args.incidents} incidents ingested in {time.time() - started:.1f} s", file=sys.stderr)
    port = free_port()
    server = subprocess.Popen([args.binary, "serve", "--db", db, "--port", str(port), "--quiet", "--tiles", "http://127.0.0.1:9/{z}/{x}/{y}.png"])
    base = f"http://127.0.0.1:{port}"
    chromium = None
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        chromium = Chromium(1200, 800, timeout=args.timeout)
        chromium.call("Page.enable")
        chromium.call("Network.enable")
        chromium.call("Network.setCacheDisabled", cacheDisabled=True)

        def wait(condition):
            deadline = time.time() + args.timeout
            while time.time() < deadline:
                value = chromium.evaluate(condition)
                if value:
                    return value
                time.sleep(0.02)
            status = chromium.evaluate("document.getElementById('status').textContent")
            sys.exit(f"map-page: the page did not get there: {condition}\n{status}")

        # Drawn: the list and the map (and, when the view holds more than a page, its counts).
        drawn = """(function (since) {
            var b = document.body.dataset, s = document.getElementById('status').textContent;
            if (b.state !== 'ready' || !(Number(b.drawnAt) > since)) return 0;
            if (s.indexOf('counts them by area') >= 0 && !(Number(b.countedAt) > since)) return 0;
            return Math.max(Number(b.drawnAt), s.indexOf('counts them by area') >= 0 ? Number(b.countedAt) : 0);
        })(%f)"""
        views = {"country": base + "/", "region": base + "/?bbox=6.6,50.7,7.4,51.1"}
        times = {(view, what): [] for view in views for what in ("first", "pan")}
        shown = {}
        for r in range(args.rounds):
            order = list(views) if r % 2 == 0 else list(reversed(views))
            for view in order:
                chromium.call("Page.navigate", url="about:blank")
                chromium.call("Page.navigate", url=views[view])
                wait("document.readyState !== 'loading' && location.href !== 'about:blank'")
                times[(view, "first")].append(wait(drawn % -1))
                shown[view] = chromium.evaluate("document.getElementById('status').textContent")
                since = chromium.evaluate("performance.now()")
                chromium.evaluate("window.trafficgeoMap.panBy([240, 120], { animate: false }), 0")
                times[(view, "pan")].append(wait(drawn % since) - since)
        print(f"map page, {args.incidents} incidents, {args.rounds} rounds (views alternated), times in ms: median (min-max)")
        for view in views:
            first, pan = times[(view, "first")], times[(view, "pan")]
            print(f"  {view:8} first render {statistics.median(first):7.0f} ({min(first):.0f}-{max(first):.0f})"
                  f"   pan {statistics.median(pan):6.0f} ({min(pan):.0f}-{max(pan):.0f})   shows: {shown[view]}")
            print(f"           each round: first {' '.join(str(round(t)) for t in first)}; pan {' '.join(str(round(t)) for t in pan)}")
    finally:
        if chromium:
            chromium.close()
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
