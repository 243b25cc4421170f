"""Helpers that scripts/geocode-folds.py and scripts/measure-accuracy.py share: the OSM extract
areas, the distance used for error buckets, and cutting an autobahn2atom.py Atom feed down."""
import math

# The areas of the OSM extracts ../shared/data/osm (Heidelberg/Mannheim and north of Bayreuth):
# (south, west, north, east).
EXTRACT_BOXES = [(49.30, 8.45, 49.60, 8.80), (49.90, 11.45, 50.15, 11.75)]


def inside_extracts(row):
    """A truth row (lat, lon columns) inside one of the OSM extracts."""
    return any(s <= float(row["lat"]) <= n and w <= float(row["lon"]) <= e for s, w, n, e in EXTRACT_BOXES)


def geodesic_m(lat1, lon1, lat2, lon2):
    """Haversine on the WGS84 mean radius: fine for error buckets of 1 km and up."""
    r = 6371008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(min(1, a)))


def filter_atom(feed, keep, out_path):
    """Writes the entries of an Atom feed whose <id> is in `keep` (the feeds of autobahn2atom.py)."""
    with open(feed, encoding="utf-8") as f:
        text = f.read()
    head, _, body = text.partition("  <entry>")
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(head)
        for entry in ("  <entry>" + body).split("  <entry>")[1:]:
            ident = entry.split("<id>", 1)[1].split("</id>", 1)[0]
            if ident in keep:
                out.write("  <entry>" + entry.replace("</feed>\n", ""))
        out.write("</feed>\n")
