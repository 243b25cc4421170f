import Foundation

// The answers and schemas of serve's OpenAPI document (OpenAPIDocument assembles it): what each
// path returns. Declared here as JSON, as it appears in the document.
extension OpenAPIDocument {
    static let components = #"""
{
  "headers": {
    "ETag": {
      "description": "A tag of this answer: send it back in If-None-Match to get 304 when nothing changed.",
      "schema": {"type": "string"}
    },
    "CacheControl": {"description": "Caching: revalidate with the ETag.", "schema": {"type": "string"}}
  },
  "responses": {
    "Problem": {
      "description": "What was wrong and what to send instead (RFC 9457).",
      "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    }
  },
  "schemas": {
    "ClusterCollection": {
      "type": "object",
      "required": ["type", "features", "numberMatched"],
      "properties": {
        "type": {"type": "string", "enum": ["FeatureCollection"]},
        "numberMatched": {"type": "integer"},
        "numberReturned": {"type": "integer"},
        "features": {
          "type": "array",
          "items": {
            "type": "object",
            "required": ["type", "geometry", "properties"],
            "properties": {
              "type": {"type": "string"},
              "geometry": {"$ref": "#/components/schemas/Geometry"},
              "properties": {"type": "object", "required": ["count"], "properties": {"count": {"type": "integer", "minimum": 1}}}
            }
          }
        }
      }
    },
    "Problem": {
      "type": "object",
      "required": ["title", "status", "detail"],
      "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"}
      }
    },
    "Link": {
      "type": "object",
      "required": ["href", "rel"],
      "properties": {"href": {"type": "string"}, "rel": {"type": "string"}, "type": {"type": "string"}, "title": {"type": "string"}}
    },
    "LandingPage": {
      "type": "object",
      "required": ["links"],
      "properties": {
        "title": {"type": "string"},
        "description": {"type": "string"},
        "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}
      }
    },
    "Conformance": {
      "type": "object",
      "required": ["conformsTo"],
      "properties": {"conformsTo": {"type": "array", "items": {"type": "string"}}}
    },
    "Collection": {
      "type": "object",
      "required": ["id", "links"],
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "itemType": {"type": "string"},
        "crs": {"type": "array", "items": {"type": "string"}},
        "extent": {"type": "object"},
        "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}
      }
    },
    "Collections": {
      "type": "object",
      "required": ["links", "collections"],
      "properties": {
        "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}},
        "collections": {"type": "array", "items": {"$ref": "#/components/schemas/Collection"}}
      }
    },
    "Geometry": {
      "type": "object",
      "required": ["type", "coordinates"],
      "properties": {"type": {"type": "string", "enum": ["Point", "LineString"]}, "coordinates": {"type": "array"}}
    },
    "IncidentProperties": {
      "type": "object",
      "required": ["title", "pinColor", "source"],
      "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "subtitle": {"type": "string"},
        "description": {"type": "string"},
        "pinColor": {"type": "string", "enum": ["red", "purple", "green"]},
        "marker-color": {"type": "string"},
        "marker-symbol": {"type": "string"},
        "distance_m": {"type": "number"},
        "bearing_deg": {"type": "number"},
        "along_m": {
          "type": "number",
          "description": "Asked along a route: the metres driven from its start to this incident (distance_m is then how far off the route it is)."
        },
        "road": {"type": "string"},
        "category": {"type": "string"},
        "updated": {"type": "string", "format": "date-time"},
        "expires": {"type": "string", "format": "date-time"},
        "ended": {"type": "string", "format": "date-time"},
        "lastHeard": {
          "type": "string",
          "format": "date-time",
          "description": "For an unconfirmed incident (no end given, not heard of within unconfirmed-after): when it was last heard of."
        },
        "first_seen": {"type": "string", "format": "date-time"},
        "weblink": {"type": "string"},
        "source": {"type": "string"},
        "positionSource": {"type": "string"},
        "precision": {"type": "string"},
        "confidence": {"type": "number"},
        "severity": {"type": "string"},
        "severityLevel": {
          "type": "string",
          "enum": ["lowest", "low", "medium", "high", "highest"],
          "description": "The severity on one scale (the feed's word is severity): what min-severity and sortby=severity use."
        },
        "probability": {"type": "string"},
        "validFrom": {"type": "string"},
        "recordTypes": {"type": "string"},
        "roadName": {"type": "string"},
        "direction": {"type": "string"},
        "delayMinutes": {"type": "string", "description": "The delay in minutes in the feed's words (15, 15-20); min-delay and the delay queryable read its number (a range's upper end)."},
        "lanesRestricted": {"type": "string", "description": "The lanes closed or restricted in the feed's words (1, 1 of 3)."},
        "location": {"type": "string", "description": "Where, in the feed's words (a comment's Event Location line)."},
        "reason": {"type": "string"},
        "eventStatus": {"type": "string"},
        "returnToNormal": {"type": "string"},
        "schedule": {
          "type": "string",
          "description": "A recurring schedule (Open511: weekdays, daily hours, exceptions) as JSON text: {offset, zone?, rules: [{from, until?, days (1 Monday … 7 Sunday), times HH:MM-HH:MM}], exceptions?: {date: [times]}}; in effect only then (docs/feeds.md)."
        },
        "event": {
          "type": "integer",
          "description": "The store id of the event it is (or, answered with reports=true, belongs to): the feature id of the event."
        },
        "reports": {
          "type": "array",
          "description": "The reports the event was built from, one per feed that reported it.",
          "items": {
            "type": "object",
            "required": ["source", "id"],
            "properties": {
              "source": {"type": "string"},
              "id": {"type": "string"},
              "updated": {"type": "string", "format": "date-time"},
              "positionSource": {"type": "string"}
            }
          }
        }
      }
    },
    "Feature": {
      "type": "object",
      "required": ["type", "id", "geometry", "properties"],
      "properties": {
        "type": {"type": "string", "enum": ["Feature"]},
        "id": {"type": "integer"},
        "geometry": {"allOf": [{"$ref": "#/components/schemas/Geometry"}], "nullable": true},
        "properties": {"$ref": "#/components/schemas/IncidentProperties"},
        "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}
      }
    },
    "FeatureCollection": {
      "type": "object",
      "required": ["type", "features", "numberMatched", "numberReturned", "timeStamp", "links"],
      "properties": {
        "type": {"type": "string", "enum": ["FeatureCollection"]},
        "features": {"type": "array", "items": {"$ref": "#/components/schemas/Feature"}},
        "timeStamp": {"type": "string", "format": "date-time"},
        "numberMatched": {"type": "integer", "minimum": 0},
        "numberReturned": {"type": "integer", "minimum": 0},
        "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}
      }
    }
  }
}
"""#
}
