import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Reads incidents from CSV with a header row. Which column is which field (`CSVColumns`): the
/// names trafficgeo has always read (title, summary or description, lat/latitude,
/// lon/lng/longitude, id, updated, expires, road, category, weblink/url/link, icon), the columns
/// the user names (a field mapping: `title=advisorymessage`), and columns recognised by their names'
/// words and their contents (head_latitude, road_event_id, carretera, fechaFin, a column of WKT
/// geometry); what was recognised is said (`note`). Every other column is kept as a property.
/// The separator (`,` `;` tab) is taken from the header line. With a CRS (`--crs`), positions
/// come from x/y (or easting/northing, rechtswert/hochwert; longitude/latitude for a geographic
/// CRS) in that CRS, and WKT geometry is in that CRS too.
struct CSVFeedReader: FeedReader {
    /// Cells that mean "no value".
    static let missingWords: Set<String> = ["NA", "N/A", "NULL", "null", "NaN"]

    /// The CRS of the x/y columns; nil: latitude/longitude in WGS84.
    var crs: String?
    /// Columns the user named (a field mapping).
    var fields: [CSVColumns.Role: String] = [:]
    /// Told which columns were recognised, once per file ("title ← name, lat ← head_latitude").
    var note: ((String) -> Void)?

    /// A cell's text without markup, when it holds a tag.
    static func plainText(_ text: String) -> String {
        guard text.contains("<"), text.contains(">") else { return text }
        return HTMLText.plain(text).normalizedWhitespace
    }

    /// Rows read ahead to recognise columns by what they hold.
    static let sampleRows = 50

    static let projectedAliases: [String: [String]] = [
        "x": ["easting", "east", "rechtswert", "x", "e", "lon", "lng", "long", "longitude"],
        "y": ["northing", "north", "hochwert", "y", "n", "lat", "latitude"],
    ]

    /// The names trafficgeo's CSV has always read, each one field whatever the rules say.
    static let exactNames: [CSVColumns.Role: [String]] = [
        .id: ["id", "identifier", "guid"],
        .title: ["title", "name"],
        .summary: ["summary", "description", "subtitle", "text"],
        .latitude: ["lat", "latitude", "y"],
        .longitude: ["lon", "lng", "long", "longitude", "x"],
        .updated: ["updated", "starttimestamp", "published", "date", "time"],
        .expires: ["expires", "endtimestamp"],
        .road: ["road"],
        .category: ["category", "type"],
        .weblink: ["weblink", "url", "link"],
        .icon: ["icon", "iconurl"],
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
        let coordinates: FeedCoordinates?
        do {
            coordinates = try FeedCoordinates.make(crs)
        } catch {
            throw FeedError.malformed(input.location, format: .csv, reason: "\(error)", entriesRead: 0)
        }
        var exact = Self.exactNames
        if coordinates != nil {
            (exact[.longitude], exact[.latitude]) = (Self.projectedAliases["x"], Self.projectedAliases["y"])
        }
        // The first rows, read ahead: columns are recognised by what they hold too.
        var sample: [CSVRecordReader.Record] = []
        var readError: CSVRecordReader.ReadError?
        do {
            while sample.count < Self.sampleRows, let next = try reader.next() { sample.append(next) }
        } catch let error as CSVRecordReader.ReadError {
            readError = error
        }
        let chosen: CSVColumns
        do {
            chosen = try CSVColumns.choose(header: header, sample: sample.map { $0.fields.map(\.trimmed) }, named: fields, exact: exact)
        } catch {
            throw FeedError.malformed(input.location, format: .csv, reason: error.description, entriesRead: 0)
        }
        let said = chosen.describe(header: header)
        if !said.isEmpty { note?("columns recognised: \(said)") }
        if let coordinates, chosen[.longitude] == nil || chosen[.latitude] == nil, chosen[.geometry] == nil {
            throw FeedError.malformed(input.location, format: .csv,
                                      reason: "positions in \(coordinates.crs), the CRS given for this feed, need x and y columns (or easting and northing); the header has \(header.joined(separator: ", ").prefix(200))",
                                      entriesRead: 0)
        }
        // A header that names nothing an incident is made of is not a feed's (random bytes with
        // a comma in the first line were read as 1.8 M rows of "Unknown Incident").
        guard chosen[.title] != nil || chosen[.summary] != nil || (chosen[.latitude] != nil && chosen[.longitude] != nil) || chosen[.geometry] != nil else {
            throw FeedError.malformed(input.location, format: .csv,
                                      reason: "the header names no column trafficgeo reads (title or name, description, lat and lon, x and y, WKT geometry); it has \(String(header.joined(separator: ", ").unicodeScalars.filter { $0.value >= 0x20 }.prefix(120))); name them with a field mapping (ROLE=COLUMN)",
                                      entriesRead: 0)
        }
        let known = Set(chosen.columns.values).union(chosen.clockColumns.values).union(chosen.geometryColumns)
        // Looked up once, not per row.
        let columns = (id: chosen[.id], title: chosen[.title], summary: chosen[.summary], lat: chosen[.latitude],
                       lon: chosen[.longitude], updated: chosen[.updated], expires: chosen[.expires], road: chosen[.road],
                       category: chosen[.category], weblink: chosen[.weblink], icon: chosen[.icon], geometry: chosen[.geometry],
                       starts: chosen[.starts])
        let convert: GeoJSONGeometry.Conversion = coordinates.map { c in { x, y in try c.position(x: x, y: y) } } ?? GeoJSONGeometry.lonLat
        // Each date column's day-or-month order, from its sample (CSVDates).
        let dateOrders: [CSVColumns.Role: CSVDates] = Dictionary(uniqueKeysWithValues: [CSVColumns.Role.updated, .starts, .expires].compactMap { role in
            chosen[role].map { i in (role, CSVDates(sample: sample.compactMap { i < $0.fields.count ? $0.fields[i].trimmed : nil })) }
        })
        var index = 0
        var buffered = sample[...]
        while true {
            let record: CSVRecordReader.Record
            if let next = buffered.popFirst() {
                record = next
            } else {
                if let readError { throw FeedError.malformed(input.location, format: .csv, reason: readError.description, entriesRead: index) }
                do {
                    guard let next = try reader.next() else { break }
                    record = next
                } catch let error as CSVRecordReader.ReadError {
                    throw FeedError.malformed(input.location, format: .csv, reason: error.description, entriesRead: index)
                }
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
            // Exports often carry the web page's markup in their texts ("<b>OBRA</b> en …").
            fields.title = value(columns.title).map(Self.plainText)
            fields.summary = value(columns.summary).map(Self.plainText)
            fields.latitude = value(columns.lat)
            fields.longitude = value(columns.lon)
            if let coordinates, let xText = fields.longitude, let yText = fields.latitude {
                if let x = DecimalText.double(xText), let y = DecimalText.double(yText) {
                    fields.setPosition(x: x, y: y, convertedBy: coordinates)
                } else {
                    fields.positionProblem = "x '\(xText.prefix(20))', y '\(yText.prefix(20))' are not numbers"
                }
            }
            // A WKT geometry where the row gives no latitude and longitude: placed by the same rule as GeoJSON's.
            if fields.latitude == nil || fields.longitude == nil, let wkt = chosen.geometryColumns.lazy.compactMap({ value($0) }).first ?? value(columns.geometry) {
                switch WKTGeometry.geoJSON(wkt).flatMap({ GeoJSONGeometry.placement($0, convert: convert) }) {
                case let .success(placed):
                    (fields.latitude, fields.longitude) = (String(placed.position.latitude), String(placed.position.longitude))
                    fields.segment = placed.segment
                case let .failure(problem):
                    fields.positionProblem = problem.reason
                }
            }
            // A date as the row writes it (CSVDates: 23/10/2023, 04/02/2024 08:43:42 PM), with its
            // time of day if that has a column of its own; a placeholder ("?", "N/A") is none. One
            // that is no date stays as written, and the entry is skipped with the reason, as in
            // every format.
            func date(_ role: CSVColumns.Role) -> String? {
                guard let i = chosen[role], let raw = value(i).flatMap(PlaceholderText.meaningful) else { return nil }
                let text = chosen.clockColumns[role].flatMap { value($0).flatMap(PlaceholderText.meaningful) }.map { raw + " " + $0 } ?? raw
                return dateOrders[role]?.normalized(text) ?? dateOrders[role]?.normalized(raw) ?? raw
            }
            fields.updated = date(.updated)
            fields.expires = date(.expires)
            fields.road = value(columns.road)
            fields.category = value(columns.category)
            fields.weblink = value(columns.weblink)
            fields.iconURL = value(columns.icon)
            for (i, name) in header.enumerated() where !known.contains(i) && !row[i].isEmpty {
                fields.properties[name] = String(row[i].prefix(4096))
            }
            if let start = date(.starts) {
                fields.properties["valid_from"] = TimestampParser.parse(start).map(TimestampParser.format) ?? start
                // A report whose only time is its start was last told of then.
                if fields.updated == nil { fields.updated = start }
            }
            // No title column: the kind (its column's, else what the text says) and the road say
            // what it is ("Roadworks on I-35", "Closure on LP-375").
            if fields.title == nil, let road = fields.road ?? fields.category {
                let named = fields.category.flatMap { IncidentCategory(loose: $0) ?? CategoryClassifier.classify($0) }
                let category = named ?? CategoryClassifier.classify(fields.summary)
                let kind = category.map { $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst() } ?? fields.category ?? "Incident"
                fields.title = fields.road == nil ? kind : "\(kind) on \(road)"
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
