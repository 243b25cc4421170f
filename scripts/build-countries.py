#!/usr/bin/env python3
"""Build data/gazetteer/countries.tsv, the names of the world's countries, from Debian's iso-codes.

ISO 3166-1 as the iso-codes package keeps it (/usr/share/iso-codes/json/iso_3166-1.json, LGPL-2.1+,
https://salsa.debian.org/iso-codes-team/iso-codes) and its translations (the iso_3166-1 gettext
catalogues under /usr/share/locale): a place typed with its country ("Valencia, Spain", "London, UK",
"Köln, Deutschland", "Denver, USA") is looked up in that country (docs/geocoding.md, "A place a
person types").

  apt install iso-codes && scripts/build-countries.py

Columns: the alpha-2 code (lower case) and the names a person may write for the country, |-separated:
its alpha-2 and alpha-3 codes, its name, common name and official name in English and in every
language iso-codes translates them into (in Latin script, as the gazetteer's names are), the part of a name before a comma ("Korea" of "Korea,
Republic of": such a name may be several countries'), ISO 3166-1's exceptionally reserved codes
that stand for a country (UK for GB, EL for GR), and the subdivisions ISO 3166-2 types as a
"Country" of their own (England, Scotland, Wales: GB). Deterministic: sorted.
"""
import gettext
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gazetteer", "countries.tsv")
ISO = "/usr/share/iso-codes/json"
LOCALES = "/usr/share/locale"
# ISO 3166-1's exceptional reservations that mean a country with a code of its own (the others:
# EU, UN, FX, SU, … are no country in the list).
EXCEPTIONAL = {"UK": "GB", "EL": "GR"}


def main():
    try:
        countries = json.load(open(os.path.join(ISO, "iso_3166-1.json"), encoding="utf-8"))["3166-1"]
        subdivisions = json.load(open(os.path.join(ISO, "iso_3166-2.json"), encoding="utf-8"))["3166-2"]
    except OSError as e:
        sys.exit(f"build-countries: {e}: apt install iso-codes")
    languages = sorted(d for d in os.listdir(LOCALES) if os.path.exists(os.path.join(LOCALES, d, "LC_MESSAGES", "iso_3166-1.mo")))
    catalogues = [gettext.translation("iso_3166-1", localedir=LOCALES, languages=[lang]) for lang in languages]
    names = {}

    def add(code, name):
        name = re.sub(r"\s*\[.*?\]", "", name).strip()
        # Latin script only, as the gazetteer's own names (build-gazetteer.py): the places are
        # looked up by Latin names, and folding the other scripts' names cost half a second a
        # lookup (ICU transliteration).
        if not name or "|" in name or "\t" in name or not all(ord(c) < 0x250 or c in "’" for c in name):
            return
        names.setdefault(code.lower(), set()).add(name)
        if "," in name:
            add(code, name.split(",")[0])

    for c in countries:
        code = c["alpha_2"]
        add(code, code)
        add(code, c["alpha_3"])
        for field in ("name", "common_name", "official_name"):
            if field in c:
                add(code, c[field])
                for catalogue in catalogues:
                    add(code, catalogue.gettext(c[field]))
    for reserved, code in EXCEPTIONAL.items():
        add(code, reserved)
    for s in subdivisions:
        if s["type"] == "Country":
            add(s["code"].split("-")[0], s["name"])
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("code\tnames\n")
        for code in sorted(names):
            f.write(code + "\t" + "|".join(sorted(names[code])) + "\n")
    print(f"build-countries: {len(names)} countries, {sum(len(v) for v in names.values())} names, "
          f"{len(languages)} languages -> {os.path.relpath(OUT)} ({os.path.getsize(OUT) // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
