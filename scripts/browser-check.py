#!/usr/bin/env python3
"""Loads trafficgeo's map page in headless Chromium (Debian's `chromium`) through the DevTools
protocol, waits until the page has drawn its pins and list, and reports what it shows as JSON:
the items URL the page asked, the ids in its list, the number of pins drawn; with --screenshot,
a PNG of the page; with --then, runs a command once the page is ready (an ingest) and waits
until the event stream has made the list change. (The page reads its event stream through a
streamed fetch, so Chromium's own `--headless --screenshot --virtual-time-budget` settles on it
too; this script exists for what that cannot do: reports, clicks, live changes.)

    scripts/browser-check.py http://127.0.0.1:8080/?bbox=6.5,50.7,7.4,51.1 --screenshot map.png
    scripts/browser-check.py http://127.0.0.1:8080/ --filter category=accident --filter current=false --select 1

Needs: chromium, and the websocket-client package (pip install websocket-client).
Exit status: 0 the page became ready; 1 it did not (the page's status line is reported).
"""
import argparse, base64, json, os, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from devtools import Chromium  # noqa: E402  (scripts/devtools.py)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--screenshot", help="write a PNG of the page here")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=800)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--mobile", action="store_true", help="a phone's screen (390 x 844, touch) instead of the window size")
    ap.add_argument("--click", help="click the map at x,y (pixels) after it is ready, and wait for the list to follow")
    ap.add_argument("--then", help="a shell command to run once the page is ready; then wait for the list to change (the event stream)")
    ap.add_argument("--filter", action="append", default=[], metavar="ID=VALUE",
                    help="once ready, set the filter control #f-ID (a checkbox: true/false) and wait for the items request to change (repeatable, in order)")
    ap.add_argument("--draw-route", metavar="LAT,LON;LAT,LON;…",
                    help="once ready, press 'Draw a route', click the map at these places, press 'Finish', and wait for the list along the route")
    ap.add_argument("--select", type=int, metavar="N", help="once ready, choose the list's Nth incident (1: the first) from the keyboard, and report its details")
    args = ap.parse_args()

    chromium = Chromium(args.width, args.height, timeout=args.timeout)
    try:
        call, evaluate = chromium.call, chromium.evaluate
        deadline = time.time() + args.timeout
        call("Page.enable")
        width, height = (390, 844) if args.mobile else (args.width, args.height)
        call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=2 if args.mobile else 1, mobile=args.mobile)
        call("Page.navigate", url=args.url)
        state = None
        while time.time() < deadline:
            state = evaluate("document.body && document.body.dataset.state")
            if state == "ready":
                break
            time.sleep(0.2)
        if args.click and state == "ready":
            before = evaluate("document.getElementById('list').dataset.itemsUrl")
            x, y = (float(v) for v in args.click.split(","))
            for kind in ("mousePressed", "mouseReleased"):
                call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
            while time.time() < deadline and evaluate("document.getElementById('list').dataset.itemsUrl") == before:
                time.sleep(0.2)
        items_url = "document.getElementById('list').dataset.itemsUrl"
        for spec in args.filter if state == "ready" else []:
            name, _, value = spec.partition("=")
            before = evaluate(items_url)
            evaluate("""(function (el, value) {
                if (el.type === "checkbox") el.checked = value === "true"; else el.value = value;
                el.dispatchEvent(new Event("change"));
            })(document.getElementById(%s), %s)""" % (json.dumps("f-" + name), json.dumps(value)))
            while time.time() < deadline and evaluate(items_url) == before:
                time.sleep(0.2)
            if evaluate(items_url) == before:
                state = f"the filter {name} did not change the items request"
        if args.draw_route and state == "ready":
            before = evaluate(items_url)
            evaluate("document.getElementById('route-draw').click()")
            for place in args.draw_route.split(";"):
                lat, lon = (float(v) for v in place.split(","))
                # Where the place is on the screen now: a real click there, as a person's.
                x, y = evaluate("""(function (m) { var p = m.latLngToContainerPoint([%f, %f]), r = m.getContainer().getBoundingClientRect();
                                   return [p.x + r.left, p.y + r.top]; })(window.trafficgeoMap)""" % (lat, lon))
                for kind in ("mousePressed", "mouseReleased"):
                    call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
                time.sleep(0.4)  # a second click at once would be a double click (a zoom)
            evaluate("document.getElementById('route-draw').click()")
            while time.time() < deadline and "route=" not in (evaluate(items_url) or ""):
                time.sleep(0.2)
            time.sleep(1)
            if "route=" not in (evaluate(items_url) or ""):
                state = "the route did not change the items request"
        if args.select and state == "ready":
            evaluate("""(function (li) { li.focus(); li.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true })); })
                        (document.querySelectorAll('#list li')[%d])""" % (args.select - 1))
            time.sleep(0.3)
        if args.then and state == "ready":
            listed = "Array.prototype.map.call(document.querySelectorAll('#list li'), function (li) { return li.dataset.id; }).join(',')"
            before = evaluate(listed)
            subprocess.run(args.then, shell=True, check=True, stdout=subprocess.DEVNULL)
            while time.time() < deadline and evaluate(listed) == before:
                time.sleep(0.2)
            if evaluate(listed) == before:
                state = "no change after --then"
        time.sleep(0.5)  # the last frame of the markers
        report = evaluate("""(function () {
            var list = document.getElementById('list');
            return {
              state: document.body.dataset.state || null,
              status: document.getElementById('status').textContent,
              itemsUrl: list.dataset.itemsUrl || null,
              ids: Array.prototype.map.call(list.querySelectorAll('li'), function (li) { return Number(li.dataset.id); }),
              pins: Number(list.dataset.drawn || 0),
              icons: document.querySelectorAll('.leaflet-marker-pane .tg-icon').length,
              clusters: Array.prototype.reduce.call(document.querySelectorAll('.marker-cluster'), function (n, c) { return n + Number(c.textContent || 0); }, 0),
              lines: Number(list.dataset.lines || 0),
              pageUrl: location.href,
              tilesNote: document.getElementById('tiles-note') && !document.getElementById('tiles-note').hidden ? document.getElementById('tiles-note').textContent : null,
              details: (function (d) {
                if (!d || d.hidden) return null;
                var out = { title: d.querySelector('h2') && d.querySelector('h2').textContent, fields: {},
                            reports: Array.prototype.map.call(d.querySelectorAll('ul.reports li'), function (li) { return li.textContent; }),
                            link: d.querySelector('a') ? d.querySelector('a').href : null };
                Array.prototype.forEach.call(d.querySelectorAll('dt'), function (dt) { out.fields[dt.textContent] = dt.nextSibling.textContent; });
                return out;
              })(document.getElementById('details')),
              selected: (document.querySelector('#list li.selected') || {}).dataset ? document.querySelector('#list li.selected').dataset.id : null,
              pinColors: Array.prototype.map.call(list.querySelectorAll('li'), function (li) { return li.dataset.pin; }),
              leaflet: !!window.L,
              viewport: [window.innerWidth, window.innerHeight],
              map: (function (r) { return [r.left, r.top, r.width, r.height]; })(document.getElementById('map').getBoundingClientRect()),
              side: (function (r) { return [r.left, r.top, r.width, r.height]; })(document.getElementById('side').getBoundingClientRect())
            };
        })()""")
        if args.screenshot:
            shot = call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        print(json.dumps(report))
        sys.exit(0 if state == "ready" else 1)
    finally:
        chromium.close()


if __name__ == "__main__":
    main()
