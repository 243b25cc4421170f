import Foundation
import TrafficGeoSupport

/// Reads incidents from CSV with a header row. Recognised columns (any case): title, summary or
/// description, lat/latitude, lon/lng/longitude, id, updated, expires, road, category,
/// weblink/url/link, icon. Every other column is kept as a property. The separator (`,` `;` tab)
/// is taken from the header line. With a CRS (`--crs`), positions come from x/y (or
/// easting/northing, rechtswert/hochwert; longitude/latitude for a geographic CRS) in that CRS.
struct CSVFeedReader: FeedReader {
    /// Cells that mean "no value".
    static let missingWords: Set<String> = ["NA", "N/A", "NULL", "null", "NaN"]

    /// The CRS of the x/y columns; nil: latitude/longitude in WGS84.
    var crs: String?

    static let projectedAliases: [String: [String]] = [
        "x": ["easting", "east", "rechtswert", "x", "e", "lon", "lng", "long", "longitude"],
        "y": ["northing", "north", "hochwert", "y", "n", "lat", "latitude"],
    ]

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
        var aliases = Self.aliases
        let coordinates: FeedCoordinates?
        do {
            coordinates = try FeedCoordinates.make(crs)
        } catch {
            throw FeedError.malformed(input.location, format: .csv, reason: "\(error)", entriesRead: 0)
        }
        if coordinates != nil {
            (aliases["lon"], aliases["lat"]) = (Self.projectedAliases["x"], Self.projectedAliases["y"])
        }
        for (field, names) in aliases {
            if let i = names.lazy.compactMap({ lowered.firstIndex(of: $0) }).first { column[field] = i }
        }
        if let coordinates, column["lon"] == nil || column["lat"] == nil {
            throw FeedError.malformed(input.location, format: .csv,
                                      reason: "positions in \(coordinates.crs), the CRS given for this feed, need x and y columns (or easting and northing); the header has \(header.joined(separator: ", ").prefix(200))",
                                      entriesRead: 0)
        }
        // A header that names nothing an incident is made of is not a feed's (random bytes with
        // a comma in the first line were read as 1.8 M rows of "Unknown Incident").
        guard column["title"] != nil || column["summary"] != nil || (column["lat"] != nil && column["lon"] != nil) else {
            throw FeedError.malformed(input.location, format: .csv,
                                      reason: "the header names no column trafficgeo reads (title or name, description, lat and lon, x and y); it has \(String(header.joined(separator: ", ").unicodeScalars.filter { $0.value >= 0x20 }.prefix(120)))",
                                      entriesRead: 0)
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
            // A missing value as R and spreadsheets write it ("NA", "N/A", "NULL") is no value:
            // the Autobahn export's delay_minutes said "NA" on 55,000 rows.
            let row = record.fields.map { Self.missingWords.contains($0.trimmed) ? "" : $0.trimmed }
            if row.count == 1, row[0].isEmpty { continue } // blank line
            index += 1
            let line = record.line
            guard row.count == header.count else {
                try handle(.skipped(SkippedEntry(index: index, line: line, reason: "has \(row.count) fields, the header has \(header.count)")))
                continue
            }
            // Control bytes (other than tab and the line breaks of quoted fields) are binary data, not text.
            if let binary = row.firstIndex(where: { BinaryText.hasControlBytes($0, allowingLineBreaks: true) }) {
                try handle(.skipped(SkippedEntry(index: index, line: line, reason: "binary data (control bytes) in column '\(header[binary].prefix(40))'")))
                continue
            }
            func value(_ i: Int?) -> String? { i.map { row[$0] }?.nilIfBlank }
            var fields = EntryFields()
            fields.id = value(columns.id)
            fields.title = value(columns.title)
            fields.summary = value(columns.summary)
            fields.latitude = value(columns.lat)
            fields.longitude = value(columns.lon)
            if let coordinates, let xText = fields.longitude, let yText = fields.latitude {
                if let x = DecimalText.double(xText), let y = DecimalText.double(yText) {
                    fields.setPosition(x: x, y: y, convertedBy: coordinates)
                } else {
                    fields.positionProblem = "x '\(xText.prefix(20))', y '\(yText.prefix(20))' are not numbers"
                }
            }
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
