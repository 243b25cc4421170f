#!/usr/bin/env python3
"""Write a large synthetic Atom feed in the freiefahrt.info shape for ingest benchmarks.

Positions are random in Germany's bounding box and ride in the weblinks (lat/lon query items),
so ingest needs no geocoder. Deterministic for a given --seed.

  scripts/make-big-feed.py 100000 -o /tmp/feed-100k.xml [--seed 1] [--no-coords]
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-coords", action="store_true", help="leave positions out of the weblinks")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    with open(a.output, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n')
        f.write("  <updated>2025-05-19T06:00:00.000Z</updated>\n  <title>synthetic</title>\n")
        for i in range(a.count):
            lat, lon = rnd.uniform(47.3, 55.0), rnd.uniform(5.9, 15.0)
            road = rnd.randint(1, 99)
            href = f"https://traffic.example/?id=syn-{i}"
            if not a.no_coords:
                href += f"&amp;lat={lat:.6f}&amp;lon={lon:.6f}"
            f.write(
                f"  <entry>\n    <updated>2025-05-19T04:{i % 60:02d}:00Z</updated>\n"
                f"    <expires>2025-05-19T06:{i % 60:02d}:00Z</expires>\n"
                f"    <title>A{road} : Koeln - Olpe</title>\n    <id>syn-{i}</id>\n"
                f'    <link type="text/html" rel="alternate" href="{href}"/>\n'
                f"    <summary>Zwischen AS Wenden und AS Krombach in beiden Richtungen Stau, {i % 7} km</summary>\n"
                '    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><div></div>'
                f"A{road}: Koeln - Olpe<br/>Stau</div></content>\n  </entry>\n")
        f.write("</feed>\n")


if __name__ == "__main__":
    main()
