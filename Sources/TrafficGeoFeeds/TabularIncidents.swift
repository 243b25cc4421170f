import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// A table's rows made into incidents, whatever holds the table: a CSV file (CSVFeedReader), a
/// GIS layer read through GDAL/OGR (TrafficGeoOGR's OGRFeedReader). The columns are chosen once
/// (`CSVColumns`: named by the user, else recognised by their names and contents); each row is
/// then one incident by the same rules, so that a KML placemark and a CSV row with the same
/// fields are the same incident.
package struct TabularIncidents {
    package let header: [String]

    /// Cells that mean "no value".
    package static let missingWords: Set<String> = ["NA", "N/A", "NULL", "null", "NaN"]

    /// A cell's text without markup, when it holds a tag.
    package static func plainText(_ text: String) -> String {
        // By bytes: Foundation's contains(String) was 4 % of reading a CSV file.
        guard text.utf8.contains(UInt8(ascii: "<")), text.utf8.contains(UInt8(ascii: ">")) else { return text }
        return HTMLText.plain(text).normalizedWhitespace
    }

    /// Rows read ahead to recognise columns by what they hold.
    package static let sampleRows = 50

    /// The names trafficgeo's CSV has always read, each one field whatever the rules say.
    package static let exactNames: [CSVColumns.Role: [String]] = [
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

    let chosen: CSVColumns
    /// x/y in another CRS (`--crs`); nil: latitude/longitude.
    let coordinates: FeedCoordinates?
    /// The columns some field was taken from; the rest are kept as properties.
    let known: Set<Int>
    /// Each date column's day-or-month order, from its sample (CSVDates).
    let dateOrders: [CSVColumns.Role: CSVDates]

    /// Rows whose positions are latitude and longitude (a GIS layer's geometry is brought to
    /// WGS84 before it reaches here).
    package init(header: [String], chosen: CSVColumns, sample: [[String]]) {
        self.init(header: header, chosen: chosen, coordinates: nil, sample: sample)
    }

    init(header: [String], chosen: CSVColumns, coordinates: FeedCoordinates?, sample: [[String]]) {
        self.header = header
        self.chosen = chosen
        self.coordinates = coordinates
        known = Set(chosen.columns.values).union(chosen.clockColumns.values).union(chosen.geometryColumns)
        dateOrders = Dictionary(uniqueKeysWithValues: [CSVColumns.Role.updated, .starts, .expires].compactMap { role in
            chosen[role].map { i in (role, CSVDates(sample: sample.compactMap { i < $0.count ? $0[i] : nil })) }
        })
    }

    /// A row as an incident, or as an entry skipped with its reason. `geometry`: the row's
    /// geometry as GeoJSON in longitude/latitude, when it has one outside its cells (a GIS
    /// layer's); a row with none is placed from its latitude/longitude or WKT columns.
    package func event(row: [String], index: Int, line: Int?, source: String, geometry: String? = nil) -> FeedEvent {
        event(row: row, index: index, line: line, source: source, placement: geometry.map { Self.parsedGeoJSON($0).flatMap { GeoJSONGeometry.placement($0) } })
    }

    /// The same, the row's geometry already placed (a record's GML).
    func event(row: [String], index: Int, line: Int?, source: String, placement given: Result<GeoJSONGeometry.Placement, PlacementProblem>?) -> FeedEvent {
        func value(_ i: Int?) -> String? { i.map { row[$0] }?.nilIfBlank }
        var fields = EntryFields()
        fields.id = value(chosen[.id])
        // Exports often carry the web page's markup in their texts ("<b>OBRA</b> en …").
        fields.title = value(chosen[.title]).map(Self.plainText)
        fields.summary = value(chosen[.summary]).map(Self.plainText)
        fields.latitude = value(chosen[.latitude])
        fields.longitude = value(chosen[.longitude])
        if let coordinates, let xText = fields.longitude, let yText = fields.latitude {
            if let x = DecimalText.double(xText), let y = DecimalText.double(yText) {
                fields.setPosition(x: x, y: y, convertedBy: coordinates)
            } else {
                fields.positionProblem = "x '\(xText.prefix(20))', y '\(yText.prefix(20))' are not numbers"
            }
        }
        // A geometry where the row gives no latitude and longitude: placed by the same rule as GeoJSON's.
        if fields.latitude == nil || fields.longitude == nil {
            let placement: Result<GeoJSONGeometry.Placement, PlacementProblem>?
            if let given {
                placement = given
            } else if let wkt = chosen.geometryColumns.lazy.compactMap({ value($0) }).first ?? value(chosen[.geometry]) {
                let convert: GeoJSONGeometry.Conversion = coordinates.map { c in { x, y in try c.position(x: x, y: y) } } ?? GeoJSONGeometry.lonLat
                placement = WKTGeometry.geoJSON(wkt).flatMap { GeoJSONGeometry.placement($0, convert: convert) }
            } else {
                placement = nil
            }
            switch placement {
            case let .success(placed):
                (fields.latitude, fields.longitude) = (String(placed.position.latitude), String(placed.position.longitude))
                fields.segment = placed.segment
            case let .failure(problem):
                fields.positionProblem = problem.reason
            case nil:
                break
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
        fields.road = value(chosen[.road])
        fields.category = value(chosen[.category])
        fields.weblink = value(chosen[.weblink])
        fields.iconURL = value(chosen[.icon])
        for (i, name) in header.enumerated() where !known.contains(i) && !row[i].isEmpty {
            fields.properties[name] = String(row[i].prefix(4096))
        }
        for (role, measure) in CSVColumns.Role.measures {
            if let text = value(chosen[role]) { fields.properties[measure.property] = String(text.prefix(64)) }
        }
        if let start = date(.starts) {
            // A start that is no date is the entry's problem under its own name (filling the
            // update with it made it read "updated: unreadable date").
            guard let began = TimestampParser.parse(start) else {
                return .skipped(SkippedEntry(index: index, entryID: fields.id, line: line, reason: "starts: unreadable date '\(start.prefix(40))'"))
            }
            fields.properties["valid_from"] = TimestampParser.format(began)
            // A report whose only time is its start was last told of then.
            if fields.updated == nil { fields.updated = start }
        }
        // No title column: the kind (its column's, else what the text says) and the road say
        // what it is ("Roadworks on I-35", "Closure on LP-375").
        if fields.title == nil { fields.title = Self.title(category: fields.category, road: fields.road, summary: fields.summary) }
        if fields.id == nil { fields.id = "row\(index)" }   // unique within the source, which is part of the identity
        do {
            return .incident(try fields.makeIncident(source: source, index: index))
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: fields.id, line: line, reason: error.reason))
        }
    }

    /// A title for an entry that has none, from its kind (its category's, else what its text
    /// says) and its road: "Roadworks on I-35", "Closure on LP-375", "Queue"; nil without either.
    static func title(category: String?, road: String?, summary: String?) -> String? {
        let known = category.flatMap { IncidentCategory(loose: $0) ?? CategoryClassifier.classify($0) } ?? CategoryClassifier.classify(summary)
        // Neither a road nor a kind column: the kind the text names, if it names one ("Queue").
        guard road != nil || category != nil || known != nil else { return nil }
        let kind = known.map { $0.rawValue.prefix(1).uppercased() + $0.rawValue.dropFirst() } ?? category ?? "Incident"
        return road.map { "\(kind) on \($0)" } ?? kind
    }

    /// The columns of a table, named by the user (`fields`) or recognised, with the refusals a
    /// table that cannot be read gets: positions in another CRS need x and y; a header naming
    /// nothing an incident is made of is no feed's.
    static func chooseColumns(header: [String], sample: [[String]], fields: [CSVColumns.Role: String], coordinates: FeedCoordinates?,
                              hasGeometry: Bool, location: String, format: FeedFormat) throws -> CSVColumns {
        var exact = exactNames
        if coordinates != nil {
            (exact[.longitude], exact[.latitude]) = (projectedAliases["x"], projectedAliases["y"])
        }
        var chosen: CSVColumns
        do {
            chosen = try CSVColumns.choose(header: header, sample: sample, named: fields, exact: exact, inDegrees: coordinates == nil)
        } catch {
            throw FeedError.malformed(location, format: format, reason: error.description, entriesRead: 0)
        }
        let positioned = hasGeometry || chosen[.geometry] != nil
        if coordinates == nil, !positioned, chosen[.latitude] == nil || chosen[.longitude] == nil {
            chosen.hint = projectedHint(header: header, sample: sample)
        }
        if let coordinates, chosen[.longitude] == nil || chosen[.latitude] == nil, !positioned {
            throw FeedError.malformed(location, format: format,
                                      reason: "positions in \(coordinates.crs), the CRS given for this feed, need x and y columns (or easting and northing); the header has \(header.joined(separator: ", ").prefix(200))",
                                      entriesRead: 0)
        }
        // A header that names nothing an incident is made of is not a feed's (random bytes with
        // a comma in the first line were read as 1.8 M rows of "Unknown Incident").
        guard chosen[.title] != nil || chosen[.summary] != nil || (chosen[.latitude] != nil && chosen[.longitude] != nil) || positioned else {
            throw FeedError.malformed(location, format: format,
                                      reason: "the header names no column trafficgeo reads (title or name, description, lat and lon, x and y, WKT geometry); it has \(String(header.joined(separator: ", ").unicodeScalars.filter { $0.value >= 0x20 }.prefix(120))); name them with a field mapping (ROLE=COLUMN)",
                                      entriesRead: 0)
        }
        return chosen
    }

    /// Columns named as x and y (or easting and northing) whose numbers are not degrees: metres
    /// of a projected CRS the feed does not name, which only the user can say. Nil when there
    /// are none.
    static func projectedHint(header: [String], sample: [[String]]) -> String? {
        let lowered = header.map { $0.lowercased() }
        func column(_ axis: String) -> Int? {
            projectedAliases[axis]!.lazy.compactMap { name in lowered.firstIndex(of: name) }.first
        }
        guard let x = column("x"), let y = column("y"), x != y else { return nil }
        func numbers(_ i: Int) -> [Double] { sample.compactMap { i < $0.count ? DecimalText.double($0[i]) : nil } }
        let xs = numbers(x), ys = numbers(y)
        guard !xs.isEmpty, !ys.isEmpty, (xs + ys).filter({ abs($0) > 180 }).count * 2 > xs.count + ys.count else { return nil }
        func first(_ i: Int) -> String { sample.lazy.compactMap { i < $0.count && DecimalText.double($0[i]) != nil ? $0[i] : nil }.first ?? "" }
        return "columns \(header[x]) and \(header[y]) hold numbers such as \(first(x)) and \(first(y)), not degrees: "
            + "metres of a projected CRS the feed does not name; given the publisher's CRS (EPSG:25832 for UTM zone 32N, EPSG:2056 for Switzerland, EPSG:27700 for Great Britain, …), they are read as easting and northing"
    }

    static let projectedAliases: [String: [String]] = [
        "x": ["easting", "east", "rechtswert", "x", "e", "lon", "lng", "long", "longitude"],
        "y": ["northing", "north", "hochwert", "y", "n", "lat", "latitude"],
    ]

    /// A GeoJSON geometry's text as the dictionary GeoJSONGeometry places.
    private static func parsedGeoJSON(_ text: String) -> Result<[String: Any], PlacementProblem> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let geometry = object as? [String: Any] else {
            return .failure(PlacementProblem("the geometry is not GeoJSON"))
        }
        return .success(geometry)
    }
}
