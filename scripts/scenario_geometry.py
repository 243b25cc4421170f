"""Geometry on the sphere for scripts/make-conflation-scenario.py: metres are enough for moving
points and judging which warnings are near one another."""
import math

EARTH = 6371008.8


def offset(lat, lon, bearing_deg, metres):
    d = metres / EARTH
    b = math.radians(bearing_deg)
    p1, l1 = math.radians(lat), math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(p2), (math.degrees(l2) + 540) % 360 - 180


def bearing(a, b):
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dl = math.radians(b[1] - a[1])
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(y, x)) + 360) % 360


def distance(a, b):
    p1, p2 = math.radians(a[0]), math.radians(b[0])
    dp, dl = p2 - p1, math.radians(b[1] - a[1])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH * math.asin(math.sqrt(h))


def moved(lat, lon, rnd, most):
    return offset(lat, lon, rnd.uniform(0, 360), rnd.uniform(0, most))


def tpeg_direction(b):
    return ["northBound", "eastBound", "southBound", "westBound"][int(((b + 45) % 360) // 90)]


def point_to_line(p, line):
    """Metres from p to the line between two points (flat at this scale)."""
    (la, lo), (lb, lob) = line
    k = math.cos(math.radians(p[0])) * 111_195
    ax, ay, bx, by, px, py = lo * k, la * 111_195, lob * k, lb * 111_195, p[1] * k, p[0] * 111_195
    dx, dy = bx - ax, by - ay
    t = 0 if dx == dy == 0 else max(0, min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def near(v, w, metres):
    """Whether two warnings' extents (lines from start to end) come within `metres` of each other."""
    a = ((v["extent"][0], v["extent"][1]), (v["extent"][2], v["extent"][3]))
    b = ((w["extent"][0], w["extent"][1]), (w["extent"][2], w["extent"][3]))
    return min(point_to_line(p, b) for p in a + ((v["lat"], v["lon"]),)) < metres or min(point_to_line(p, a) for p in b) < metres
