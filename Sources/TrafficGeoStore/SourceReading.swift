import Foundation
import TrafficGeoFeeds

/// How a source is read when an ingest of it says nothing of its columns: the `--field` mapping
/// and the `--crs` an earlier ingest of that source was given. The store keeps them by source
/// name (in `store_info`, under `storeKey(for:)`), so that `ingest --every`, a later file filed
/// under the same source (`--source-name`) and another process on the same store read the feed
/// as the user said it reads, without being told again. An ingest that gives `--field` or
/// `--crs` replaces what was kept; `--forget-reading` drops it.
public struct SourceReading: Sendable, Equatable, Codable {
    /// ROLE → column, as `--field ROLE=COLUMN` gave them (`CSVColumns.Role` raw values).
    public var fields: [String: String]
    /// The CRS of the source's x/y columns or positions, as `--crs` gave it.
    public var crs: String?

    public init(fields: [CSVColumns.Role: String] = [:], crs: String? = nil) {
        self.fields = Dictionary(uniqueKeysWithValues: fields.map { ($0.key.rawValue, $0.value) })
        self.crs = crs
    }

    public var isEmpty: Bool { fields.isEmpty && crs == nil }

    /// The mapping as the feed readers take it; a role this version does not know (a newer
    /// version kept it) is left out rather than failing the read.
    public var roles: [CSVColumns.Role: String] {
        Dictionary(uniqueKeysWithValues: fields.compactMap { key, column in CSVColumns.Role(rawValue: key).map { ($0, column) } })
    }

    /// In words: `title=advisorymessage, CRS EPSG:32632`.
    public var described: String {
        (fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + (crs.map { ["CRS \($0)"] } ?? []))
            .joined(separator: ", ")
    }

    /// The `store_info` key a source's reading is kept under.
    public static func storeKey(for source: String) -> String { "reading:" + source }

    /// JSON with sorted keys: the same reading is the same text.
    public var storedText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }

    /// nil for no text, or a text no version wrote (the reading is then as if none was kept).
    public init?(storedText text: String?) {
        guard let data = text?.data(using: .utf8), let reading = try? JSONDecoder().decode(SourceReading.self, from: data) else { return nil }
        self = reading
    }
}
