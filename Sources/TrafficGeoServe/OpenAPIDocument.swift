import Foundation
import TrafficGeoQuery
import TrafficGeoStore

/// The OpenAPI 3.0 definition `/api` serves: every path, parameter and answer, so that clients
/// (and schemathesis in CI) can check the server against it. `{{BASE}}` becomes the server's URL.
///
/// Built from the query model: a query field's parameter — its name, description and schema —
/// is the field's own (`QueryField.name(on:)`, `help(on: .parameter)`, `parameterSchema`), and
/// which operations list it is `QueryField.surfaces` (the same declaration `ItemsQuery` reads),
/// so a new field reaches the document with nothing done here. serve's own parameters (paging,
/// format, nearest, geometry, CQL2, the grid) are declared below; what each path answers is
/// `paths` below and `components` (OpenAPIDocument+Components).
enum OpenAPIDocument {
    static func json(base: String) -> String {
        rendered.replacingOccurrences(of: "{{BASE}}", with: base)
    }

    private static let rendered: String = {
        var document = object(paths)
        document["components"] = object(components)
        var operations = document["paths"] as! [String: Any]
        let lists = parameterLists
        for path in operations.keys {
            var item = operations[path] as! [String: Any], get = item["get"] as! [String: Any]
            get["parameters"] = lists[path] ?? []
            // Every path answers a bad request, a too long target and a failure as a problem.
            var responses = get["responses"] as! [String: Any]
            for status in ["400", "414", "500"] { responses[status] = ["$ref": "#/components/responses/Problem"] }
            get["responses"] = responses
            item["get"] = get
            operations[path] = item
        }
        document["paths"] = operations
        let data = try! JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }()

    /// Each path's parameters, in the order a reader meets them.
    static var parameterLists: [String: [[String: Any]]] {
        let format = own("f")
        let jsonOnly = own("f", schema: #"{"type":"string","enum":["json"]}"#)
        let cql2 = ["filter", "filter-lang", "filter-crs"].map { own($0) }
        let itemFields = QueryField.taken(on: .items).filter { $0 != .bbox }.map(parameter)
        let clusterFields = ViewClusters.fields.map(parameter)
        return [
            "/": [format], "/conformance": [format], "/api": [format], "/collections": [format], "/collections/incidents": [format],
            "/collections/incidents/items": [parameter(.bbox)] + ["datetime", "limit", "offset", "nearest", "geometry"].map { own($0) } + itemFields + cql2 + [format],
            "/collections/incidents/items/{featureId}": [own("featureId"), format],
            "/collections/incidents/clusters": [parameter(.bbox, required: true), own("cells"), own("datetime")] + clusterFields + cql2 + [jsonOnly],
            "/collections/incidents/queryables": [jsonOnly],
            "/collections/incidents/events": QueryField.taken(on: .eventStream).map(parameter) + [own("Last-Event-ID")],
        ]
    }

    /// A query field as a parameter: the query model says what it is.
    static func parameter(_ field: QueryField) -> [String: Any] { parameter(field, required: false) }

    static func parameter(_ field: QueryField, required: Bool) -> [String: Any] {
        var p: [String: Any] = ["name": field.name(on: .parameter), "in": "query", "required": required,
                                "description": field.help(on: .parameter), "schema": object(field.parameterSchema)]
        // A list of numbers is one comma list (bbox=w,s,e,n), not the parameter repeated.
        if (p["schema"] as? [String: Any])?["type"] as? String == "array" { p["style"] = "form"; p["explode"] = false }
        // A filter field's empty value is no condition (`QueryText.filter`: an HTML form sends its
        // empty fields), which its schema (an enum, a pattern, a boolean) does not admit: the
        // document says so, and schemathesis (scripts/api-check) holds serve to it.
        if QueryField.filterFields.contains(field) { p["allowEmptyValue"] = true }
        return p
    }

    /// One of serve's own parameters (`ownParameters`), its schema replaced where given.
    static func own(_ name: String, schema: String? = nil) -> [String: Any] {
        let (location, schemaText, description) = ownParameters[name]!
        return ["name": name, "in": location, "required": location == "path", "description": description, "schema": object(schema ?? schemaText)]
    }

    /// serve's parameters that are not the query model's: where, the schema, what it means.
    static let ownParameters: [String: (String, String, String)] = [
        "f": ("query", #"{"type":"string","enum":["json","html"]}"#,
              "The response format: json (GeoJSON for features) or html (a page). Without it, a browser's Accept header picks HTML, anything else JSON."),
        "datetime": ("query", #"{"type":"string"}"#,
                     "An RFC 3339 instant: incidents in effect then (begun by t — the feed's own start, else the last update — t < expires, not ended, "
                     + "within its recurring schedule's days and hours if it has one). An interval start/end (.. for an open end): incidents updated within it."),
        "limit": ("query", #"{"type":"integer","minimum":1,"maximum":10000,"default":10}"#, "How many features a page holds (1 … 10000)."),
        "offset": ("query", #"{"type":"integer","minimum":0,"default":0}"#, "How many matching features to skip (the next and prev links set it)."),
        "nearest": ("query", #"{"type":"integer","minimum":1,"maximum":10000}"#,
                    "Only the k incidents nearest to lat/lon, nearest first (exact geodesic distances; with radius, no farther). Like `trafficgeo near`. Not with bbox."),
        "geometry": ("query", #"{"type":"string","enum":["point","mixed"],"default":"point"}"#,
                     "point: every feature a Point (where the incident is, or its segment starts); mixed: a LineString along the road where the incident "
                     + "has a segment, else a Point (for maps). As the command line's --geometry."),
        "filter": ("query", #"{"type":"string"}"#,
                   "A CQL2 text filter (OGC API – Features Part 3) over the queryables (/collections/incidents/queryables): =, <>, <, <=, >, >=, AND, OR, NOT, "
                   + "IN, LIKE, BETWEEN, IS NULL and S_INTERSECTS(geometry, BBOX|POINT|POLYGON|MULTIPOLYGON), such as road = 'A3' AND severity >= 'high'. "
                   + "Each comparison means what the parameter of the same field means (road = 'A3' is road=A3); it is ANDed with the other parameters. "
                   + "A request target holds at most 8 KiB."),
        "filter-lang": ("query", #"{"type":"string","enum":["cql2-text"],"default":"cql2-text"}"#, "The filter's language: cql2-text."),
        "filter-crs": ("query", #"{"type":"string","enum":["http://www.opengis.net/def/crs/OGC/1.3/CRS84"]}"#,
                       "The CRS of the filter's geometries: CRS84 (longitude first)."),
        "cells": ("query", #"{"type":"string","pattern":"^[0-9]{1,2}[xX][0-9]{1,2}$","default":"24x16"}"#, "The grid: COLUMNSxROWS, each 1 … 64."),
        "featureId": ("path", #"{"type":"integer","format":"int64","minimum":1}"#, "The incident's id in this store (a feature's id)."),
        "Last-Event-ID": ("header", #"{"type":"string","pattern":"^[0-9]+$"}"#,
                          "Resume after this event (the id of the last event received): the events recorded since are sent first."),
    ]

    private static func object(_ json: String) -> [String: Any] {
        try! JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
    }

    /// Everything but the parameters and the components: the paths and what each answers.
    private static let paths = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "trafficgeo",
    "version": "1.0.0",
    "description": "Road-traffic incidents as OGC API – Features (Part 1: Core, GeoJSON, HTML, OpenAPI 3.0), with nearest and within-radius searches and live updates (Server-Sent Events). All positions are CRS84 (longitude, latitude).",
    "license": {"name": "Data: as its feeds license it"}
  },
  "servers": [{"url": "{{BASE}}"}],
  "paths": {
    "/": {
      "get": {
        "operationId": "getLandingPage",
        "summary": "The landing page (JSON) or the map (HTML)",
        "responses": {
          "200": {
            "description": "The landing page: links to the API definition, conformance and the collections; in HTML, the map.",
            "content": {
              "application/json": {"schema": {"$ref": "#/components/schemas/LandingPage"}},
              "text/html": {"schema": {"type": "string"}}
            }
          }
        }
      }
    },
    "/conformance": {
      "get": {
        "operationId": "getConformance",
        "summary": "The conformance classes",
        "responses": {
          "200": {
            "description": "The conformance classes this server implements.",
            "content": {
              "application/json": {"schema": {"$ref": "#/components/schemas/Conformance"}},
              "text/html": {"schema": {"type": "string"}}
            }
          }
        }
      }
    },
    "/api": {
      "get": {
        "operationId": "getAPI",
        "summary": "This document",
        "responses": {
          "200": {
            "description": "The OpenAPI 3.0 definition.",
            "content": {
              "application/vnd.oai.openapi+json;version=3.0": {"schema": {"type": "object"}},
              "text/html": {"schema": {"type": "string"}}
            }
          }
        }
      }
    },
    "/collections": {
      "get": {
        "operationId": "getCollections",
        "summary": "The collections (one: incidents)",
        "responses": {
          "200": {
            "description": "The collections.",
            "content": {
              "application/json": {"schema": {"$ref": "#/components/schemas/Collections"}},
              "text/html": {"schema": {"type": "string"}}
            }
          }
        }
      }
    },
    "/collections/incidents": {
      "get": {
        "operationId": "getIncidentsCollection",
        "summary": "The incidents collection",
        "responses": {
          "200": {
            "description": "The collection's description.",
            "content": {
              "application/json": {"schema": {"$ref": "#/components/schemas/Collection"}},
              "text/html": {"schema": {"type": "string"}}
            }
          }
        }
      }
    },
    "/collections/incidents/items": {
      "get": {
        "operationId": "getIncidents",
        "summary": "Incidents: a box, a radius, the k nearest, filters, pages",
        "responses": {
          "200": {
            "description": "A page of incidents, with numberMatched, numberReturned and next/prev links; in HTML, the map.",
            "content": {
              "application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}},
              "text/html": {"schema": {"type": "string"}}
            },
            "headers": {
              "ETag": {"$ref": "#/components/headers/ETag"},
              "Cache-Control": {"$ref": "#/components/headers/CacheControl"}
            }
          },
          "304": {"description": "Not modified: the answer has the ETag given in If-None-Match."},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/collections/incidents/items/{featureId}": {
      "get": {
        "operationId": "getIncident",
        "summary": "One incident",
        "responses": {
          "200": {
            "description": "The incident.",
            "content": {
              "application/geo+json": {"schema": {"$ref": "#/components/schemas/Feature"}},
              "text/html": {"schema": {"type": "string"}}
            },
            "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}
          },
          "304": {"description": "Not modified."},
          "404": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/collections/incidents/clusters": {
      "get": {
        "operationId": "getIncidentClusters",
        "summary": "How many incidents a view holds, cell by cell",
        "description": "For a map's view with more incidents than a page shows: a grid over bbox (cells, default 24x16), each non-empty cell a Point at the mean position of its incidents with their count; numberMatched is the whole view's. The filters are the items' own. The map page draws these when a view holds more than it lists.",
        "responses": {
          "200": {
            "description": "The counted cells.",
            "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/ClusterCollection"}}},
            "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}
          },
          "304": {"description": "Not modified."},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/collections/incidents/queryables": {
      "get": {
        "operationId": "getIncidentQueryables",
        "summary": "The properties a filter may name",
        "description": "OGC API – Features Part 3: a JSON Schema of the properties a CQL2 filter may compare, each with what its comparisons mean.",
        "responses": {
          "200": {
            "description": "The queryables as a JSON Schema.",
            "content": {"application/schema+json": {"schema": {"type": "object"}}}
          }
        }
      }
    },
    "/collections/incidents/events": {
      "get": {
        "operationId": "getIncidentEvents",
        "summary": "Live changes as Server-Sent Events",
        "description": "Each event names its change (new, updated, ended, removed) in `event:`, carries the change-feed sequence number as `id:` and the incident as a GeoJSON Feature (removed: its id only) in `data:`. Only changes to incidents that match the conditions are sent; a heartbeat comment keeps idle streams open.",
        "responses": {
          "200": {
            "description": "An endless stream of events.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}}
          }
        }
      }
    }
  }
}
"""#
}
