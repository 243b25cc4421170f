import Foundation
import TrafficGeoSupport

/// The feed formats trafficgeo reads.
public enum FeedFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case atom, rss, autobahn, geojson, csv
    /// DATEX II (v1, v2, v3; XML, a SOAP envelope, v3 JSON).
    case datex2
    /// WZDx, the US Work Zone Data Exchange (a GeoJSON profile).
    case wzdx
    /// Open511 (JSON or XML).
    case open511
    /// Waze's Closure and Incident Feed Specification (CIFS: JSON or XML), what cities publish
    /// for Waze for Cities.
    case waze
    /// A GIS file read through GDAL/OGR (KML, GML, Shapefile, GeoPackage, FlatGeobuf, GPX, a
    /// zipped shapefile, …): by the `trafficgeo` tool and the TrafficGeo library, whose
    /// TrafficGeoOGR module opens the library GDAL installs; the feed readers alone do not read it.
    case gis
    /// An XML or JSON document of repeated records in a publisher's own schema, read as a table
    /// (RecordsReader): what no standard's reader claims.
    case records

    public var description: String { rawValue }

    /// What kind of text the format is: forcing one format on content of another kind is a mistake.
    public var family: String {
        switch self {
        case .atom, .rss: "XML"
        case .autobahn, .geojson, .wzdx: "JSON"
        case .csv: "delimited text"
        case .datex2, .open511, .waze: "XML or JSON"
        case .gis: "XML, JSON, delimited text or binary"
        case .records: "XML or JSON"
        }
    }

    /// Whether content of `family` (as `contentFamily` tells it) can be this format.
    public func accepts(family content: String) -> Bool { family.contains(content) }

    /// What kind of text a document is by its first byte: "XML", "JSON" or "delimited text".
    public static func contentFamily(_ head: Data) -> String {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        switch bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
        case UInt8(ascii: "<"): return "XML"
        case UInt8(ascii: "{"), UInt8(ascii: "["): return "JSON"
        default: return "delimited text"
        }
    }

    /// What a document whose format trafficgeo cannot tell looks like, in words for the refusal:
    /// "a KML document (GIS: convert it with ogr2ogr -f GeoJSON out.geojson IN)", "an XML
    /// document whose root is <evts>", "JSON whose top-level members are a, b".
    public static func describeContent(_ head: Data) -> String {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace })
        let convert = "which GDAL may read: name the format gis (or convert it with `ogr2ogr -f GeoJSON out.geojson FILE`, Debian's gdal-bin, and read that)"
        switch trimmed.first {
        case "<":
            // The root: the first element that is no declaration, comment or doctype.
            var rest = Substring(trimmed)
            var root: String?
            while let open = rest.firstIndex(of: "<") {
                let after = rest[rest.index(after: open)...]
                if after.hasPrefix("?") || after.hasPrefix("!") {
                    guard let close = after.firstIndex(of: ">") else { break }
                    rest = after[after.index(after: close)...]
                    continue
                }
                root = String(after.prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" }.prefix(60))
                break
            }
            let local = (root ?? "").split(separator: ":").last.map { String($0).lowercased() } ?? ""
            if local == "kml" { return "a KML document, \(convert)" }
            if local == "featurecollection" || text.contains("opengis.net/gml") { return "a GML document (<\(root ?? "")>), \(convert)" }
            if local == "gpx" { return "a GPX document (a route for `along`, not a feed)" }
            return root.map { "an XML document whose root is <\($0)>" } ?? "an XML document"
        case "{":
            // Top-level member names, as far as the head shows them.
            var names: [String] = []
            var depth = 0, inString = false, escaped = false, current = "", expectingKey = false
            for c in trimmed {
                if inString {
                    if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" {
                        inString = false
                        if depth == 1 && expectingKey { names.append(String(current.prefix(40))) }
                    } else if depth == 1 && expectingKey { current.append(c) }
                    continue
                }
                switch c {
                case "\"": inString = true; current = ""
                case "{", "[": depth += 1; expectingKey = depth == 1
                case "}", "]": depth -= 1
                case ",": expectingKey = depth == 1
                case ":": if depth == 1 { expectingKey = false }
                default: break
                }
                if names.count >= 8 { break }
            }
            return names.isEmpty ? "a JSON object" : "JSON whose top-level members are " + names.map { "`\($0)`" }.joined(separator: ", ")
        case "[":
            return "a JSON array (of no objects trafficgeo recognises: GeoJSON features, Autobahn warnings, WZDx or Open511 events, CIFS incidents)"
        case nil:
            return "empty"
        default:
            if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return "a ZIP archive (a zipped shapefile, KMZ or GeoPackage?), \(convert)" }
            if bytes.starts(with: Array("SQLite format 3".utf8)) { return "an SQLite file (a GeoPackage?), \(convert)" }
            if BinaryText.hasControlBytes(String(trimmed.prefix(512))) { return "binary data (a shapefile?), \(convert)" }
            return "text without a header line of separated columns"
        }
    }

    /// An XML document (lowercased) of a GIS format: KML, or GML.
    static func isGISDocument(_ lower: String) -> Bool {
        lower.contains("<kml") || lower.contains("opengis.net/kml") || lower.contains("opengis.net/gml") && !lower.contains("<feed")
    }

    /// A binary file of a GIS format, by its magic bytes: a ZIP (a zipped shapefile, KMZ), an
    /// SQLite file (GeoPackage), a shapefile's .shp, FlatGeobuf.
    static func isGISFile(_ bytes: Data.SubSequence) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) || bytes.starts(with: Array("SQLite format 3".utf8))
            || bytes.starts(with: [0x00, 0x00, 0x27, 0x0A]) || bytes.starts(with: [0x66, 0x67, 0x62, 0x03])
    }

    /// Guesses the format from the first bytes of a feed (after a BOM and whitespace).
    ///
    ///     FeedFormat.detect(Data("<feed xmlns=...".utf8)) // .atom
    public static func detect(_ head: Data) -> FeedFormat? {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace })
        guard let first = trimmed.first else { return nil }
        let lower = trimmed.lowercased()
        switch first {
        case "<":
            // The standards first: a DATEX II document names its namespace or root near the top,
            // SOAP envelopes included.
            if lower.contains("datex2.eu/schema") || lower.contains("d2logicalmodel") || lower.contains("messagecontainer")
                || lower.contains("situationpublication") || lower.contains("levelc/schema") {
                return .datex2
            }
            if lower.contains("<open511") { return .open511 }
            if lower.contains("<incidents"), lower.contains("<incident") { return .waze }
            if lower.contains("<feed") { return .atom }
            if lower.contains("<rss") || lower.contains("<rdf:rdf") || lower.contains("<channel") { return .rss }
            // GIS documents GDAL reads: KML, GML (a WFS answer, an INSPIRE download).
            if Self.isGISDocument(lower) { return .gis }
            // Any other XML: a publisher's own records (RecordsReader finds them, or says there are none).
            return .records
        case "{", "[":
            if lower.contains("\"feed_info\"") || lower.contains("\"road_event_feed_info\"") || lower.contains("\"core_details\"")
                || lower.contains("\"road_event_id\"") {
                return .wzdx
            }
            if lower.contains("\"events\""), lower.contains("\"event_type\"") || lower.contains("\"jurisdiction_url\"") || lower.contains("open511") {
                return .open511
            }
            if lower.contains("situationpublication") || lower.contains("\"situationrecord\"") || lower.contains("\"d2logicalmodel\"")
                || lower.contains("\"messagecontainer\"") || lower.contains("\"situation\"") && lower.contains("\"idg\"") {
                return .datex2
            }
            // CIFS: an incidents array whose incidents have a polyline or a street.
            if lower.contains("\"incidents\""), lower.contains("\"polyline\"") || lower.contains("\"street\"") {
                return .waze
            }
            if lower.contains("\"featurecollection\"") || lower.contains("\"features\"") || lower.contains("\"feature\"") {
                return .geojson
            }
            if AutobahnJSONReader.services.contains(where: { lower.contains("\"\($0)\"") }) || lower.contains("\"identifier\"") {
                return .autobahn
            }
            // Any other JSON: a publisher's own records.
            return .records
        default:
            if Self.isGISFile(bytes) { return .gis }
            // A header line with a separator and a title-ish or coordinate column.
            // By scalars: "\r\n" is one Character, which neither "\r" nor "\n" equals.
            let header = String(String.UnicodeScalarView(lower.unicodeScalars.prefix(while: { $0 != "\n" && $0 != "\r" })))
            let hasSeparator = header.contains(",") || header.contains(";") || header.contains("\t")
            // Control bytes (other than the tab) are binary, not a header.
            return hasSeparator && !BinaryText.hasControlBytes(header) ? .csv : nil
        }
    }
}
