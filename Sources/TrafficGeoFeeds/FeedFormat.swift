import Foundation
import TrafficGeoSupport

/// The feed formats trafficgeo reads.
public enum FeedFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case atom, rss, autobahn, geojson, csv

    public var description: String { rawValue }

    /// Guesses the format from the first bytes of a feed (after a BOM and whitespace).
    ///
    ///     FeedFormat.detect(Data("<feed xmlns=...".utf8)) // .atom
    /// What kind of text the format is: forcing one format on content of another kind is a mistake.
    public var family: String {
        switch self {
        case .atom, .rss: "XML"
        case .autobahn, .geojson: "JSON"
        case .csv: "delimited text"
        }
    }

    public static func detect(_ head: Data) -> FeedFormat? {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace })
        guard let first = trimmed.first else { return nil }
        let lower = trimmed.lowercased()
        switch first {
        case "<":
            if lower.contains("<feed") { return .atom }
            if lower.contains("<rss") || lower.contains("<rdf:rdf") || lower.contains("<channel") { return .rss }
            return nil
        case "{", "[":
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
