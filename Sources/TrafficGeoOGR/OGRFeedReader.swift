import Foundation
import TrafficGeoFeeds
import TrafficGeoModel

/// Reads incidents from any vector file GDAL/OGR opens: KML, GML (in its CRS), Shapefile (a
/// .shp beside its .dbf, or zipped), GeoPackage, FlatGeobuf, GPX, CSV with WKT, … Every layer is
/// read; a feature's attributes are columns, recognised as a CSV file's are (`CSVColumns`: named
/// with a field mapping, else by their names and contents, and said), and its geometry, brought
/// to WGS84 by GDAL, places it by the rule GeoJSON's does: a point is the position, a line's or
/// multi-line's first point starts it (the line is its segment), a polygon's point on its
/// surface places it (its outline kept for the map).
///
/// The native readers stay where a format has one: this reader is for `FeedFormat.gis`, what
/// no native reader claims (or `--format gis`, for any file GDAL reads).
public struct OGRFeedReader: FeedReader {
    /// The CRS of a layer that names none (`--crs`); a layer's own CRS wins. nil: WGS84.
    public var crs: String?
    /// Fields the user named (a field mapping: `title=Name`).
    public var fields: [CSVColumns.Role: String]
    /// Told what was recognised, once per layer ("layer roadworks (ESRI Shapefile, ETRS89 /
    /// UTM zone 32N): title ← name, …").
    public var note: ((FeedNote) -> Void)?

    public init(crs: String? = nil, fields: [CSVColumns.Role: String] = [:], note: ((FeedNote) -> Void)? = nil) {
        self.crs = crs
        self.fields = fields
        self.note = note
    }

    public func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let gdal: OGRLibrary
        do {
            gdal = try OGRLibrary.shared()
        } catch {
            throw FeedError.malformed(input.location, format: .gis, reason: error.description, entriesRead: 0)
        }
        gdal.errorReset()
        // A ZIP (a zipped shapefile, a KMZ) is opened through GDAL's virtual file system.
        let head = (try? input.head(4)) ?? Data()
        let path = head.starts(with: [0x50, 0x4B, 0x03, 0x04]) ? "/vsizip/" + input.fileURL.path : input.fileURL.path
        guard let dataset = gdal.openEx(path, OGRLibrary.vectorOnly, nil, nil, nil) else {
            let why = gdal.lastError().map { ": \($0)" } ?? ""
            throw FeedError.malformed(input.location, format: .gis,
                                      reason: "GDAL opens no vector data in it\(why) (KML, GML, Shapefile, GeoPackage, FlatGeobuf, GPX and the other vector formats of GDAL's `ogrinfo` are read)",
                                      entriesRead: 0)
        }
        defer { gdal.close(dataset) }
        let driver = gdal.driverShortName(gdal.datasetDriver(dataset)).map { String(cString: $0) } ?? "GDAL"
        let wgs84 = gdal.newSpatialReference(nil)
        defer { gdal.destroySpatialReference(wgs84) }
        _ = gdal.importFromEPSG(wgs84, 4326)
        gdal.setAxisMappingStrategy(wgs84, OGRLibrary.traditionalGISOrder)
        var index = 0
        for number in 0..<gdal.layerCount(dataset) {
            guard let layer = gdal.layer(dataset, number) else { continue }
            try readLayer(layer, of: input, driver: driver, wgs84: wgs84, gdal: gdal, source: source, index: &index, handle: handle)
        }
        if index == 0, gdal.layerCount(dataset) == 0 {
            throw FeedError.malformed(input.location, format: .gis, reason: "GDAL reads it as \(driver), with no layer of features", entriesRead: 0)
        }
    }

    private func readLayer(_ layer: OpaquePointer, of input: FeedInput, driver: String, wgs84: OpaquePointer?, gdal: OGRLibrary,
                           source: String, index: inout Int, handle: (FeedEvent) throws -> Void) throws {
        let name = gdal.layerName(layer).map { String(cString: $0) } ?? "layer"
        let definition = gdal.layerDefinition(layer)
        let fieldCount = Int(gdal.fieldCount(definition))
        let header = (0..<fieldCount).map { gdal.fieldName(gdal.fieldDefinition(definition, Int32($0))).map { String(cString: $0) } ?? "field\($0 + 1)" }
        let types = (0..<fieldCount).map { gdal.fieldType(gdal.fieldDefinition(definition, Int32($0))) }

        // The layer's CRS to WGS84 (longitude first, whatever the CRS's axis order): the layer's
        // own, else the one given for the feed, else WGS84 already.
        var layerCRS: OpaquePointer?
        if let own = gdal.layerSpatialReference(layer) {
            layerCRS = gdal.cloneSpatialReference(own)
        } else if let crs {
            layerCRS = gdal.newSpatialReference(nil)
            guard gdal.setFromUserInput(layerCRS, crs) == OGRLibrary.noError else {
                gdal.destroySpatialReference(layerCRS)
                throw FeedError.malformed(input.location, format: .gis, reason: "the CRS given, '\(crs)', is not one GDAL knows", entriesRead: index)
            }
        }
        defer { if let layerCRS { gdal.destroySpatialReference(layerCRS) } }
        var transformation: OpaquePointer?
        var crsName = "WGS 84"
        if let layerCRS {
            gdal.setAxisMappingStrategy(layerCRS, OGRLibrary.traditionalGISOrder)
            crsName = gdal.spatialReferenceName(layerCRS).map { String(cString: $0) } ?? "its CRS"
            if gdal.isSame(layerCRS, wgs84) == 0 {
                guard let made = gdal.newTransformation(layerCRS, wgs84) else {
                    throw FeedError.malformed(input.location, format: .gis,
                                              reason: "layer \(name): GDAL cannot bring \(crsName) to WGS 84\(gdal.lastError().map { ": \($0)" } ?? "")",
                                              entriesRead: index)
                }
                transformation = made
            }
        }
        defer { if let transformation { gdal.destroyTransformation(transformation) } }

        /// One feature's cells and its geometry as GeoJSON in WGS84 (nil: none, or it could not be brought there).
        func row(_ feature: OpaquePointer) -> (cells: [String], geometry: String?, problem: String?) {
            var cells: [String] = []
            cells.reserveCapacity(fieldCount)
            for i in 0..<fieldCount {
                let field = Int32(i)
                guard gdal.isFieldSetAndNotNull(feature, field) != 0 else { cells.append(""); continue }
                if types[i] == OGRLibrary.fieldDateTime || types[i] == OGRLibrary.fieldDate, let date = isoDate(feature, field, dateOnly: types[i] == OGRLibrary.fieldDate, gdal: gdal) {
                    cells.append(date)
                } else {
                    let text = gdal.fieldAsString(feature, field).map { String(cString: $0) } ?? ""
                    cells.append(TabularIncidents.missingWords.contains(text) ? "" : text.trimmingCharacters(in: .whitespacesAndNewlines))
                }
            }
            guard let geometry = gdal.featureGeometry(feature) else { return (cells, nil, nil) }
            // A feature's own failure is its problem (reported with it), not the layer's.
            if let transformation, gdal.transform(geometry, transformation) != OGRLibrary.noError {
                defer { gdal.errorReset() }
                return (cells, nil, "its geometry in \(crsName) cannot be brought to WGS 84\(gdal.lastError().map { ": \($0)" } ?? "")")
            }
            guard let json = gdal.exportToJSON(geometry) else {
                gdal.errorReset()
                return (cells, nil, "GDAL cannot write its geometry as GeoJSON")
            }
            defer { gdal.free(json) }
            return (cells, String(cString: json), nil)
        }

        gdal.resetReading(layer)
        gdal.errorReset()
        // A file that breaks off (a truncated GML, FlatGeobuf, shapefile) ends the features
        // with a failure GDAL notes, not with an error of its own: the features before are
        // kept, and the read fails with GDAL's reason, as a native reader's does.
        func checkFailure() throws {
            if let failure = gdal.lastFailure() {
                throw FeedError.malformed(input.location, format: .gis, reason: "layer \(name): \(failure)", entriesRead: index)
            }
        }
        // The first features, read ahead: columns are recognised by what they hold too.
        var sample: [(cells: [String], geometry: String?, problem: String?)] = []
        var exhausted = false
        while sample.count < TabularIncidents.sampleRows {
            guard let feature = gdal.nextFeature(layer) else { exhausted = true; break }
            sample.append(row(feature))
            gdal.destroyFeature(feature)
        }
        var exact = TabularIncidents.exactNames
        // The layer's geometry places its features: no attribute is taken for a coordinate
        // unless the user names it.
        let hasGeometry = sample.contains { $0.geometry != nil || $0.problem != nil }
        if hasGeometry { exact[.latitude] = nil; exact[.longitude] = nil }
        let chosen: CSVColumns
        do {
            chosen = try CSVColumns.choose(header: header, sample: sample.map(\.cells), named: fields, exact: exact,
                                           unrecognised: hasGeometry ? [.latitude, .longitude, .geometry] : [])
        } catch {
            throw FeedError.malformed(input.location, format: .gis, reason: "layer \(name): \(error.description)", entriesRead: index)
        }
        let said = chosen.describe(header: header)
        note?(FeedNote("layer \(name) (\(driver), \(crsName))" + (said.isEmpty ? "" : ": columns recognised: \(said)")))
        let table = TabularIncidents(header: header, chosen: chosen, sample: sample.map(\.cells))
        func emit(_ read: (cells: [String], geometry: String?, problem: String?)) throws {
            index += 1
            if let problem = read.problem {
                try handle(.skipped(SkippedEntry(index: index, reason: "layer \(name): \(problem)")))
                return
            }
            var event = table.event(row: read.cells, index: index, line: nil, source: source, geometry: read.geometry)
            // Which layer of the file it came from (a GeoPackage holds several).
            if case var .incident(incident) = event, incident.properties["layer"] == nil {
                incident.properties["layer"] = name
                event = .incident(incident)
            }
            try handle(event)
        }
        for read in sample { try emit(read) }
        if exhausted { return try checkFailure() }
        while let feature = gdal.nextFeature(layer) {
            let read = row(feature)
            gdal.destroyFeature(feature)
            try emit(read)
        }
        try checkFailure()
    }

    /// A date or date-time field as ISO 8601 ("2024-03-01T07:30:00Z", "2024-03-01"), with its
    /// zone when the field has one.
    private func isoDate(_ feature: OpaquePointer, _ field: Int32, dateOnly: Bool, gdal: OGRLibrary) -> String? {
        var year: Int32 = 0, month: Int32 = 0, day: Int32 = 0, hour: Int32 = 0, minute: Int32 = 0, zone: Int32 = 0
        var second: Float = 0
        guard gdal.fieldAsDateTime(feature, field, &year, &month, &day, &hour, &minute, &second, &zone) != 0, year > 0 else { return nil }
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        if dateOnly { return date }
        let time = String(format: "T%02d:%02d:%02d", hour, minute, Int(second))
        // GDAL's zone flag: 0 unknown, 1 local time, 100 UTC, 100 ± n: n quarter hours off UTC.
        switch zone {
        case 100: return date + time + "Z"
        case 2...: let offset = Int(zone) - 100
            return date + time + String(format: "%@%02d:%02d", offset < 0 ? "-" : "+", abs(offset) / 4, abs(offset) % 4 * 15)
        default: return date + time
        }
    }
}
