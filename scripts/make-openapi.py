#!/usr/bin/env python3
"""Writes Sources/TrafficGeoServe/OpenAPIDocument.swift: the OpenAPI 3.0 definition `trafficgeo
serve` answers /api with. Edit the definition here, run `python3 scripts/make-openapi.py`, commit
both. The parameters must say what ItemsQuery reads (ServeAPITests checks the names; schemathesis
in scripts/api-check checks the server against the whole document)."""
import json, os
def param(name, schema, desc, style=None, explode=None):
    p={"name":name,"in":"query","required":False,"description":desc,"schema":schema}
    if style: p["style"]=style
    if explode is not None: p["explode"]=explode
    return p
problem={"$ref":"#/components/responses/Problem"}
common={"400":problem,"414":problem,"500":problem}
P={
 "f": param("f",{"type":"string","enum":["json","html"]},"The response format: json (GeoJSON for features) or html (a page). Without it, a browser's Accept header picks HTML, anything else JSON."),
 "bbox": param("bbox",{"type":"array","minItems":4,"maxItems":6,"items":{"type":"number"}},"Only incidents inside this box: west,south,east,north in CRS84 degrees (edges included). west > east crosses the antimeridian. A 6-number box's heights are ignored.","form",False),
 "datetime": param("datetime",{"type":"string"},"An RFC 3339 instant: incidents in effect then (begun by t — the feed's own start, else the last update — t < expires, not ended, within its recurring schedule's days and hours if it has one). An interval start/end (.. for an open end): incidents updated within it."),
 "limit": param("limit",{"type":"integer","minimum":1,"maximum":10000,"default":10},"How many features a page holds (1 … 10000)."),
 "offset": param("offset",{"type":"integer","minimum":0,"default":0},"How many matching features to skip (the next and prev links set it)."),
 "lat": param("lat",{"type":"number","minimum":-90,"maximum":90},"Latitude of the point distances are measured from (with lon). Features then carry distance_m and bearing_deg and are sorted by distance."),
 "lon": param("lon",{"type":"number","minimum":-180,"maximum":180},"Longitude of the point distances are measured from (with lat)."),
 "radius": param("radius",{"type":"string","pattern":"^(0*[1-9][0-9]*(\\.[0-9]+)?|0*\\.[0-9]*[1-9][0-9]*|0+\\.[0-9]*[1-9][0-9]*)(m|km|mi)$"},"Only incidents within this distance of lat/lon (WGS84 geodesic, boundary included), with its unit: 500m, 25km, 3mi (a bare number is refused: it was taken for metres by people who meant kilometres); more than 0. Like `trafficgeo within`. Needs lat and lon."),
 "route": param("route",{"type":"string"},"Only incidents within buffer of this route, in the order a driver from its start meets them (features carry along_m, the metres driven to each, and distance_m, how far off the route it is). The route is a saved route's name (serve --route NAME=FILE), a WKT LINESTRING (lon lat, …) or a GeoJSON LineString. Like `trafficgeo along`. Not with bbox or lat/lon."),
 "buffer": param("buffer",{"type":"string","pattern":"^(0*[1-9][0-9]*(\\.[0-9]+)?|0*\\.[0-9]*[1-9][0-9]*|0+\\.[0-9]*[1-9][0-9]*)(m|km|mi)$","default":"2km"},"With route: how far from it an incident may be, with its unit: 500m, 2km, 1mi."),
 "geometry": param("geometry",{"type":"string","enum":["point","mixed"],"default":"point"},"point: every feature a Point (where the incident is, or its segment starts); mixed: a LineString along the road where the incident has a segment, else a Point (for maps). As the command line's --geometry."),
 "nearest": param("nearest",{"type":"integer","minimum":1,"maximum":10000},"Only the k incidents nearest to lat/lon, nearest first (exact geodesic distances; with radius, no farther). Like `trafficgeo near`. Not with bbox."),
 "road": param("road",{"type":"string"},"Only incidents on these roads (comma-separated; A4 = a4 = A 4 = BAB 4)."),
 "category": param("category",{"type":"string"},"Only incidents of these categories (comma-separated): wrong-way driver, accident, closure, obstacle, danger, roadworks, queue, slow traffic, standstill, weather, detour, restriction, event, other; German names such as Unfall or Baustelle too."),
 "q": param("q",{"type":"string"},"Only incidents whose title, summary or road contain every word (case, accents and umlauts folded: Koeln finds Köln)."),
 "active-at": param("active-at",{"type":"string"},"Only incidents in effect at this time (as datetime with an instant): 'now', 'today', an ISO 8601 time, or relative such as -2h."),
 "since": param("since",{"type":"string"},"Only incidents updated at or after this time: 'now', 'today', an ISO 8601 time, or relative such as -2h (as `--since` on the command line). Not with a datetime interval."),
 "until": param("until",{"type":"string"},"Only incidents updated before this time: 'now', 'today', an ISO 8601 time, or relative such as -2h (as `--until`). Not with a datetime interval."),
 "min-confidence": param("min-confidence",{"type":"number","minimum":0,"maximum":1},"Only incidents placed at least this surely (geocoded ones; positions a feed gave always pass)."),
 "precision": param("precision",{"type":"string"},"Only geocoded incidents of these precisions (comma-separated: junction, address, town, road, none); positions a feed gave always pass."),
 "reports": param("reports",{"type":"boolean"},"true: every report the feeds gave, each naming its event (the property event), instead of the events they make (one per real-world incident, however many feeds report it; the property reports lists them)."),
 "sortby": param("sortby",{"type":"string","pattern":"^\\+?(distance|updated|expires|title|severity)$"},"Order: distance (needs lat/lon; the default with them), updated (newest first), expires (soonest first), title, severity (most severe first). Ties keep the store order."),
 "unconfirmed-after": param("unconfirmed-after",{"type":"string","default":"7d"},"With active-at: a report that gives no end is no longer in effect once it has not been heard of for this long (not updated, not first read, not listed by a snapshot of its feed): a length of time such as 7d (the default), or never."),
 "filter": param("filter",{"type":"string"},"A CQL2 text filter (OGC API – Features Part 3) over the queryables (/collections/incidents/queryables): =, <>, <, <=, >, >=, AND, OR, NOT, IN, LIKE, BETWEEN, IS NULL and S_INTERSECTS(geometry, BBOX|POINT|POLYGON|MULTIPOLYGON), such as road = 'A3' AND severity >= 'high'. Each comparison means what the parameter of the same field means (road = 'A3' is road=A3); it is ANDed with the other parameters. A request target holds at most 8 KiB."),
 "filter-lang": param("filter-lang",{"type":"string","enum":["cql2-text"],"default":"cql2-text"},"The filter's language: cql2-text."),
 "filter-crs": param("filter-crs",{"type":"string","enum":["http://www.opengis.net/def/crs/OGC/1.3/CRS84"]},"The CRS of the filter's geometries: CRS84 (longitude first)."),
 "min-severity": param("min-severity",{"type":"string","enum":["lowest","low","medium","high","highest","none","minor","moderate","major","severe"]},"Only incidents at least this severe, on one scale the feeds' words map onto (minor = low, moderate = medium, major = high); those whose feed gives no severity are left out."),
}
items_params=[P[k] for k in ["bbox","datetime","limit","offset","lat","lon","radius","nearest","route","buffer","geometry","road","category","q","active-at","since","until","min-confidence","precision","min-severity","unconfirmed-after","reports","sortby","filter","filter-lang","filter-crs","f"]]
events_params=[P[k] for k in ["bbox","lat","lon","radius","road","category","q","min-confidence","precision","min-severity"]]+[
 {"name":"Last-Event-ID","in":"header","required":False,"description":"Resume after this event (the id of the last event received): the events recorded since are sent first.","schema":{"type":"string","pattern":"^[0-9]+$"}}]
def ok(ctype_schemas, desc):
    return {"description":desc,"content":{c:({"schema":s} if s else {}) for c,s in ctype_schemas}}
html={"type":"string"}
doc={
 "openapi":"3.0.3",
 "info":{"title":"trafficgeo","version":"1.0.0","description":"Road-traffic incidents as OGC API – Features (Part 1: Core, GeoJSON, HTML, OpenAPI 3.0), with nearest and within-radius searches and live updates (Server-Sent Events). All positions are CRS84 (longitude, latitude).","license":{"name":"Data: as its feeds license it"}},
 "servers":[{"url":"{{BASE}}"}],
 "paths":{
  "/":{"get":{"operationId":"getLandingPage","summary":"The landing page (JSON) or the map (HTML)","parameters":[P["f"]],"responses":dict({"200":ok([("application/json",{"$ref":"#/components/schemas/LandingPage"}),("text/html",html)],"The landing page: links to the API definition, conformance and the collections; in HTML, the map.")},**common)}},
  "/conformance":{"get":{"operationId":"getConformance","summary":"The conformance classes","parameters":[P["f"]],"responses":dict({"200":ok([("application/json",{"$ref":"#/components/schemas/Conformance"}),("text/html",html)],"The conformance classes this server implements.")},**common)}},
  "/api":{"get":{"operationId":"getAPI","summary":"This document","parameters":[P["f"]],"responses":dict({"200":ok([("application/vnd.oai.openapi+json;version=3.0",{"type":"object"}),("text/html",html)],"The OpenAPI 3.0 definition.")},**common)}},
  "/collections":{"get":{"operationId":"getCollections","summary":"The collections (one: incidents)","parameters":[P["f"]],"responses":dict({"200":ok([("application/json",{"$ref":"#/components/schemas/Collections"}),("text/html",html)],"The collections.")},**common)}},
  "/collections/incidents":{"get":{"operationId":"getIncidentsCollection","summary":"The incidents collection","parameters":[P["f"]],"responses":dict({"200":ok([("application/json",{"$ref":"#/components/schemas/Collection"}),("text/html",html)],"The collection's description.")},**common)}},
  "/collections/incidents/items":{"get":{"operationId":"getIncidents","summary":"Incidents: a box, a radius, the k nearest, filters, pages","parameters":items_params,
      "responses":dict({"200":dict(ok([("application/geo+json",{"$ref":"#/components/schemas/FeatureCollection"}),("text/html",html)],"A page of incidents, with numberMatched, numberReturned and next/prev links; in HTML, the map."),headers={"ETag":{"$ref":"#/components/headers/ETag"},"Cache-Control":{"$ref":"#/components/headers/CacheControl"}}),
                        "304":{"description":"Not modified: the answer has the ETag given in If-None-Match."},
                        "503":problem},**common)}},
  "/collections/incidents/items/{featureId}":{"get":{"operationId":"getIncident","summary":"One incident","parameters":[{"name":"featureId","in":"path","required":True,"description":"The incident's id in this store (a feature's id).","schema":{"type":"integer","format":"int64","minimum":1}},P["f"]],
      "responses":dict({"200":dict(ok([("application/geo+json",{"$ref":"#/components/schemas/Feature"}),("text/html",html)],"The incident."),headers={"ETag":{"$ref":"#/components/headers/ETag"}}),"304":{"description":"Not modified."},"404":problem},**common)}},
  "/collections/incidents/clusters":{"get":{"operationId":"getIncidentClusters","summary":"How many incidents a view holds, cell by cell","description":"For a map's view with more incidents than a page shows: a grid over bbox (cells, default 24x16), each non-empty cell a Point at the mean position of its incidents with their count; numberMatched is the whole view's. The filters are the items' own. The map page draws these when a view holds more than it lists.",
      "parameters":[dict(P["bbox"],required=True),param("cells",{"type":"string","pattern":"^[0-9]{1,2}[xX][0-9]{1,2}$","default":"24x16"},"The grid: COLUMNSxROWS, each 1 … 64.")]+[P[k] for k in ["datetime","road","category","q","active-at","since","until","min-confidence","precision","min-severity","unconfirmed-after","filter","filter-lang","filter-crs"]]+[dict(P["f"],schema={"type":"string","enum":["json"]})],
      "responses":dict({"200":dict(ok([("application/geo+json",{"$ref":"#/components/schemas/ClusterCollection"})],"The counted cells."),headers={"ETag":{"$ref":"#/components/headers/ETag"}}),"304":{"description":"Not modified."},"503":problem},**common)}},
  "/collections/incidents/queryables":{"get":{"operationId":"getIncidentQueryables","summary":"The properties a filter may name","description":"OGC API – Features Part 3: a JSON Schema of the properties a CQL2 filter may compare, each with what its comparisons mean.","parameters":[dict(P["f"],schema={"type":"string","enum":["json"]})],
      "responses":dict({"200":ok([("application/schema+json",{"type":"object"})],"The queryables as a JSON Schema.")},**common)}},
  "/collections/incidents/events":{"get":{"operationId":"getIncidentEvents","summary":"Live changes as Server-Sent Events","description":"Each event names its change (new, updated, ended, removed) in `event:`, carries the change-feed sequence number as `id:` and the incident as a GeoJSON Feature (removed: its id only) in `data:`. Only changes to incidents that match the conditions are sent; a heartbeat comment keeps idle streams open.","parameters":events_params,
      "responses":dict({"200":ok([("text/event-stream",{"type":"string"})],"An endless stream of events.")},**common)}},
 },
 "components":{
  "headers":{"ETag":{"description":"A tag of this answer: send it back in If-None-Match to get 304 when nothing changed.","schema":{"type":"string"}},
             "CacheControl":{"description":"Caching: revalidate with the ETag.","schema":{"type":"string"}}},
  "responses":{"Problem":{"description":"What was wrong and what to send instead (RFC 9457).","content":{"application/problem+json":{"schema":{"$ref":"#/components/schemas/Problem"}}}}},
  "schemas":{
   "ClusterCollection":{"type":"object","required":["type","features","numberMatched"],"properties":{"type":{"type":"string","enum":["FeatureCollection"]},"numberMatched":{"type":"integer"},"numberReturned":{"type":"integer"},
      "features":{"type":"array","items":{"type":"object","required":["type","geometry","properties"],"properties":{"type":{"type":"string"},"geometry":{"$ref":"#/components/schemas/Geometry"},"properties":{"type":"object","required":["count"],"properties":{"count":{"type":"integer","minimum":1}}}}}}}},
   "Problem":{"type":"object","required":["title","status","detail"],"properties":{"type":{"type":"string"},"title":{"type":"string"},"status":{"type":"integer"},"detail":{"type":"string"},"instance":{"type":"string"}}},
   "Link":{"type":"object","required":["href","rel"],"properties":{"href":{"type":"string"},"rel":{"type":"string"},"type":{"type":"string"},"title":{"type":"string"}}},
   "LandingPage":{"type":"object","required":["links"],"properties":{"title":{"type":"string"},"description":{"type":"string"},"links":{"type":"array","items":{"$ref":"#/components/schemas/Link"}}}},
   "Conformance":{"type":"object","required":["conformsTo"],"properties":{"conformsTo":{"type":"array","items":{"type":"string"}}}},
   "Collection":{"type":"object","required":["id","links"],"properties":{"id":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"itemType":{"type":"string"},"crs":{"type":"array","items":{"type":"string"}},"extent":{"type":"object"},"links":{"type":"array","items":{"$ref":"#/components/schemas/Link"}}}},
   "Collections":{"type":"object","required":["links","collections"],"properties":{"links":{"type":"array","items":{"$ref":"#/components/schemas/Link"}},"collections":{"type":"array","items":{"$ref":"#/components/schemas/Collection"}}}},
   "Geometry":{"type":"object","required":["type","coordinates"],"properties":{"type":{"type":"string","enum":["Point","LineString"]},"coordinates":{"type":"array"}}},
   "IncidentProperties":{"type":"object","required":["title","pinColor","source"],"properties":{
      "id":{"type":"string"},"title":{"type":"string"},"subtitle":{"type":"string"},"description":{"type":"string"},
      "pinColor":{"type":"string","enum":["red","purple","green"]},"marker-color":{"type":"string"},"marker-symbol":{"type":"string"},
      "distance_m":{"type":"number"},"bearing_deg":{"type":"number"},"along_m":{"type":"number","description":"Asked along a route: the metres driven from its start to this incident (distance_m is then how far off the route it is)."},"road":{"type":"string"},"category":{"type":"string"},
      "updated":{"type":"string","format":"date-time"},"expires":{"type":"string","format":"date-time"},"ended":{"type":"string","format":"date-time"},
      "lastHeard":{"type":"string","format":"date-time","description":"For an unconfirmed incident (no end given, not heard of within unconfirmed-after): when it was last heard of."},
      "first_seen":{"type":"string","format":"date-time"},"weblink":{"type":"string"},"source":{"type":"string"},
      "positionSource":{"type":"string"},"precision":{"type":"string"},"confidence":{"type":"number"},
      "severity":{"type":"string"},
      "severityLevel":{"type":"string","enum":["lowest","low","medium","high","highest"],"description":"The severity on one scale (the feed's word is severity): what min-severity and sortby=severity use."},
      "probability":{"type":"string"},"validFrom":{"type":"string"},"recordTypes":{"type":"string"},
      "roadName":{"type":"string"},"direction":{"type":"string"},"delayMinutes":{"type":"string"},"lanesRestricted":{"type":"string"},
      "location":{"type":"string","description":"Where, in the feed's words (a comment's Event Location line)."},
      "reason":{"type":"string"},"eventStatus":{"type":"string"},"returnToNormal":{"type":"string"},
      "schedule":{"type":"string","description":"A recurring schedule (Open511: weekdays, daily hours, exceptions) as JSON text: {offset, zone?, rules: [{from, until?, days (1 Monday … 7 Sunday), times HH:MM-HH:MM}], exceptions?: {date: [times]}}; in effect only then (docs/feeds.md)."},
      "event":{"type":"integer","description":"The store id of the event it is (or, answered with reports=true, belongs to): the feature id of the event."},
      "reports":{"type":"array","description":"The reports the event was built from, one per feed that reported it.","items":{"type":"object","required":["source","id"],"properties":{
         "source":{"type":"string"},"id":{"type":"string"},"updated":{"type":"string","format":"date-time"},"positionSource":{"type":"string"}}}}}},
   "Feature":{"type":"object","required":["type","id","geometry","properties"],"properties":{"type":{"type":"string","enum":["Feature"]},"id":{"type":"integer"},
      "geometry":{"allOf":[{"$ref":"#/components/schemas/Geometry"}],"nullable":True},"properties":{"$ref":"#/components/schemas/IncidentProperties"},
      "links":{"type":"array","items":{"$ref":"#/components/schemas/Link"}}}},
   "FeatureCollection":{"type":"object","required":["type","features","numberMatched","numberReturned","timeStamp","links"],"properties":{
      "type":{"type":"string","enum":["FeatureCollection"]},"features":{"type":"array","items":{"$ref":"#/components/schemas/Feature"}},
      "timeStamp":{"type":"string","format":"date-time"},"numberMatched":{"type":"integer","minimum":0},"numberReturned":{"type":"integer","minimum":0},
      "links":{"type":"array","items":{"$ref":"#/components/schemas/Link"}}}},
  }
 }
}
s=json.dumps(doc,ensure_ascii=False,indent=1)
assert '"""' not in s
swift='''import Foundation

/// The OpenAPI 3.0 definition `/api` serves: every path, parameter and answer, so that clients
/// (and schemathesis in CI) can check the server against it. `{{BASE}}` becomes the server's URL.
/// The parameters mean what the command line's options mean (ItemsQuery reads them).\n/// Generated by scripts/make-openapi.py: edit it there.
enum OpenAPIDocument {
    static func json(base: String) -> String {
        template.replacingOccurrences(of: "{{BASE}}", with: base)
    }

    private static let template = #"""
''' + s + '''
"""#
}
'''
out=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','Sources','TrafficGeoServe','OpenAPIDocument.swift')
open(out,'w').write(swift)
