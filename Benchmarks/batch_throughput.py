#!/usr/bin/env python3
"""Batch-geocoding throughput against a loopback geocoder that answers after 20 ms.

In one run: `trafficgeo geocode batch --concurrency 8` over N distinct queries, compared with the
ideal for 8 requests in flight (8 / 20 ms = 400 queries/s) and with geopy's RateLimiter looping
over the same queries (min_delay_seconds=0, the fastest geopy allows; one request at a time).

  pip install geopy
  Benchmarks/batch_throughput.py [--queries 2000] [--delay 0.02] [--concurrency 8]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_server(delay):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # One send per response and no Nagle: otherwise delayed ACKs add ~40 ms to every answer
        # and the server, not the client, sets the pace.
        wbufsize = 1 << 16
        disable_nagle_algorithm = True

        def do_GET(self):
            q = parse_qs(urlparse(self.path).query).get("q", [""])[0]
            time.sleep(delay)
            n = sum(map(ord, q)) % 1000
            body = json.dumps([{"place_id": n, "licence": "test", "osm_type": "node", "osm_id": n, "lat": str(50 + n / 1e4),
                                "lon": str(7 + n / 1e4), "category": "place", "type": "village", "place_rank": 19,
                                "importance": 0.3, "addresstype": "village", "name": q, "display_name": q,
                                "boundingbox": ["50", "50.1", "7", "7.1"]}]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--delay", type=float, default=0.02)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT, check=True)
    server = make_server(a.delay)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    queries = [f"Ort {i}" for i in range(a.queries)]
    work = tempfile.mkdtemp(prefix="trafficgeo-batch-bench-")
    path = os.path.join(work, "in.csv")
    with open(path, "w") as f:
        f.write("q\n" + "\n".join(queries) + "\n")

    start = time.perf_counter()
    subprocess.run([a.binary, "geocode", "batch", path, "--column", "q", "--mode", "query", "-o", os.path.join(work, "out.csv"),
                    "--db", os.path.join(work, "cache.sqlite"), "--geocoder", f"nominatim={url}",
                    "--concurrency", str(a.concurrency), "--rate", "0", "--quiet"], check=True)
    tg = a.queries / (time.perf_counter() - start)

    try:
        from geopy.extra.rate_limiter import RateLimiter
        from geopy.geocoders import Nominatim
    except ImportError:
        sys.exit("pip install geopy")
    geolocator = Nominatim(user_agent="trafficgeo-benchmark", domain=url.split("//")[1], scheme="http", timeout=10)
    geocode = RateLimiter(geolocator.geocode, min_delay_seconds=0)
    n = min(a.queries, 500)   # geopy is sequential: a sample is enough for its rate
    start = time.perf_counter()
    for q in queries[:n]:
        geocode(q)
    gp = n / (time.perf_counter() - start)

    ideal = a.concurrency / a.delay
    print(f"| method | queries/s | ratio |")
    print(f"|---|---:|---:|")
    print(f"| trafficgeo geocode batch --concurrency {a.concurrency} ({a.queries} queries) | {tg:.0f} | {tg / ideal:.2f} × ideal |")
    print(f"| ideal: {a.concurrency} in flight / {a.delay * 1000:.0f} ms | {ideal:.0f} | 1.00 |")
    print(f"| geopy {__import__('geopy').__version__} RateLimiter loop ({n} queries) | {gp:.0f} | trafficgeo = {tg / gp:.1f} × geopy |")


if __name__ == "__main__":
    main()
