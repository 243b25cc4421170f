#!/usr/bin/env python3
"""Make a conflation scenario: the same real incidents reported by several feeds, in the shapes a
desk receives, next to distinct incidents that must stay apart, with the truth of which report
belongs to which real-world event (docs/conflation.md).

German case, from real Autobahn warnings with true positions (../shared/data/autobahn):
  - autobahn.json   the Autobahn API's warning JSON: the warning as published (coordinates, extent);
  - police.atom     an Atom feed of road titles and sentences, no positions (placed by geocoding),
                    its own ids, published a few minutes later, some sentences shortened;
  - situations.datex2.xml   DATEX II v2 (one situation per warning): other ids, English words,
                    points moved by up to --move metres, a linear location or a display point,
                    a TPEG direction where the warning's extent gives one, its own validity.
Each real warning (warnings scraped several times are one: same road, direction and start) goes
into a random subset of these feeds, as a random one of its scraped versions. The data itself holds
the distinct events that must stay apart: the same kind further along the road, the same place on
another day, the other carriageway; --opposite adds, for a share of warnings, a mirror on the
other carriageway (reversed route words and extent, 30 m across) reported by other feeds.

US case, from CDOT's real WZDx work zones (../shared/data/standards/wzdx/cdot-production-2023.json):
  - cdot.wzdx.geojson   the work zones as published;
  - cotrip.open511.json an Open511 rendering of most of them as a 511 system would publish them:
                    other ids, a headline in other words ("I 70" for "I-70", "WB" for
                    "westbound"), the line moved up to --move metres, or only its first point.
CDOT publishes one feature per direction of a project: the two carriageways are distinct events.

Roads are split into two folds by a hash of their name: --fold tune makes the scenario to tune the
rules on, --fold holdout the one kept aside (never tuned on).

  scripts/make-conflation-scenario.py --out /tmp/conflation-tune --fold tune
  scripts/make-conflation-scenario.py --out /tmp/conflation-holdout --fold holdout

Writes the feeds and truth.csv (feed, id, event, kind) into --out. Deterministic for a --seed.
"""
import argparse
import csv
import hashlib
import json
import lzma
import os
import random
import re
import sys
from datetime import datetime, timedelta, timezone
from xml.sax.saxutils import escape

from scenario_geometry import bearing, moved, near, offset, tpeg_direction

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared"))
WARNINGS = os.path.join(SHARED, "data", "autobahn", "warnings-dev.csv.xz")
CDOT = os.path.join(SHARED, "data", "standards", "wzdx", "cdot-production-2023.json")

ATOM_ID = "https://polizei.example/verkehr"
DATEX_CREATOR = ("de", "VIZ-EXAMPLE")


def fold_of(road: str) -> str:
    """Roads whose hash is 0 mod 4 are kept aside (holdout); the rest are for tuning."""
    h = int(hashlib.sha1(road.encode()).hexdigest(), 16)
    return "holdout" if h % 4 == 0 else "tune"


def sentence(description: str) -> str:
    d = re.sub(r"\s+", " ", description).strip()
    m = re.search(r"seit \d\d\.\d\d\.\d{4}, \d\d:\d\d (.*)$", d)
    return m.group(1).strip() if m else d


def start_time(row) -> datetime:
    m = re.search(r"(\d\d)\.(\d\d)\.(\d{4}), (\d\d):(\d\d)", row["description"])
    if m:
        d, mo, y, h, mi = map(int, m.groups())
        return datetime(y, mo, d, h, mi, tzinfo=timezone(timedelta(hours=2))).astimezone(timezone.utc)
    ts = row["startTimestamp"]
    try:
        return datetime.fromisoformat(ts).astimezone(timezone.utc)
    except ValueError:
        return datetime.strptime(ts[:10], "%Y-%m-%d").replace(tzinfo=timezone.utc)


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


KINDS = [  # (words in the German sentence, kind, DATEX record, English phrase)
    ("Falschfahrer", "wrong-way", "Accident", "Wrong-way driver"),
    ("Unfall", "accident", "Accident", "Accident"),
    ("Im Stillstand", "standstill", "AbnormalTraffic", "Stationary traffic"),
    ("Stau", "queue", "AbnormalTraffic", "Queuing traffic"),
    ("Stockender Verkehr", "queue", "AbnormalTraffic", "Queuing traffic"),
    ("Langsamer Verkehr", "slow", "AbnormalTraffic", "Slow traffic"),
    ("Baustelle", "roadworks", "MaintenanceWorks", "Roadworks"),
    ("Sperrung", "closure", "RoadOrCarriagewayOrLaneManagement", "Closure"),
    ("gesperrt", "closure", "RoadOrCarriagewayOrLaneManagement", "Closure"),
    ("Hindernis", "obstacle", "VehicleObstruction", "Obstruction"),
    ("defektes Fahrzeug", "obstacle", "VehicleObstruction", "Broken-down vehicle"),
    ("Gefahr", "danger", "GeneralObstruction", "Hazard"),
]
# Where a junction's name ends in a warning's sentence: the words of the event that follow it.
EVENT_WORDS = r" (?:Langsamer|Stockender|Im Stillstand|Stau|Gefahr|Baustelle|Unfall|Fahrzeug|Hindernis|Falschfahrer|Sperrung)"
ABNORMAL = {"standstill": "stationaryTraffic", "queue": "queuingTraffic", "slow": "slowTraffic"}


def kind_of(text: str):
    for words, kind, record, phrase in KINDS:
        if words in text:
            return kind, record, phrase
    return "other", "AbnormalTraffic", "Traffic problem"


def parse_row(row):
    ext = [float(x) for x in row["extent"].split(",") if x.strip()]
    if len(ext) < 4:
        ext = [float(row["latitude"]), float(row["longitude"])] * 2
    sub = row["subtitle"].strip()
    # "Köln -> Olpe" names the direction; "km 86.04 --> km 89.98" only kilometre posts.
    route = tuple(p.strip() for p in sub.split("->")) if "->" in sub and "-->" not in sub else None
    text = sentence(row["description"])
    kind, record, phrase = kind_of(text + " " + row["title"])
    return {
        "id": row["identifier"], "road": row["road"], "title": row["title"], "subtitle": sub, "route": route,
        "sentence": text, "description": row["description"], "start": start_time(row), "startTimestamp": row["startTimestamp"],
        "lat": float(row["latitude"]), "lon": float(row["longitude"]), "extent": ext, "kind": kind, "record": record,
        "phrase": phrase, "abnormal": None if row["abnormalTrafficType"] == "NA" else row["abnormalTrafficType"],
        "delay": None if row["delay_minutes"] == "NA" else row["delay_minutes"],
    }


# --- the German case ---

def distinct_events(rows):
    """Warnings scraped several times are one event: same road, direction words and start minute."""
    groups = {}
    for r in rows:
        key = (r["road"], r["subtitle"], r["start"].strftime("%Y%m%d%H%M"))
        groups.setdefault(key, []).append(r)
    return groups


def unambiguous(keys, groups, most):
    """Up to `most` warnings whose truth is clear: none within 3 km of another on the same road and
    carriageway (or naming the same junctions) that started less than 12 hours apart. The Autobahn API issues a new warning,
    with a new start, as a queue changes (slow, then stationary traffic): two such warnings at one
    place and time may well be one congestion for a desk, and no rule can be judged on them. What
    stays apart is clear: the other carriageway, the same kind 3 km or more further on, the same
    place on another day (12 hours or more later)."""
    chosen, by_road = [], {}
    for k in keys:
        if len(chosen) >= most:
            break
        clash = False
        for other in by_road.get(k[0], []):
            if any(same_way(v, w) and abs((v["start"] - w["start"]).total_seconds()) < 12 * 3600
                   and (near(v, w, 3000) or v["title"] == w["title"]) for v in groups[k] for w in groups[other]):
                clash = True
                break
        if not clash:
            chosen.append(k)
            by_road.setdefault(k[0], []).append(k)
    return chosen


def same_way(v, w):
    """Whether two warnings may be on one carriageway: the same origin or destination in their
    route words, or words missing from one."""
    if not v["route"] or not w["route"]:
        return True
    return v["route"][0] == w["route"][0] or v["route"][1] == w["route"][1]


def mirror(event_key, versions, rnd):
    """The same kind of incident on the other carriageway: route words and extent reversed, 30 m across."""
    out = []
    for v in versions:
        frm, to = v["route"]
        lat1, lon1, lat2, lon2 = v["extent"]
        b = bearing((lat1, lon1), (lat2, lon2)) if (lat1, lon1) != (lat2, lon2) else rnd.uniform(0, 360)
        across = (b + 90) % 360
        s = offset(lat2, lon2, across, 30)
        e = offset(lat1, lon1, across, 30)
        m = dict(v)
        m["id"] = v["id"] + ".other-carriageway"
        m["route"] = (to, frm)
        m["subtitle"] = f"{to} -> {frm}"
        # "A1: Köln -> Dortmund, …" reads "A1: Dortmund -> Köln, …" (the words as the sentence
        # spells them: the subtitle's may be another Unicode form of the same names).
        route = re.match(r"^(\S+: )(.+?) -> (.+?)(,.*|$)", v["sentence"])
        text = route.group(1) + route.group(3) + " -> " + route.group(2) + route.group(4) if route else v["sentence"]
        # "zwischen 0.2 km hinter AS X und 0.5 km vor AS Y" reads Y before X the other way.
        j = re.search(r"zwischen (.*?(?:AS|AK|AD) )(.+?) und (.*?(?:AS|AK|AD) )(.+?)(\s{2}|" + EVENT_WORDS + "|$)", text)
        if j:
            text = text[:j.start()] + f"zwischen {j.group(1)}{j.group(4)} und {j.group(3)}{j.group(2)}" + text[j.start(5):]
        m["sentence"] = text
        title = re.match(r"^(\S+ \| )(.+?) - (.+)$", v["title"])
        if title:
            m["title"] = title.group(1) + title.group(3) + " - " + title.group(2)
        m["extent"] = [s[0], s[1], e[0], e[1]]
        m["lat"], m["lon"] = s
        m["start"] = v["start"] + timedelta(minutes=rnd.randint(-40, 40))
        out.append(m)
    return out


def atom_feed(reports, rnd, positions=False):
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<feed xmlns="http://www.w3.org/2005/Atom">',
           f"  <id>{ATOM_ID}</id>", "  <title>Verkehrsmeldungen der Polizei</title>",
           f"  <updated>{iso(max(r['published'] for r in reports))}</updated>"]
    for r in reports:
        v = r["version"]
        m = re.match(r"(\S+)\s*\|\s*(.*)$", v["title"])
        title = f"{m.group(1)} : {m.group(2)}" if m else v["title"]
        text = v["sentence"]
        if rnd.random() < 0.4:
            # Shorter words: no kilometre offsets ("zwischen AS Krombach und AS Wenden").
            text = re.sub(r"\d+(\.\d+)? km (hinter|vor) ", "", text)
        out += ["  <entry>", f"    <id>{escape(r['id'])}</id>", f"    <title>{escape(title)}</title>",
                f"    <updated>{iso(r['published'])}</updated>", f"    <expires>{iso(r['published'] + timedelta(hours=2))}</expires>",
                f"    <summary>{escape(text)}</summary>"]
        if positions:
            # The tutorial feed's way: the position in the weblink (a report placed by its feed).
            p = moved(v["lat"], v["lon"], rnd, 200)
            href = f"https://polizei.example/meldung?id={r['id']}&lat={p[0]:.6f}&lon={p[1]:.6f}"
            out.append(f'    <link rel="alternate" href="{escape(href)}"/>')
        out.append("  </entry>")
    out.append("</feed>")
    return "\n".join(out) + "\n"


def datex_feed(reports, rnd, most):
    country, national = DATEX_CREATOR
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2">',
           f"<exchange><supplierIdentification><country>{country}</country><nationalIdentifier>{national}</nationalIdentifier></supplierIdentification></exchange>",
           '<payloadPublication xsi:type="SituationPublication" lang="en">',
           f"<publicationTime>{iso(max(r['published'] for r in reports))}</publicationTime>",
           f"<publicationCreator><country>{country}</country><nationalIdentifier>{national}</nationalIdentifier></publicationCreator>"]
    for r in reports:
        v = r["version"]
        lat1, lon1, lat2, lon2 = v["extent"]
        has_line = (lat1, lon1) != (lat2, lon2)
        b = bearing((lat1, lon1), (lat2, lon2)) if has_line else None
        start = r["published"]
        validity = f"<overallStartTime>{iso(start)}</overallStartTime>"
        if rnd.random() < 0.5:
            validity += f"<overallEndTime>{iso(start + timedelta(minutes=rnd.randint(60, 240)))}</overallEndTime>"
        record_type = v["record"]
        detail = ""
        if record_type == "AbnormalTraffic":
            detail = f"<abnormalTrafficType>{ABNORMAL.get(v['kind'], 'queuingTraffic')}</abnormalTrafficType>"
        elif record_type == "Accident":
            detail = "<accidentType>accident</accidentType>"
        elif record_type == "VehicleObstruction":
            detail = "<vehicleObstructionType>brokenDownVehicle</vehicleObstructionType>"
        elif record_type == "GeneralObstruction":
            detail = "<obstructionType>objectOnTheRoad</obstructionType>"
        elif record_type == "MaintenanceWorks":
            detail = "<roadMaintenanceType>roadworks</roadMaintenanceType>"
        elif record_type == "RoadOrCarriagewayOrLaneManagement":
            detail = "<roadOrCarriagewayOrLaneManagementType>carriagewayClosures</roadOrCarriagewayOrLaneManagementType>"
        names = re.findall(r"(?:AS|AK|AD) (.+?)(?= und |, | aus Richtung| in | Richtung|" + EVENT_WORDS + "|$)", v["sentence"])
        where = f" between {names[0]} and {names[1]}" if len(names) >= 2 else (f" at {names[0]}" if names else "")
        towards = f", direction {v['route'][1]}" if v["route"] else ""
        comment = f"{v['phrase']} on the {v['road']}{where}{towards}." if rnd.random() < 0.7 else v["sentence"]
        direction = f"<tpegDirection>{tpeg_direction(b)}</tpegDirection>" if b is not None and rnd.random() < 0.7 else ""
        if has_line and rnd.random() < 0.6:
            s = moved(lat1, lon1, rnd, most)
            e = moved(lat2, lon2, rnd, most)
            location = ('<groupOfLocations xsi:type="Linear">'
                        f"<linearExtension><linearByCoordinatesExtension>"
                        f"<linearCoordinatesStartPoint><pointCoordinates><latitude>{s[0]:.6f}</latitude><longitude>{s[1]:.6f}</longitude></pointCoordinates></linearCoordinatesStartPoint>"
                        f"<linearCoordinatesEndPoint><pointCoordinates><latitude>{e[0]:.6f}</latitude><longitude>{e[1]:.6f}</longitude></pointCoordinates></linearCoordinatesEndPoint>"
                        "</linearByCoordinatesExtension></linearExtension>"
                        f"{direction}</groupOfLocations>")
        else:
            p = moved(v["lat"], v["lon"], rnd, most)
            location = ('<groupOfLocations xsi:type="Point">'
                        f"<locationForDisplay><latitude>{p[0]:.6f}</latitude><longitude>{p[1]:.6f}</longitude></locationForDisplay>"
                        f"{direction}</groupOfLocations>")
        # The road, as DATEX II v2 names it on a linear element.
        road_element = f"<linearWithinLinearElement><linearElement><roadNumber>{escape(v['road'])}</roadNumber></linearElement></linearWithinLinearElement>"
        delay = ""
        if v["delay"] and v["delay"] not in ("0", ""):
            delay = f"<impact><delays><delayTimeValue>{int(float(v['delay'])) * 60}</delayTimeValue></delays></impact>"
        out.append(
            f'<situation id="{escape(r["id"])}" version="1"><overallSeverity>{rnd.choice(["low", "medium", "high"])}</overallSeverity>'
            f"<situationVersionTime>{iso(start)}</situationVersionTime>"
            f'<situationRecord xsi:type="{record_type}" id="{escape(r["id"])}-1" version="1">'
            f"<situationRecordCreationTime>{iso(start)}</situationRecordCreationTime><situationRecordVersionTime>{iso(start)}</situationRecordVersionTime>"
            f"<probabilityOfOccurrence>certain</probabilityOfOccurrence>"
            f"<validity><validityStatus>definedByValidityTimeSpec</validityStatus><validityTimeSpecification>{validity}</validityTimeSpecification></validity>"
            f"{delay}"
            f"<generalPublicComment><comment><values><value lang=\"en\">{escape(comment)}</value></values></comment></generalPublicComment>"
            f"{location.replace('</groupOfLocations>', road_element + '</groupOfLocations>')}"
            f"{detail}</situationRecord></situation>")
    out += ["</payloadPublication>", "</d2LogicalModel>"]
    return "\n".join(out) + "\n"


def autobahn_json(reports):
    items = []
    for r in reports:
        v = r["version"]
        lat1, lon1, lat2, lon2 = v["extent"]
        items.append({
            "identifier": r["id"], "display_type": "WARNING", "title": v["title"], "subtitle": " " + v["subtitle"],
            "description": [f"Beginn: {v['start'].astimezone(timezone(timedelta(hours=2))).strftime('%d.%m.%y um %H:%M')} Uhr",
                            v["sentence"]],
            "coordinate": {"lat": f"{v['lat']:.6f}", "long": f"{v['lon']:.6f}"},
            "extent": f"{lat1},{lon1},{lat2},{lon2}", "point": f"{v['lat']},{v['lon']}",
            "startTimestamp": iso(v["start"]), "abnormalTrafficType": v["abnormal"], "isBlocked": "false",
        })
    return json.dumps({"warning": items}, ensure_ascii=False, indent=0) + "\n"


def german_case(args, rnd, truth):
    with lzma.open(WARNINGS, "rt", encoding="utf-8") as f:
        rows = [parse_row(r) for r in csv.DictReader(f)]
    rows = [r for r in rows if args.fold == "all" or fold_of(r["road"]) == args.fold]
    days = sorted({r["start"].date() for r in rows})
    chosen_days = set(args.days.split(",")) if args.days else None
    rows = [r for r in rows if (chosen_days is None and str(r["start"].date()) >= args.first_day
                                and (r["start"].date() - datetime.fromisoformat(args.first_day).date()).days < args.day_count)
            or (chosen_days is not None and str(r["start"].date()) in chosen_days)]
    groups = distinct_events(rows)
    keys = sorted(groups)
    rnd.shuffle(keys)
    keys = keys[: args.events] if args.keep_ambiguous else unambiguous(keys, groups, args.events)
    events = {k: groups[k] for k in keys}
    mirrors = {}
    by_road = {}
    for k in keys:
        by_road.setdefault(k[0], []).append(groups[k])
    for k in keys:
        if groups[k][0]["route"] and rnd.random() < args.opposite:
            made = mirror(k, groups[k], rnd)
            # Not where a warning taken already is on that carriageway then: the two would be one.
            if any(same_way(m, w) and abs((m["start"] - w["start"]).total_seconds()) < 12 * 3600 and near(m, w, 3000)
                   for versions in by_road[k[0]] for w in versions for m in made):
                continue
            mirrors[("other-carriageway",) + k] = made
            by_road[k[0]].append(made)
    feeds = {"autobahn": [], "atom": [], "datex": []}
    serial = 0
    for k, versions in list(events.items()) + list(mirrors.items()):
        event = "|".join(k)
        kind = "mirror" if k[0] == "other-carriageway" else "warning"
        # Which feeds report it: at least one; most events in two or three.
        chosen = [f for f, p in (("autobahn", 0.7), ("atom", 0.6), ("datex", 0.6)) if rnd.random() < p] or [rnd.choice(list(feeds))]
        base = rnd.randrange(len(versions))
        if args.every_feed:
            chosen = list(feeds)
        for feed in chosen:
            serial += 1
            # The warning as it stood when the feeds were read: mostly the same version in
            # every feed, now and then the one scraped before or after.
            at = base if rnd.random() < 0.75 else min(len(versions) - 1, max(0, base + rnd.choice([-1, 1])))
            v = versions[at]
            if feed == "autobahn":
                rid, published = v["id"], v["start"]
            elif feed == "atom":
                rid, published = f"pol-{serial:06d}", v["start"] + timedelta(minutes=rnd.randint(0, 12))
            else:
                rid, published = f"DE-VIZ-{serial:06d}", v["start"] + timedelta(minutes=rnd.randint(0, 15))
            if feed != "autobahn" and rnd.random() < args.late:
                # Told late: the time of this feed's word on it, an hour or two into the event.
                published = v["start"] + timedelta(minutes=rnd.randint(30, 150))
            feeds[feed].append({"id": rid, "version": v, "published": published})
            truth.append((feed, rid, event, kind))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "autobahn.json"), "w", encoding="utf-8") as f:
        f.write(autobahn_json(feeds["autobahn"]))
    with open(os.path.join(args.out, "police.atom"), "w", encoding="utf-8") as f:
        f.write(atom_feed(feeds["atom"], rnd, positions=args.atom_positions))
    with open(os.path.join(args.out, "situations.datex2.xml"), "w", encoding="utf-8") as f:
        f.write(datex_feed(feeds["datex"], rnd, args.move))
    return {f: len(r) for f, r in feeds.items()}, len(events), len(mirrors)


# --- the US case ---

SHORT_DIRECTION = {"northbound": "NB", "southbound": "SB", "eastbound": "EB", "westbound": "WB"}


def us_case(args, rnd, truth):
    with open(CDOT, encoding="utf-8") as f:
        doc = json.load(f)
    features = [x for x in doc["features"] if args.fold == "all" or fold_of(x["properties"]["core_details"]["road_names"][0]) == args.fold]
    doc["features"] = features
    events = []
    for x in features:
        core = x["properties"]["core_details"]
        truth.append(("wzdx", x["id"], "cdot|" + x["id"], "work-zone"))
        if rnd.random() < 0.8:
            rid = f"cotrip/{len(events) + 1:05d}"
            coords = x["geometry"]["coordinates"]
            moved_line = [list(reversed(moved(c[1], c[0], rnd, args.move))) for c in coords]
            road = core["road_names"][0].replace("-", " ")
            direction = core.get("direction", "")
            start = datetime.fromisoformat(x["properties"]["start_date"].replace("Z", "+00:00")) + timedelta(minutes=rnd.randint(-30, 30))
            end = x["properties"].get("end_date")
            cross = x["properties"].get("beginning_cross_street")
            headline = f"Road work on {road} {SHORT_DIRECTION.get(direction, direction)}" + (f" near {cross}" if cross else "")
            geography = {"type": "LineString", "coordinates": moved_line} if rnd.random() < 0.6 else {"type": "Point", "coordinates": moved_line[0]}
            interval = f"{iso(start)}/" + (end or "")
            events.append({
                "id": rid, "status": "ACTIVE", "event_type": "CONSTRUCTION", "severity": "MODERATE", "headline": headline,
                "created": iso(start), "updated": core.get("update_date") or iso(start),
                "roads": [{"name": road, "direction": SHORT_DIRECTION.get(direction, direction)}],
                "schedule": {"intervals": [interval]}, "geography": geography,
            })
            truth.append(("open511", rid, "cdot|" + x["id"], "work-zone"))
    with open(os.path.join(args.out, "cdot.wzdx.geojson"), "w", encoding="utf-8") as f:
        json.dump(doc, f)
    with open(os.path.join(args.out, "cotrip.open511.json"), "w", encoding="utf-8") as f:
        json.dump({"meta": {"version": "v1"}, "events": events}, f, indent=0)
    return len(features), len(events)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fold", choices=["tune", "holdout", "all"], required=True, help="which roads: tune, holdout (kept aside), all (benchmarks)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--first-day", default="2025-05-20", help="the first day of warnings taken (default 2025-05-20)")
    ap.add_argument("--day-count", type=int, default=4, help="how many days from --first-day (default 4)")
    ap.add_argument("--days", help="or a list of days (YYYY-MM-DD,...)")
    ap.add_argument("--events", type=int, default=4000, help="distinct warnings taken at most (default 4000)")
    ap.add_argument("--opposite", type=float, default=0.1, help="share of warnings given a mirror on the other carriageway")
    ap.add_argument("--move", type=float, default=400.0, help="metres a DATEX II / Open511 point moves at most (default 400)")
    ap.add_argument("--late", type=float, default=0.15, help="share of Atom and DATEX II reports published 30 to 150 minutes into the event")
    ap.add_argument("--every-feed", action="store_true", help="every warning in every German feed (the ingest benchmark)")
    ap.add_argument("--atom-positions", action="store_true", help="positions in the Atom feed's weblinks (no geocoding)")
    ap.add_argument("--no-us", action="store_true", help="leave out the US case")
    ap.add_argument("--keep-ambiguous", action="store_true",
                    help="take warnings at one place and time too (benchmarks: as many as --events; their truth is unclear)")
    args = ap.parse_args()
    rnd = random.Random(f"{args.seed}-{args.fold}")
    truth = []
    counts, events, mirrors = german_case(args, rnd, truth)
    features, us_events = (0, 0) if args.no_us else us_case(args, rnd, truth)
    with open(os.path.join(args.out, "truth.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["feed", "id", "event", "kind"])
        w.writerows(truth)
    print(f"{args.out}: {events} warnings (+{mirrors} on the other carriageway) as {counts}; "
          f"{features} CDOT work zones, {us_events} of them in Open511; {len(truth)} reports", file=sys.stderr)


if __name__ == "__main__":
    main()
