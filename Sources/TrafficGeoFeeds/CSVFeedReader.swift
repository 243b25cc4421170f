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
    /// The CRS of the x/y columns; nil: latitude/longitude in WGS84.
    var crs: String?
    /// Columns the user named (a field mapping).
    var fields: [CSVColumns.Role: String] = [:]
    /// Told which columns were recognised, once per file ("title ← name, lat ← head_latitude").
    var note: ((FeedNote) -> Void)?

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
        // The first rows, read ahead: columns are recognised by what they hold too.
        var sample: [CSVRecordReader.Record] = []
        var readError: CSVRecordReader.ReadError?
        do {
            while sample.count < TabularIncidents.sampleRows, let next = try reader.next() { sample.append(next) }
        } catch let error as CSVRecordReader.ReadError {
            readError = error
        }
        let chosen = try TabularIncidents.chooseColumns(header: header, sample: sample.map { $0.fields.map(\.trimmed) }, fields: fields,
                                                         coordinates: coordinates, hasGeometry: false, location: input.location, format: .csv)
        let said = chosen.describe(header: header)
        if !said.isEmpty { note?(FeedNote("columns recognised: \(said)")) }
        if let hint = chosen.hint { note?(FeedNote(hint, setting: .coordinateSystem)) }
        let table = TabularIncidents(header: header, chosen: chosen, coordinates: coordinates,
                                     sample: sample.map { $0.fields.map(\.trimmed) })
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
            let row = record.fields.map { TabularIncidents.missingWords.contains($0.trimmed) ? "" : $0.trimmed }
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
            try handle(table.event(row: row, index: index, line: line, source: source))
        }
    }
}
