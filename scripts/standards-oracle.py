#!/usr/bin/env python3
"""What trafficgeo must make of an official feed, read independently of its Swift readers.

    scripts/standards-oracle.py FILE [--now ISO] [--tmc-table DIR]   # one JSON object per incident

Reads DATEX II (XML: v1/v2/v3, SOAP; v3 JSON is not read here), WZDx and Open511 (JSON, XML)
with the Python standard library and prints, per incident, the id and what the tests compare:
position (lat, lon; null without one), category, valid_from, expires, ended. The rules are those
docs/feeds.md states; the code is written again here, not shared, so that a mistake in one shows
as a difference. Used by Tests/TrafficGeoTests/CLI/StandardsFeedTests.swift.
"""
import datetime as dt
import gzip
import json
import sys
import xml.etree.ElementTree as ET

XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"


def local(tag):
    return tag.rsplit("}", 1)[-1].split(":")[-1]


def parse_time(text, zone=None):
    """An ISO 8601 time; one without an offset is read in `zone` (UTC when none)."""
    if not text:
        return None
    t = text.strip().replace("Z", "+00:00")
    try:
        d = dt.datetime.fromisoformat(t)
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=zone or dt.timezone.utc)
    return d


def iso(d):
    return None if d is None else d.astimezone(dt.timezone.utc).timestamp()


# --- DATEX II -------------------------------------------------------------------------------

RECORD_CATEGORY = {
    "Accident": "accident", "AnimalPresenceObstruction": "obstacle", "EnvironmentalObstruction": "obstacle",
    "GeneralObstruction": "obstacle", "InfrastructureDamageObstruction": "obstacle",
    "MaintenanceWorks": "roadworks", "ConstructionWorks": "roadworks", "SpeedManagement": "restriction",
    "GeneralNetworkManagement": "restriction", "AuthorityOperation": "restriction", "ReroutingManagement": "detour",
    "WinterDrivingManagement": "weather", "PoorEnvironmentConditions": "weather", "WeatherRelatedRoadConditions": "weather",
    "NonWeatherRelatedRoadConditions": "danger", "DisturbanceActivity": "danger", "EquipmentOrSystemFault": "danger",
    "PublicEvent": "event",
}
CAUSE_CATEGORY = {"accident": "accident", "roadMaintenance": "roadworks", "obstruction": "obstacle", "poorWeather": "weather",
                  "congestion": "queue", "publicEvent": "event", "equipmentFailure": "danger"}
ORDER = ["wrong-way driver", "accident", "obstacle", "danger", "weather", "roadworks", "event", "standstill", "queue",
         "slow traffic", "closure", "detour", "restriction", "other"]


def first_text(element, name):
    for e in element.iter():
        if local(e.tag) == name and e.text and e.text.strip():
            return e.text.strip()
    return None


def record_category(record):
    kind = local(record.get(XSI_TYPE, "SituationRecord"))
    if kind == "VehicleObstruction":
        return "wrong-way driver" if "wrong" in (first_text(record, "vehicleObstructionType") or "").lower() else "obstacle"
    if kind == "AbnormalTraffic":
        t = first_text(record, "abnormalTrafficType") or ""
        return {"stationaryTraffic": "standstill", "slowTraffic": "slow traffic", "heavyTraffic": "slow traffic"}.get(t, "queue")
    if kind == "RoadOrCarriagewayOrLaneManagement":
        t = (first_text(record, "roadOrCarriagewayOrLaneManagementType") or "").lower()
        return "closure" if "closed" in t or "closure" in t else "restriction"
    return RECORD_CATEGORY.get(kind, "other")


def pos_list(text, srs):
    values = [float(v) for v in text.split()]
    pairs = list(zip(values[0::2], values[1::2]))
    lon_first = srs is not None and ("crs84" in srs.lower() or "epsg.xml#" in srs.lower())
    if not lon_first and any(abs(a) > 90 for a, _ in pairs):
        lon_first = True
    return [(b, a) if lon_first else (a, b) for a, b in pairs]


def record_location(record, parents):
    point = start = display = line = None
    for e in record.iter():
        name = local(e.tag)
        if name in ("pointCoordinates", "locationForDisplay", "coordinatesForDisplay"):
            lat, lon = first_text(e, "latitude"), first_text(e, "longitude")
            if lat is None or lon is None:
                continue
            c = (float(lat), float(lon))
            if c == (0.0, 0.0):
                continue
            ancestors = set()
            p = parents.get(e)
            while p is not None and p is not record:
                ancestors.add(local(p.tag))
                p = parents.get(p)
            if name != "pointCoordinates":
                display = display or c
            elif ancestors & {"linearCoordinatesStartPoint", "from"}:
                start = start or c
            elif ancestors & {"linearCoordinatesEndPoint", "to"}:
                pass
            else:
                point = point or c
        elif name == "posList" and line is None and e.text:
            srs = None
            p = e
            while p is not None and srs is None:
                srs = p.get("srsName")
                p = parents.get(p)
            line = pos_list(e.text, srs)
    return point or start or (line[0] if line else None) or display


def datex(path, now):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        root = ET.parse(f).getroot()
    parents = {c: p for p in root.iter() for c in p}
    country = None
    for e in root.iter():
        if local(e.tag) == "situation":
            break
        if local(e.tag) == "country" and e.text and len(e.text.strip()) == 2:
            country = e.text.strip().lower()
            break
    for situation in root.iter():
        if local(situation.tag) != "situation":
            continue
        records = [e for e in situation.iter() if local(e.tag) == "situationRecord"]
        sid = situation.get("id") or (records[0].get("id") if records else None)
        if not records or not sid:
            continue
        position = None
        for r in records:
            position = record_location(r, parents)
            if position:
                break
        categories = [record_category(r) for r in records]
        category = min(categories, key=ORDER.index)
        cause = first_text(situation, "causeType")
        if ORDER.index(category) >= ORDER.index("closure") and cause in CAUSE_CATEGORY:
            category = CAUSE_CATEGORY[cause]
        starts, ends, over = [], [], []
        for r in records:
            validity = next((e for e in r.iter() if local(e.tag) == "validity"), None)
            start = parse_time(first_text(validity, "overallStartTime")) if validity is not None else None
            end = parse_time(first_text(validity, "overallEndTime")) if validity is not None else None
            status = (first_text(validity, "validityStatus") or "") if validity is not None else ""
            life = next((e for e in r.iter() if local(e.tag) == "lifeCycleManagement"), None)
            told = life is not None and ((first_text(life, "cancel") or "") == "true" or (first_text(life, "end") or "") == "true")
            if start:
                starts.append(start)
            ends.append(end)
            over.append(told or status == "suspended" or (end is not None and end <= now))
        # The roads the records name, as written (`roadNumber`); the publication's country.
        roads = list(dict.fromkeys(e.text.strip() for e in situation.iter() if local(e.tag) == "roadNumber" and e.text and e.text.strip()))
        yield {
            "id": sid, "position": position, "category": category, "roads": roads, "country": country,
            "valid_from": iso(min(starts)) if starts else None,
            "expires": iso(max(ends)) if ends and all(e is not None for e in ends) else None,
            "ended": all(over),
        }


# --- WZDx -----------------------------------------------------------------------------------

def wzdx(path, now):
    doc = json.load(open(path))
    for f in doc.get("features", []):
        p = f.get("properties", {})
        core = p.get("core_details", p)
        fid = f.get("id") or p.get("road_event_id")
        kind = core.get("event_type", "work-zone")
        g = f.get("geometry") or {}
        coords = g.get("coordinates")
        position = None
        if g.get("type") == "Point":
            position = (coords[1], coords[0])
        elif coords:
            position = (coords[0][1], coords[0][0])
        status = (p.get("event_status") or core.get("event_status") or "").lower()
        roads = [r for r in core.get("road_names", []) if isinstance(r, str) and r.strip()]
        yield {
            "id": fid, "position": position, "roads": roads,
            "category": {"detour": "detour", "restriction": "restriction"}.get(kind, "roadworks"),
            "valid_from": iso(parse_time(p.get("start_date"))), "expires": iso(parse_time(p.get("end_date"))),
            "ended": status in ("completed", "cancelled"),
        }


# --- Open511 --------------------------------------------------------------------------------

def open511_category(kind, subtypes):
    subs = {s.upper() for s in subtypes}
    for names, category in [({"ACCIDENT"}, "accident"), ({"WRONG_WAY_DRIVER"}, "wrong-way driver"),
                            ({"SPILL", "OBSTRUCTION", "DEBRIS", "ANIMAL_ON_ROAD"}, "obstacle"),
                            ({"ROAD_CLOSED", "LANE_CLOSED", "CLOSED"}, "closure"), ({"DETOUR"}, "detour"),
                            ({"HAZARD", "FIRE", "SINKHOLE", "POTHOLE"}, "danger")]:
        if subs & names:
            return category
    return {"CONSTRUCTION": "roadworks", "SPECIAL_EVENT": "event", "WEATHER_CONDITION": "weather",
            "ROAD_CONDITION": "danger", "INCIDENT": "danger"}.get((kind or "").upper(), "other")


def open511_event(e):
    stamp = parse_time(e.get("updated") or e.get("created"))
    zone = None
    if stamp is not None and ((e.get("updated") or e.get("created") or "").strip()[-1:] in ("Z", "z") or
                              (e.get("updated") or e.get("created") or "")[-6:-5] in ("+", "-")):
        zone = stamp.tzinfo
    intervals = e.get("schedule", {}).get("intervals", [])
    # Schedule times are local to the jurisdiction: read in the offset of the event's own timestamps.
    starts = [parse_time(i.split("/")[0], zone) for i in intervals]
    ends = [parse_time(i.split("/")[1], zone) if "/" in i and i.split("/")[1] else None for i in intervals]
    g = e.get("geography") or {}
    coords = g.get("coordinates")
    position = None
    if g.get("type") == "Point":
        position = (coords[1], coords[0])
    elif g.get("type") in ("LineString", "MultiPoint") and coords:
        position = (coords[0][1], coords[0][0])
    return {
        "id": e["id"], "position": position, "category": open511_category(e.get("event_type"), e.get("event_subtypes", [])),
        "roads": [r["name"] for r in e.get("roads", []) if isinstance(r, dict) and r.get("name")],
        "valid_from": iso(min([s for s in starts if s], default=None)),
        "expires": iso(max(ends)) if ends and all(ends) else None,
        "ended": (e.get("status") or "").upper() == "ARCHIVED",
    }


def open511(path, now):
    text = open(path, "rb").read()
    if text.lstrip().startswith(b"<"):
        root = ET.fromstring(text)
        for ev in root.iter():
            if local(ev.tag) != "event":
                continue
            child = {local(c.tag): c for c in ev}
            e = {k: (child[k].text or "").strip() for k in ("id", "status", "event_type", "updated", "created") if k in child}
            e["event_subtypes"] = [s.text.strip() for s in ev.iter() if local(s.tag) == "event_subtype" and s.text]
            e["roads"] = [{"name": r.text.strip()} for road in ev.iter() if local(road.tag) == "road"
                          for r in road if local(r.tag) == "name" and r.text and r.text.strip()]
            e["schedule"] = {"intervals": [s.text.strip() for s in ev.iter() if local(s.tag) == "interval" and s.text]}
            for g in ev.iter():
                if local(g.tag) == "coordinates" and g.text:
                    lon, lat = g.text.split()[0].split(",")[:2]
                    e["geography"] = {"type": "Point", "coordinates": [float(lon), float(lat)]}
                    break
                if local(g.tag) == "pos" and g.text:
                    a, b = [float(v) for v in g.text.split()[:2]]
                    srs = next((p.get("srsName") for p in ev.iter() if p.get("srsName")), None)
                    lat_first = srs is not None and "4326" in srs and "epsg.xml#" not in srs.lower()
                    e["geography"] = {"type": "Point", "coordinates": [b, a] if lat_first else [a, b]}
                    break
            yield open511_event(e)
        return
    for e in json.loads(text).get("events", []):
        yield open511_event(e)


def main():
    args = sys.argv[1:]
    now = dt.datetime.now(dt.timezone.utc)
    if "--now" in args:
        i = args.index("--now")
        now = parse_time(args[i + 1])
        del args[i:i + 2]
    path = args[0]
    head = (gzip.open(path) if path.endswith(".gz") else open(path, "rb")).read(8192).lower()
    if b"datex2.eu" in head or b"d2logicalmodel" in head or b"messagecontainer" in head:
        reader = datex
    elif b"feed_info" in head or b"core_details" in head or b"road_event_id" in head:
        reader = wzdx
    else:
        reader = open511
    for incident in reader(path, now):
        print(json.dumps(incident))


if __name__ == "__main__":
    main()
