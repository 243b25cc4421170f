import Foundation
import TrafficGeoSupport

/// Reads incidents from CSV with a header row. Recognised columns (any case): title, summary or
/// description, lat/latitude, lon/lng/longitude, id, updated, expires, road, category,
/// weblink/url/link, icon. Every other column is kept as a property. The separator (`,` `;` tab)
/// is taken from the header line.
struct CSVFeedReader: FeedReader {
    static let aliases: [String: [String]] = [
        "id": ["id", "identifier", "guid"],
        "title": ["title", "name"],
        "summary": ["summary", "description", "subtitle", "text"],
        "lat": ["lat", "latitude", "y"],
        "lon": ["lon", "lng", "long", "longitude", "x"],
        "updated": ["updated", "starttimestamp", "published", "date", "time"],
        "expires": ["expires", "endtimestamp"],
        "road": ["road"],
        "category": ["category", "type"],
        "weblink": ["weblink", "url", "link"],
        "icon": ["icon", "iconurl"],
    ]

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let head = String(decoding: try input.head(4096), as: UTF8.self)
        let headerLine = head.prefix(while: { $0 != "\n" && $0 != "\r" })
        let separator: Character = [";", "\t", ","].max(by: { a, b in
            headerLine.filter { $0 == a }.count < headerLine.filter { $0 == b }.count
        }) ?? ","
        let reader = CSVRecordReader(stream: try input.makeStream(), separator: separator.asciiValue!)
        let header: [String]
        do {
            guard let first = try reader.next() else {
                throw FeedError.malformed(input.location, format: .csv, reason: "the file is empty (no header row)", entriesRead: 0)
            }
            header = first.fields.map(\.trimmed)
        } catch let error as CSVRecordReader.ReadError {
            throw FeedError.malformed(input.location, format: .csv, reason: error.description, entriesRead: 0)
        }
        let lowered = header.map { $0.lowercased() }
        var column: [String: Int] = [:]
        for (field, names) in Self.aliases {
            if let i = names.lazy.compactMap({ lowered.firstIndex(of: $0) }).first { column[field] = i }
        }
        let known = Set(column.values)
        // Looked up once, not per row.
        let columns = (id: column["id"], title: column["title"], summary: column["summary"], lat: column["lat"],
                       lon: column["lon"], updated: column["updated"], expires: column["expires"], road: column["road"],
                       category: column["category"], weblink: column["weblink"], icon: column["icon"])
        var index = 0
        while true {
            let record: CSVRecordReader.Record
            do {
                guard let next = try reader.next() else { break }
                record = next
            } catch let error as CSVRecordReader.ReadError {
                throw FeedError.malformed(input.location, format: .csv, reason: error.description, entriesRead: index)
            }
            let row = record.fields.map(\.trimmed)
            if row.count == 1, row[0].isEmpty { continue } // blank line
            index += 1
            let line = record.line
            guard row.count == header.count else {
                try handle(.skipped(SkippedEntry(index: index, line: line, reason: "has \(row.count) fields, the header has \(header.count)")))
                continue
            }
            func value(_ i: Int?) -> String? { i.map { row[$0] }?.nilIfBlank }
            var fields = EntryFields()
            fields.id = value(columns.id)
            fields.title = value(columns.title)
            fields.summary = value(columns.summary)
            fields.latitude = value(columns.lat)
            fields.longitude = value(columns.lon)
            fields.updated = value(columns.updated)
            fields.expires = value(columns.expires)
            fields.road = value(columns.road)
            fields.category = value(columns.category)
            fields.weblink = value(columns.weblink)
            fields.iconURL = value(columns.icon)
            for (i, name) in header.enumerated() where !known.contains(i) && !row[i].isEmpty {
                fields.properties[name] = String(row[i].prefix(4096))
            }
            if fields.id == nil { fields.id = "row\(index)" }   // unique within the source, which is part of the identity
            let event: FeedEvent
            do {
                event = .incident(try fields.makeIncident(source: source, index: index))
            } catch {
                event = .skipped(SkippedEntry(index: index, entryID: fields.id, line: line, reason: error.reason))
            }
            try handle(event)
        }
    }
}
