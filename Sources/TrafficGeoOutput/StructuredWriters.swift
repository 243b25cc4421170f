import Foundation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// `--format json`: an array of annotation objects, one per line.
final class JSONArrayWriter: ResultWriter {
    private let sink: TextSink
    private var count = 0

    init(sink: TextSink) { self.sink = sink }

    func begin() throws { try sink.write("[") }

    func write(_ result: QueryResult) throws {
        try sink.write(count == 0 ? "\n" : ",\n")
        try sink.write(Annotation(result).jsonText)
        count += 1
    }

    func end() throws { try sink.write(count == 0 ? "]\n" : "\n]\n") }
}

/// `--format geojson` (RFC 7946 FeatureCollection) and `geojsonseq` (RFC 8142: each Feature
/// preceded by RS and followed by LF). Coordinates are [longitude, latitude] with 6 decimals, no
/// `crs` member, an `id` on every feature; properties carry the annotation fields plus the
/// simplestyle-spec keys that geojson.io-style viewers use to colour pins.
package final class GeoJSONWriter: ResultWriter {
    private let sink: TextSink
    private let sequence: Bool
    private let geometry: GeometryChoice
    private var count = 0

    init(sink: TextSink, sequence: Bool, geometry: GeometryChoice = .point) {
        self.sink = sink
        self.sequence = sequence
        self.geometry = geometry
    }

    package func begin() throws {
        if !sequence { try sink.write("{\"type\":\"FeatureCollection\",\"features\":[") }
    }

    package func write(_ result: QueryResult) throws {
        let feature = Self.feature(result, geometry: geometry)
        if sequence {
            try sink.write("\u{1E}" + feature + "\n")
        } else {
            try sink.write((count == 0 ? "\n" : ",\n") + feature)
        }
        count += 1
    }

    package func end() throws {
        if !sequence { try sink.write(count == 0 ? "]}\n" : "\n]}\n") }
    }

    /// One Feature. `rawID` replaces the id (JSON text: `serve` uses the store id, which fits in
    /// a URL path); `distanceNames` are the keys of distance, bearing and metres along a route;
    /// `extra` adds properties.
    package static func feature(_ result: QueryResult, geometry choice: GeometryChoice = .point, rawID: String? = nil,
                                distanceNames: (metres: String, bearing: String, along: String) = ("distanceMeters", "bearingDegrees", "alongRouteMeters"),
                                extra: ((inout JSONObjectText) -> Void)? = nil) -> String {
        let bytes = feature(result, appendingTo: [], geometry: choice, rawID: rawID, distanceNames: distanceNames, extra: extra)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The Feature written after what `buffer` holds (`serve` writes a page into one buffer).
    package static func feature(_ result: QueryResult, appendingTo buffer: consuming [UInt8], geometry choice: GeometryChoice = .point,
                                rawID: String? = nil,
                                distanceNames: (metres: String, bearing: String, along: String) = ("distanceMeters", "bearingDegrees", "alongRouteMeters"),
                                extra: ((inout JSONObjectText) -> Void)? = nil) -> [UInt8] {
        let incident = result.incident
        let annotation = Annotation(result)
        var o = JSONObjectText(appendingTo: consume buffer)
        o.add("type", "Feature")
        // A feature's id must be unique in the collection: source and feed id together are.
        if let rawID { o.add(raw: "id", rawID) } else { o.add("id", "\(incident.source)#\(incident.id)") }
        o.add(raw: "geometry") { writeGeometry(incident, choice, to: &$0) }
        o.openObject("properties")
        o.add("id", incident.id)
        o.add("title", annotation.title)
        o.add("subtitle", annotation.subtitle)
        o.add("description", annotation.subtitle)
        o.add("pinColor", annotation.pinColor.rawValue)
        o.add("marker-color", annotation.pinColor.hex)
        o.add("marker-symbol", markerSymbol(incident.category))
        if choice != .point, incident.segment != nil {
            o.add("stroke", annotation.pinColor.hex)
            o.add("stroke-width", 4)
        }
        o.add(distanceNames.metres, annotation.distanceMeters, digits: 1)
        o.add(distanceNames.bearing, annotation.bearingDegrees, digits: 1)
        o.add(distanceNames.along, annotation.alongRouteMeters, digits: 1)
        o.add("road", annotation.road)
        o.add("category", annotation.category)
        o.add("updated", annotation.updated)
        o.add("expires", annotation.expires)
        o.add("ended", annotation.ended)
        o.add("state", annotation.state.rawValue)
        o.add("lastHeard", annotation.lastHeard)
        o.add("weblink", annotation.weblink)
        o.add("source", annotation.source)
        o.add("positionSource", annotation.positionSource)
        o.add("precision", annotation.precision)
        o.add("confidence", annotation.confidence, digits: 2)
        for (property, key) in Annotation.detailColumns { o.add(key, annotation.details[property]) }
        o.add("event", annotation.event)
        if !annotation.reports.isEmpty { o.add(raw: "reports", annotation.reportsJSON) }
        extra?(&o)
        o.closeObject()
        return o.closedBytes()
    }

    /// A Point at the incident, or (as chosen) a LineString along its segment, which starts at
    /// the incident; written into `out` (a page of features is one buffer: no String per feature).
    static func writeGeometry(_ incident: Incident, _ choice: GeometryChoice, to out: inout [UInt8]) {
        func pair(_ c: Coordinate) {
            out.append(UInt8(ascii: "["))
            JSONObjectText.appendNumber(c.longitude, digits: 6, to: &out)
            out.append(UInt8(ascii: ","))
            JSONObjectText.appendNumber(c.latitude, digits: 6, to: &out)
            out.append(UInt8(ascii: "]"))
        }
        if choice != .point, let segment = incident.segment, segment.count >= 2 {
            out.append(contentsOf: #"{"type":"LineString","coordinates":["#.utf8)
            for (i, c) in segment.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                pair(c)
            }
            out.append(contentsOf: "]}".utf8)
            return
        }
        guard let p = incident.position else {
            out.append(contentsOf: "null".utf8)
            return
        }
        out.append(contentsOf: #"{"type":"Point","coordinates":"#.utf8)
        pair(p)
        out.append(UInt8(ascii: "}"))
    }

    /// Maki icon names, as simplestyle-spec viewers understand them.
    static func markerSymbol(_ category: IncidentCategory?) -> String {
        switch category {
        case .accident: return "car"
        case .wrongWayDriver, .danger, .obstacle: return "danger"
        case .closure: return "roadblock"
        case .roadworks: return "construction"
        case .weather: return "snow"
        default: return "circle"
        }
    }
}

/// `--format csv`: one row per result, RFC 4180 quoting. Positions in WGS84 (latitude,
/// longitude), or with `--crs` in that CRS, in columns named for its axes (easting, northing).
final class CSVResultWriter: ResultWriter {
    static let header = ["id", "title", "subtitle", "latitude", "longitude", "distance_m", "bearing_deg", "pin_color",
                         "road", "category", "updated", "expires", "weblink", "source", "position_source", "precision", "confidence",
                         "ended", "state", "last_heard"] + Annotation.detailColumns.map(\.property) + ["event", "reports"]
    private let sink: TextSink
    private let crs: OutputCRS

    /// Answers along a route: one more column, `along_m`, last (other answers keep their columns).
    private let alongRoute: Bool

    init(sink: TextSink, crs: OutputCRS = .wgs84, alongRoute: Bool = false) {
        self.sink = sink
        self.crs = crs
        self.alongRoute = alongRoute
    }

    func begin() throws {
        var header = Self.header + (alongRoute ? ["along_m"] : [])
        if !crs.isWGS84 { (header[3], header[4]) = crs.columnNames }
        try sink.write(header.joined(separator: ",") + "\r\n")
    }

    func write(_ result: QueryResult) throws {
        let a = Annotation(result)
        var first = a.coordinate.map { JSONObjectText.number($0.latitude, digits: 6) } ?? ""
        var second = a.coordinate.map { JSONObjectText.number($0.longitude, digits: 6) } ?? ""
        if !crs.isWGS84, let p = result.incident.position {
            // A position the CRS cannot hold is left empty (and counted), not written wrong.
            let projected = crs.position(p)
            first = projected.map { JSONObjectText.number($0.x, digits: crs.digits) } ?? ""
            second = projected.map { JSONObjectText.number($0.y, digits: crs.digits) } ?? ""
        }
        var fields: [String] = [
            a.id, a.title, a.subtitle ?? "", first, second,
            a.distanceMeters.map { JSONObjectText.number($0, digits: 1) } ?? "",
            a.bearingDegrees.map { JSONObjectText.number($0, digits: 1) } ?? "",
            a.pinColor.rawValue, a.road ?? "", a.category ?? "", a.updated ?? "", a.expires ?? "", a.weblink ?? "", a.source,
            a.positionSource ?? "", a.precision ?? "", a.confidence.map { JSONObjectText.number($0, digits: 2) } ?? "",
            a.ended ?? "", a.state.rawValue, a.lastHeard ?? "",
        ] + Annotation.detailColumns.map { a.details[$0.property] ?? "" }
        fields += [String(a.event), a.reports.isEmpty ? "" : a.reportsJSON]
        if alongRoute { fields.append(a.alongRouteMeters.map { JSONObjectText.number($0, digits: 1) } ?? "") }
        try sink.write(fields.map(Self.quote).joined(separator: ",") + "\r\n")
    }

    func end() throws {}

    static func quote(_ field: String) -> String {
        // A leading = + - @ would run as a formula in a spreadsheet: prefix with a quote (OWASP).
        var value = field
        if let first = value.utf8.first, first == UInt8(ascii: "=") || first == UInt8(ascii: "+") || first == UInt8(ascii: "-") || first == UInt8(ascii: "@"),
           Double(value) == nil {
            value = "'" + value
        }
        // By bytes (these are ASCII, and never part of a longer UTF-8 sequence): result rows quote every id.
        guard value.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
