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

    public var description: String { rawValue }

    /// What kind of text the format is: forcing one format on content of another kind is a mistake.
    public var family: String {
        switch self {
        case .atom, .rss: "XML"
        case .autobahn, .geojson, .wzdx: "JSON"
        case .csv: "delimited text"
        case .datex2, .open511: "XML or JSON"
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
            if lower.contains("<feed") { return .atom }
            if lower.contains("<rss") || lower.contains("<rdf:rdf") || lower.contains("<channel") { return .rss }
            return nil
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
            if lower.contains("\"featurecollection\"") || lower.contains("\"features\"") || lower.contains("\"feature\"") {
                return .geojson
            }
            if AutobahnJSONReader.services.contains(where: { lower.contains("\"\($0)\"") }) || lower.contains("\"identifier\"") {
                return .autobahn
            }
            return nil
        default:
            // A header line with a separator and a title-ish or coordinate column.
            // By scalars: "\r\n" is one Character, which neither "\r" nor "\n" equals.
            let header = String(String.UnicodeScalarView(lower.unicodeScalars.prefix(while: { $0 != "\n" && $0 != "\r" })))
            let hasSeparator = header.contains(",") || header.contains(";") || header.contains("\t")
            // Control bytes (other than the tab) are binary, not a header.
            return hasSeparator && !BinaryText.hasControlBytes(header) ? .csv : nil
        }
    }
}
