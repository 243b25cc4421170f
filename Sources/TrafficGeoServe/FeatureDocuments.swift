import Foundation
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// A link of OGC API – Features (and of its HTML pages).
struct Link: Sendable {
    var href: String
    var rel: String
    var type: String
    var title: String

    /// The links as a JSON array.
    static func array(_ links: [Link]) -> String {
        var bytes: [UInt8] = []
        write(links, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The links as a JSON array, written after what `bytes` holds (a page of features: no
    /// String per link).
    static func write(_ links: [Link], to bytes: inout [UInt8]) {
        // Moved, not copied: each link's object writer takes the buffer over.
        var out: [UInt8] = []
        swap(&out, &bytes)
        out.append(UInt8(ascii: "["))
        for (i, link) in links.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            var o = JSONObjectText(appendingTo: consume out)
            o.add("href", link.href)
            o.add("rel", link.rel)
            o.add("type", link.type)
            o.add("title", link.title)
            out = o.closedBytes()
        }
        out.append(UInt8(ascii: "]"))
        swap(&out, &bytes)
    }
}

enum MediaType {
    static let json = "application/json"
    static let geoJSON = "application/geo+json"
    static let html = "text/html; charset=utf-8"
    static let openAPI = "application/vnd.oai.openapi+json;version=3.0"
    static let problem = "application/problem+json"
    static let eventStream = "text/event-stream"
    static let schemaJSON = "application/schema+json"
}

/// The JSON documents of OGC API – Features Part 1 for the one collection, `incidents`.
enum FeatureDocuments {
    static let collectionID = "incidents"
    static let conformanceClasses = [
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html",
        // Part 3: queryables and a CQL2 text filter (CQL2's basic and advanced comparisons,
        // S_INTERSECTS on points, boxes and polygons; not queryables as parameters of their own).
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
        "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
        "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
        "http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
        "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
    ]
    static let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

    static func landing(base: String) -> String {
        var o = JSONObjectText()
        o.add("title", "trafficgeo")
        o.add("description", "Road-traffic incidents: OGC API – Features, nearest and within-radius searches, and live updates.")
        o.add(raw: "links", Link.array([
            Link(href: base + "/?f=json", rel: "self", type: MediaType.json, title: "This document"),
            Link(href: base + "/?f=html", rel: "alternate", type: "text/html", title: "The map"),
            Link(href: base + "/api", rel: "service-desc", type: MediaType.openAPI, title: "The API definition (OpenAPI 3.0)"),
            Link(href: base + "/api?f=html", rel: "service-doc", type: "text/html", title: "The API documentation"),
            Link(href: base + "/conformance", rel: "conformance", type: MediaType.json, title: "Conformance classes"),
            Link(href: base + "/collections", rel: "data", type: MediaType.json, title: "Collections"),
        ]))
        return o.closed()
    }

    static func conformance() -> String {
        "{\"conformsTo\":[" + conformanceClasses.map { JSONObjectText.string($0) }.joined(separator: ",") + "]}"
    }

    /// The collection's description; its spatial extent is the data's (the whole world while
    /// nothing is located), so that GIS clients zoom to the incidents.
    static func collection(base: String, extent: LonLatBox?) -> String {
        var o = JSONObjectText()
        o.add("id", collectionID)
        o.add("title", "Road-traffic incidents")
        o.add("description", "Incidents read from feeds and placed on the map; each with title, subtitle, category and pin colour.")
        o.add("itemType", "feature")
        o.add(raw: "crs", "[" + JSONObjectText.string(crs84) + "]")
        let box: [Double] = extent.map { [$0.west, $0.south, $0.east, $0.north] } ?? [-180, -90, 180, 90]
        let bbox = "[[" + box.map { JSONObjectText.number($0, digits: 6) }.joined(separator: ",") + "]]"
        o.add(raw: "extent", "{\"spatial\":{\"bbox\":\(bbox),\"crs\":\(JSONObjectText.string(crs84))}}")
        let items = base + "/collections/\(collectionID)/items"
        o.add(raw: "links", Link.array([
            Link(href: base + "/collections/\(collectionID)", rel: "self", type: MediaType.json, title: "This collection"),
            Link(href: items, rel: "items", type: MediaType.geoJSON, title: "The incidents (GeoJSON)"),
            Link(href: items + "?f=html", rel: "items", type: "text/html", title: "The incidents on a map"),
            Link(href: base + "/collections/\(collectionID)/queryables", rel: "http://www.opengis.net/def/rel/ogc/1.0/queryables", type: MediaType.schemaJSON,
                 title: "The properties a filter may name"),
            Link(href: base + "/collections/\(collectionID)/events", rel: "related", type: MediaType.eventStream, title: "Live changes (Server-Sent Events)"),
        ]))
        return o.closed()
    }

    /// Part 3's queryables: a JSON Schema of the properties a CQL2 `filter` may compare
    /// (`Queryable`), each with what its comparisons mean.
    static func queryables(base: String) -> String {
        var o = JSONObjectText()
        o.add("$schema", "https://json-schema.org/draft/2020-12/schema")
        o.add("$id", base + "/collections/\(collectionID)/queryables")
        o.add("type", "object")
        o.add("title", "Road-traffic incidents")
        o.add("description", "The properties a filter (CQL2 text) may name; each comparison means what the query parameter of the same field means.")
        var properties = JSONObjectText()
        for q in Queryable.allCases {
            var p = JSONObjectText()
            p.add("title", q.title)
            p.add("description", q.description)
            switch q.type {
            case .geometry:
                p.add("format", "geometry-any")
                p.add(raw: "x-ogc-role", "\"primary-geometry\"")
            case .time:
                p.add("type", "string")
                p.add("format", "date-time")
            case .number:
                p.add("type", "number")
                p.add(raw: "minimum", "0")
                if let maximum = q.maximum { p.add(raw: "maximum", JSONObjectText.number(maximum)) }
            case .string:
                p.add("type", "string")
            }
            if let values = q.values { p.add(raw: "enum", "[" + values.map(JSONObjectText.string).joined(separator: ",") + "]") }
            properties.add(raw: q.rawValue, p.closed())
        }
        o.add(raw: "properties", properties.closed())
        o.add(raw: "additionalProperties", "false")
        return o.closed()
    }

    static func collections(base: String, extent: LonLatBox?) -> String {
        var o = JSONObjectText()
        o.add(raw: "links", Link.array([
            Link(href: base + "/collections", rel: "self", type: MediaType.json, title: "The collections"),
        ]))
        o.add(raw: "collections", "[" + collection(base: base, extent: extent) + "]")
        return o.closed()
    }

    /// One incident as a Feature: the store id as the feature id (it fits a URL path), the
    /// annotation properties (when it ended and its state among them), distance and bearing when a point was given, when it was first seen.
    static func feature(_ result: QueryResult, geometry: GeometryChoice = .point, appendingTo buffer: consuming [UInt8] = []) -> [UInt8] {
        GeoJSONWriter.feature(result, appendingTo: consume buffer, geometry: geometry, rawID: String(result.stored.storeID), distanceNames: ("distance_m", "bearing_deg", "along_m")) { p in
            p.add("first_seen", TimestampParser.format(result.stored.firstSeen))
        }
    }

    /// The page as a FeatureCollection, in UTF-8, and the length of its stable part: all but
    /// the timeStamp, which comes last (the ETag is taken from the stable part, so an unchanged
    /// answer keeps its tag).
    static func featureCollection(_ page: ItemsPage, geometry: GeometryChoice = .point, links: [Link], timeStamp: Date) -> (bytes: [UInt8], stableCount: Int) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024 + page.results.count * 1200)
        bytes.append(contentsOf: "{\"type\":\"FeatureCollection\",\"features\":[".utf8)
        for (i, r) in page.results.enumerated() {
            if i > 0 { bytes.append(contentsOf: ",\n".utf8) }
            bytes = feature(r, geometry: geometry, appendingTo: consume bytes)
        }
        bytes.append(contentsOf: "],\"numberMatched\":\(page.numberMatched),\"numberReturned\":\(page.results.count)".utf8)
        bytes.append(contentsOf: ",\"links\":".utf8)
        Link.write(links, to: &bytes)
        let stableCount = bytes.count
        bytes.append(contentsOf: ",\"timeStamp\":".utf8)
        bytes.append(contentsOf: JSONObjectText.string(TimestampParser.format(timeStamp)).utf8)
        bytes.append(UInt8(ascii: "}"))
        return (bytes, stableCount)
    }

    static func item(_ result: QueryResult, base: String) -> String {
        var f = String(decoding: feature(result), as: UTF8.self)
        let href = base + "/collections/\(collectionID)/items/\(result.stored.storeID)"
        let links = Link.array([
            Link(href: href, rel: "self", type: MediaType.geoJSON, title: "This incident"),
            Link(href: href + "?f=html", rel: "alternate", type: "text/html", title: "This incident as HTML"),
            Link(href: base + "/collections/\(collectionID)", rel: "collection", type: MediaType.json, title: "The collection"),
        ])
        f.removeLast()
        return f + ",\"links\":" + links + "}"
    }
}
