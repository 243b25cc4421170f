#!/usr/bin/env python3
"""Write the bundled sample feeds in data/sample/ (run from anywhere; output is deterministic).

The incidents are written for this project in the shape of the freiefahrt.info Atom feed
(docs/architecture.md, feed fields); their positions are approximate junction positions typed in below, carried
in the weblinks as lat/lon query items, as the original feed did. Nothing is copied from ../shared.

  scripts/make-sample-feeds.py            # writes data/sample/lmst.de_DE.xml, incidents.rss and titles.xml,
                                          # and the standards' samples situations.datex2.xml.gz, workzones.wzdx.geojson, events.open511.json

titles.xml carries no positions at all (no lat/lon in its links): its incidents are placed by
geocoding their road titles, which is what the demo shows.
"""
import gzip
import json
import os
from datetime import datetime, timedelta, timezone
from xml.sax.saxutils import escape, quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "sample")

# (id, title, summary, lat, lon, minutes before the feed time, hours valid)
INCIDENTS = [
    ("83FBBF15-B187-452a-B66E-E3B4FCC408D2", "A4 : Koeln - Olpe",
     "Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen! "
     "Nicht ueberholen! Fahren Sie bitte äußerst rechts!", 50.9742, 7.9405, 2, 2),
    ("tg-sample-0002", "A3 : Koeln - Frankfurt",
     "Zwischen AK Koeln-Ost und AS Koeln-Dellbrueck Unfall, linker Fahrstreifen blockiert, Stau 3 km", 50.9660, 7.0510, 10, 3),
    ("tg-sample-0003", "A1 : Dortmund - Koeln",
     "Zwischen AS Burscheid und AK Leverkusen Baustelle, Fahrbahnverengung auf zwei Fahrstreifen", 51.0810, 7.0790, 60, 240),
    ("tg-sample-0004", "A57 : Krefeld - Koeln",
     "Zwischen AS Dormagen und AS Koeln-Worringen stockender Verkehr", 51.0660, 6.8380, 5, 1),
    ("tg-sample-0005", "A59 : Duisburg - Bonn",
     "Zwischen AD Koeln-Porz und AS Koeln-Gremberghoven Gegenstaende auf der Fahrbahn", 50.8980, 7.0560, 15, 2),
    ("tg-sample-0006", "A555 : Koeln - Bonn",
     "Zwischen AS Wesseling und AS Bornheim Stau 2 km, Zeitverlust 10 Minuten", 50.8050, 6.9830, 8, 1),
    ("tg-sample-0007", "A4 : Aachen - Koeln",
     "Zwischen AS Kerpen und AK Koeln-West Vollsperrung wegen Bergungsarbeiten", 50.8960, 6.7910, 30, 4),
    ("tg-sample-0008", "A45 : Dortmund - Giessen",
     "Zwischen AS Olpe-Sued und AS Wenden Baustelle, Tempolimit 60 km/h", 50.9860, 7.8670, 120, 720),
    ("tg-sample-0009", "A40 : Duisburg - Essen",
     "Zwischen AS Muelheim-Winkhausen und AS Essen-Frohnhausen Stillstand", 51.4380, 6.9380, 3, 1),
    ("tg-sample-0010", "A8 : Stuttgart - Muenchen",
     "Zwischen AS Aichelberg und AS Mühlhausen Gefahr durch Glatteis", 48.6270, 9.5930, 20, 3),
    ("tg-sample-0011", "A9 : Nuernberg - Berlin",
     "Zwischen AS Bayreuth-Nord und AS Bad Berneck/Himmelkron Unfall, rechter Fahrstreifen gesperrt", 50.0150, 11.6060, 12, 2),
    ("tg-sample-0012", "A5 : Karlsruhe - Frankfurt",
     "Zwischen AS Heidelberg/Dossenheim und AS Ladenburg Stau 4 km", 49.4490, 8.6460, 25, 2),
]

# Title-only messages (id, title, summary, minutes before the feed time, hours valid): the
# junctions are named after towns the offline gazetteer knows, as most German junctions are.
TITLE_ONLY = [
    ("tg-title-0001", "A45 : Dortmund - Giessen", "Zwischen AS Luedenscheid-Nord und AS Luedenscheid Stau 3 km", 4, 2),
    ("tg-title-0002", "A4 : Olpe - Koeln", "Zwischen AS Gummersbach und AS Engelskirchen Unfall, rechter Fahrstreifen blockiert", 9, 2),
    ("tg-title-0003", "A1 : Koeln - Dortmund", "Zwischen AS Wermelskirchen und AS Remscheid Baustelle", 90, 240),
    ("tg-title-0004", "A61 : Koblenz - Venlo", "Zwischen AS Meckenheim und AK Bliesheim stockender Verkehr", 6, 1),
    ("tg-title-0005", "A3 : Frankfurt - Koeln", "Zwischen AS Siegburg und AS Lohmar Gegenstaende auf der Fahrbahn", 14, 2),
    ("tg-title-0006", "A44 : Kassel - Dortmund", "Zwischen AS Soest und AS Werl Stillstand", 2, 1),
]

FEED_TIME = datetime(2025, 5, 19, 6, 0, 0, tzinfo=timezone.utc)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def atom_feed(head, entries):
    """An Atom document: the feed's own elements (after <updated>), then one <entry> per item of
    `entries`, each a list of its child lines."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             '<feed xmlns="http://www.w3.org/2005/Atom">',
             f'  <updated>{FEED_TIME.strftime("%Y-%m-%dT%H:%M:%S.000Z")}</updated>'] + head
    for children in entries:
        lines += ["  <entry>"] + children + ["  </entry>"]
    lines.append("</feed>")
    return "\n".join(lines) + "\n"


def entry_head(ident, title, age, hours):
    """The children every sample entry starts with: times, title, id."""
    updated = FEED_TIME - timedelta(minutes=age)
    return [f"    <updated>{iso(updated)}</updated>",
            f"    <expires>{iso(updated + timedelta(hours=hours))}</expires>",
            f"    <title>{escape(title)}</title>",
            f"    <id>https://traffic.example/?id={ident}</id>"]


def atom():
    entries = []
    for ident, title, summary, lat, lon, age, hours in INCIDENTS:
        href = f"https://traffic.example/?id={ident}&lat={lat:.4f}&lon={lon:.4f}"
        road = title.split(" ")[0]
        entries.append(entry_head(ident, title, age, hours) + [
            f'    <link type="text/html" rel="alternate" href={quoteattr(href)}/>',
            f"    <summary>{escape(summary)}</summary>",
            "    <rights>(c) trafficgeo sample data, CC0</rights>",
            '    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><div>'
            f'<img src="https://traffic.example/icons/{road}.png"/></div>'
            f"{escape(title)}<br/>{escape(summary)}</div></content>",
        ])
    return atom_feed(['  <link href="https://traffic.example/lmst.de_DE.xml" rel="self"/>',
                      '  <title>Aktuelle Verkehrslage fuer Deutschland (trafficgeo sample)</title>',
                      '  <id>https://traffic.example/lmst.de_DE.xml</id>'], entries)


def rss():
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             '<rss version="2.0" xmlns:georss="http://www.georss.org/georss">',
             "  <channel>",
             "    <title>trafficgeo sample (RSS with GeoRSS)</title>",
             "    <link>https://traffic.example/</link>",
             "    <description>The Atom sample's incidents as RSS 2.0 items</description>"]
    for ident, title, summary, lat, lon, age, hours in INCIDENTS:
        updated = FEED_TIME - timedelta(minutes=age)
        lines += [
            "    <item>",
            f"      <title>{escape(title)}</title>",
            f"      <link>https://traffic.example/?id={ident}</link>",
            f"      <guid isPermaLink=\"false\">{ident}</guid>",
            f"      <description>{escape(summary)}</description>",
            f"      <pubDate>{updated.strftime('%a, %d %b %Y %H:%M:%S +0000')}</pubDate>",
            f"      <georss:point>{lat:.4f} {lon:.4f}</georss:point>",
            "    </item>",
        ]
    lines += ["  </channel>", "</rss>"]
    return "\n".join(lines) + "\n"


def titles_only():
    entries = [entry_head(ident, title, age, hours) + [f"    <summary>{escape(summary)}</summary>"]
               for ident, title, summary, age, hours in TITLE_ONLY]
    return atom_feed(['  <title>Verkehrsmeldungen ohne Koordinaten (trafficgeo sample)</title>',
                      '  <id>https://traffic.example/titles.xml</id>'], entries)


# The road authorities' standards (docs/feeds.md): some of the same incidents as a DATEX II v2
# situation publication (gzip-compressed, as national feeds are), the roadworks as WZDx 4.2 work
# zones, and a few as Open511 events. (id, DATEX II record type and subtype element, category word)
DATEX_RECORDS = {
    "83FBBF15-B187-452a-B66E-E3B4FCC408D2": [("VehicleObstruction", "<vehicleObstructionType>vehicleOnWrongCarriageway</vehicleObstructionType>")],
    "tg-sample-0002": [("Accident", "<accidentType>collision</accidentType>"),
                       ("RoadOrCarriagewayOrLaneManagement", "<roadOrCarriagewayOrLaneManagementType>laneClosures</roadOrCarriagewayOrLaneManagementType>")],
    "tg-sample-0003": [("MaintenanceWorks", "<roadMaintenanceType>roadworks</roadMaintenanceType>"),
                       ("SpeedManagement", "<speedManagementType>speedRestrictionInOperation</speedManagementType><temporarySpeedLimit>60</temporarySpeedLimit>")],
    "tg-sample-0006": [("AbnormalTraffic", "<abnormalTrafficType>queuingTraffic</abnormalTrafficType>")],
    "tg-sample-0007": [("RoadOrCarriagewayOrLaneManagement", "<roadOrCarriagewayOrLaneManagementType>roadClosed</roadOrCarriagewayOrLaneManagementType>"),
                       ("ReroutingManagement", "<reroutingManagementType>followDiversionSigns</reroutingManagementType>")],
}
ROADWORKS = ["tg-sample-0003", "tg-sample-0008"]


def datex2():
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2">',
           '<exchange><supplierIdentification><country>de</country><nationalIdentifier>trafficgeo-sample</nationalIdentifier></supplierIdentification></exchange>',
           '<payloadPublication xsi:type="SituationPublication" lang="de">',
           f"<publicationTime>{iso(FEED_TIME)}</publicationTime>",
           "<publicationCreator><country>de</country><nationalIdentifier>trafficgeo-sample</nationalIdentifier></publicationCreator>"]
    for ident, title, summary, lat, lon, age, hours in INCIDENTS:
        if ident not in DATEX_RECORDS:
            continue
        updated = FEED_TIME - timedelta(minutes=age)
        road = title.split(" ")[0]
        out.append(f'<situation id="{ident}" version="1"><overallSeverity>{"highest" if age < 5 else "medium"}</overallSeverity>'
                   f"<situationVersionTime>{iso(updated)}</situationVersionTime>")
        for k, (kind, subtype) in enumerate(DATEX_RECORDS[ident]):
            # Roadworks run open-ended here (still on); the others end when the sample's entries expire.
            end = "" if ident in ROADWORKS else f"<overallEndTime>{iso(updated + timedelta(hours=hours))}</overallEndTime>"
            if kind == "MaintenanceWorks" or kind == "SpeedManagement":
                location = ('<groupOfLocations xsi:type="Linear"><linearExtension><linearByCoordinatesExtension>'
                            f"<linearCoordinatesStartPoint><pointCoordinates><latitude>{lat:.4f}</latitude><longitude>{lon:.4f}</longitude></pointCoordinates></linearCoordinatesStartPoint>"
                            f"<linearCoordinatesEndPoint><pointCoordinates><latitude>{lat + 0.03:.4f}</latitude><longitude>{lon - 0.01:.4f}</longitude></pointCoordinates></linearCoordinatesEndPoint>"
                            "</linearByCoordinatesExtension></linearExtension>"
                            f"<locationForDisplay><latitude>{lat + 0.015:.4f}</latitude><longitude>{lon - 0.005:.4f}</longitude></locationForDisplay></groupOfLocations>")
            else:
                location = ('<groupOfLocations xsi:type="Point"><pointByCoordinates><pointCoordinates>'
                            f"<latitude>{lat:.4f}</latitude><longitude>{lon:.4f}</longitude></pointCoordinates></pointByCoordinates></groupOfLocations>")
            ends = title.split(" : ")[1].split(" - ")
            comment = (f'<generalPublicComment><comment><values><value lang="de">{road} {escape(ends[0])} Richtung {escape(ends[1])}: {escape(summary)}</value></values></comment>'
                       "<commentType>description</commentType></generalPublicComment>") if k == 0 else ""
            out.append(f'<situationRecord xsi:type="{kind}" id="{ident}-{k + 1}" version="1">'
                       f"<situationRecordCreationTime>{iso(updated)}</situationRecordCreationTime>"
                       f"<situationRecordVersionTime>{iso(updated)}</situationRecordVersionTime>"
                       "<probabilityOfOccurrence>certain</probabilityOfOccurrence>"
                       f"<validity><validityStatus>definedByValidityTimeSpec</validityStatus><validityTimeSpecification>"
                       f"<overallStartTime>{iso(updated)}</overallStartTime>{end}</validityTimeSpecification></validity>"
                       "<impact><numberOfLanesRestricted>1</numberOfLanesRestricted>"
                       + ("<delays><delayTimeValue>600</delayTimeValue></delays>" if "Stau" in summary else "") + "</impact>"
                       + f"{comment}{subtype}{location}</situationRecord>")
        out.append("</situation>")
    out += ["</payloadPublication>", "</d2LogicalModel>"]
    return "\n".join(out) + "\n"


def wzdx():
    features = []
    for ident, title, summary, lat, lon, age, hours in INCIDENTS:
        if ident not in ROADWORKS:
            continue
        updated = FEED_TIME - timedelta(minutes=age)
        road, direction = title.split(" ")[0], "both"
        features.append({
            "id": ident, "type": "Feature",
            "properties": {
                "core_details": {"event_type": "work-zone", "data_source_id": "trafficgeo-sample", "road_names": [road],
                                 "direction": direction, "description": summary, "update_date": iso(updated)},
                "start_date": iso(updated), "end_date": iso(updated + timedelta(days=365 * 100)),
                "is_start_date_verified": True, "is_end_date_verified": False, "is_start_position_verified": True,
                "is_end_position_verified": True, "location_method": "channel-device-method", "vehicle_impact": "some-lanes-closed",
                "lanes": [{"order": 1, "type": "general", "status": "open"}, {"order": 2, "type": "general", "status": "closed"}],
            },
            "geometry": {"type": "LineString", "coordinates": [[lon, lat], [round(lon - 0.01, 4), round(lat + 0.03, 4)]]},
        })
    return json.dumps({"feed_info": {"publisher": "trafficgeo sample", "version": "4.2", "license": "https://creativecommons.org/publicdomain/zero/1.0/",
                                     "update_date": iso(FEED_TIME), "data_sources": [{"data_source_id": "trafficgeo-sample", "organization_name": "trafficgeo"}]},
                       "type": "FeatureCollection", "features": features}, indent=1, ensure_ascii=False) + "\n"


def open511():
    kinds = {"tg-sample-0002": ("INCIDENT", ["ACCIDENT"]), "tg-sample-0005": ("INCIDENT", ["HAZARD"]), "tg-sample-0008": ("CONSTRUCTION", []),
             "tg-sample-0010": ("WEATHER_CONDITION", [])}
    events = []
    for ident, title, summary, lat, lon, age, hours in INCIDENTS:
        if ident not in kinds:
            continue
        updated = FEED_TIME - timedelta(minutes=age)
        road, ends = title.split(" : ")[0], title.split(" : ")[1]
        kind, subtypes = kinds[ident]
        event = {"id": f"trafficgeo.example/{ident}", "status": "ACTIVE" if kind == "CONSTRUCTION" else "ARCHIVED",
                 "headline": f"{title}", "description": summary, "event_type": kind, "severity": "MAJOR" if subtypes else "MINOR",
                 "created": iso(updated), "updated": iso(updated),
                 "roads": [{"name": road, "from": ends.split(" - ")[0], "to": ends.split(" - ")[1], "direction": "BOTH"}],
                 "schedule": {"intervals": [f"{iso(updated)}/" if kind == "CONSTRUCTION" else f"{iso(updated)}/{iso(updated + timedelta(hours=hours))}"]},
                 "geography": {"type": "Point", "coordinates": [lon, lat]}}
        if subtypes:
            event["event_subtypes"] = subtypes
        events.append(event)
    return json.dumps({"events": events, "pagination": {"offset": 0}, "meta": {"version": "v1"}}, indent=1, ensure_ascii=False) + "\n"


# A drive out of Köln on the A3 towards Frankfurt, for `trafficgeo along` in the README: positions
# along the motorway typed by hand, rounded (lat, lon).
A3_DRIVE = [(50.9780, 7.0390), (50.9530, 7.0950), (50.9190, 7.1390), (50.8760, 7.1690), (50.8070, 7.2240),
            (50.7400, 7.3230), (50.6640, 7.4120), (50.5760, 7.5420), (50.4720, 7.7300), (50.4340, 7.8290)]


def gpx_route():
    points = "\n".join(f'    <trkpt lat="{lat:.4f}" lon="{lon:.4f}"/>' for lat, lon in A3_DRIVE)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="trafficgeo scripts/make-sample-feeds.py" xmlns="http://www.topografix.com/GPX/1/1">
  <trk><name>Köln-Mülheim – Siegburg – Montabaur (A3)</name><trkseg>
{points}
  </trkseg></trk>
</gpx>
"""


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, text in [("lmst.de_DE.xml", atom()), ("incidents.rss", rss()), ("titles.xml", titles_only()),
                       ("workzones.wzdx.geojson", wzdx()), ("events.open511.json", open511())]:
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote data/sample/{name}")
    # mtime 0: the same bytes on every run.
    with open(os.path.join(OUT, "situations.datex2.xml.gz"), "wb") as raw:
        with gzip.GzipFile(filename="situations.datex2.xml", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(datex2().encode("utf-8"))
    print("wrote data/sample/situations.datex2.xml.gz")
    # A route, not a feed: beside the samples, so that a test ingesting every sample skips it.
    routes = os.path.join(OUT, "..", "routes")
    os.makedirs(routes, exist_ok=True)
    with open(os.path.join(routes, "koeln-a3.gpx"), "w", encoding="utf-8") as f:
        f.write(gpx_route())
    print("wrote data/routes/koeln-a3.gpx")


if __name__ == "__main__":
    main()
