import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Reads a GeoJSON FeatureCollection (RFC 7946), streaming the `features` array one feature at a
/// time; any geometry places its feature (`GeoJSONGeometry`). A lone Feature is read too.
struct GeoJSONReader: FeedReader {
    /// The CRS of positions when the document names none (`--crs`); a legacy `crs` member
    /// (GeoJSON 2008, still written by older tools) is read when there is no `--crs`.
    var crs: String?
    /// Properties the user named as fields (a field mapping: `title=locationArea`).
    var fields: [CSVColumns.Role: String] = [:]
    /// Told which properties were recognised as which field.
    var note: ((FeedNote) -> Void)?

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let streamer = JSONArrayStreamer(keys: ["features", ""])
        var index = 0
        let topLevel: [String: String]
        let coordinates: FeedCoordinates?
        do {
            coordinates = try FeedCoordinates.make(crs ?? FeedCoordinates.legacyGeoJSONCRS(try input.head(65536)))
        } catch {
            throw FeedError.malformed(input.location, format: .geojson, reason: "\(error)", entriesRead: 0)
        }
        // The first features, read ahead: properties of other names (eventType, locationArea)
        // are recognised as a CSV file's columns are, from their names and contents.
        var pending: [Data] = []
        var recognised: RecognisedProperties?
        func flush() throws {
            let chosen = try recognised ?? RecognisedProperties(pending, fields: fields, location: input.location)
            if recognised == nil {
                recognised = chosen
                let said = chosen.columns.describe(header: chosen.header)
                if !said.isEmpty { note?(FeedNote("properties recognised: \(said)")) }
            }
            for data in pending {
                index += 1
                try handle(Self.decode(data, source: source, index: index, coordinates: coordinates, recognised: chosen))
            }
            pending.removeAll()
        }
        do {
            topLevel = try streamer.scan(try input.makeStream()) { _, data in
                pending.append(data)
                if recognised != nil || pending.count >= TabularIncidents.sampleRows { try flush() }
            }
            try flush()
        } catch let error as JSONArrayStreamer.ScanError {
            throw FeedError.malformed(input.location, format: .geojson, reason: error.description, entriesRead: index)
        }
        // A single Feature document: small by nature, decoded whole.
        if index == 0, topLevel["type"] == "\"Feature\"" {
            let data = try Data(contentsOf: input.fileURL)
            let chosen = try RecognisedProperties([data], fields: fields, location: input.location)
            let said = chosen.columns.describe(header: chosen.header)
            if !said.isEmpty { note?(FeedNote("properties recognised: \(said)")) }
            try handle(Self.decode(data, source: source, index: 1, coordinates: coordinates, recognised: chosen))
        } else if index == 0, !topLevel.isEmpty, topLevel["features"] == nil {
            // Another JSON document (Open511, the Autobahn API) read nothing: refused, so that a
            // snapshot of it ends nothing. (An empty FeatureCollection has nothing on.)
            throw FeedError.malformed(input.location, format: .geojson,
                                      reason: "no features array (GeoJSON is {\"type\": \"FeatureCollection\", \"features\": [...]} or a Feature); "
                                          + "its members are \(JSONArrayStreamer.describeMembers(topLevel))", entriesRead: 0)
        }
    }

    /// Which properties of a document's features are which field, beyond the names GeoJSON's
    /// reader has always read: chosen once, from the first features.
    struct RecognisedProperties {
        let header: [String]
        let columns: CSVColumns

        init(_ sample: [Data], fields: [CSVColumns.Role: String], location: String) throws {
            let properties = sample.compactMap { ((try? JSONSerialization.jsonObject(with: $0)) as? [String: Any])?["properties"] as? [String: Any] }
                .map(Self.flattened)
            var header: [String] = []
            var seen: Set<String> = []
            for p in properties { for key in p.keys.sorted() where seen.insert(key).inserted { header.append(key) } }
            self.header = header
            do {
                // The keys GeoJSON has always read are the fields they name, not candidates for others.
                columns = try CSVColumns.choose(header: header, sample: properties.map { p in header.map { p[$0] ?? "" } },
                                                named: fields, exact: TabularIncidents.exactNames, unrecognised: [.latitude, .longitude, .geometry])
            } catch {
                throw FeedError.malformed(location, format: .geojson, reason: error.description, entriesRead: 0)
            }
        }

        /// Whether any property was recognised as a field (else nothing is looked up per feature).
        var isEmpty: Bool { columns.columns.isEmpty }

        /// The property that is `role`'s, in a feature's flattened properties.
        func value(_ role: CSVColumns.Role, in properties: [String: String]) -> String? {
            guard let i = columns[role] else { return nil }
            return properties[header[i]].flatMap { TabularIncidents.missingWords.contains($0) ? nil : $0.nilIfBlank }
        }

        /// Properties with nested objects flattened to dotted names (`announcements.title`), the
        /// values of a list's items joined.
        static func flattened(_ properties: [String: Any]) -> [String: String] {
            var out: [String: String] = [:]
            func visit(_ value: Any, _ name: String, depth: Int) {
                guard depth < 8 else { return }
                switch value {
                case let object as [String: Any]:
                    for (key, member) in object { visit(member, name.isEmpty ? key : name + "." + key, depth: depth + 1) }
                case let list as [Any]:
                    for item in list { visit(item, name, depth: depth + 1) }
                default:
                    guard let text = LooseJSON.string(value), !text.isEmpty else { return }
                    out[name] = out[name].map { $0 + "; " + text } ?? String(text.prefix(4096))
                }
            }
            visit(properties, "", depth: 0)
            return out
        }
    }

    static func decode(_ data: Data, source: String, index: Int, coordinates conversion: FeedCoordinates? = nil,
                       recognised: RecognisedProperties? = nil) -> FeedEvent {
        guard let feature = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return .skipped(SkippedEntry(index: index, reason: "not a JSON object"))
        }
        let properties = feature["properties"] as? [String: Any] ?? [:]
        func text(_ keys: String...) -> String? {
            for key in keys { if let s = LooseJSON.string(properties[key]), !s.isEmpty { return s } }
            return nil
        }
        let featureID = LooseJSON.string(feature["id"]) ?? text("id", "identifier")
        var fields = EntryFields()
        fields.id = featureID
        fields.title = text("title", "name")
        fields.summary = text("summary", "subtitle", "description")
        fields.weblink = text("weblink", "url", "link")
        fields.iconURL = text("iconURL", "icon", "iconUrl")
        fields.updated = text("updated", "startTimestamp", "published")
        fields.expires = text("expires", "endTimestamp")
        fields.road = text("road")
        fields.category = text("category")
        // Fields the document names otherwise (recognised, or named by the user): where the
        // names above gave none.
        if let recognised, !recognised.isEmpty {
            let flat = RecognisedProperties.flattened(properties)
            func fill(_ field: inout String?, _ role: CSVColumns.Role) { if field == nil { field = recognised.value(role, in: flat) } }
            fill(&fields.title, .title)
            fill(&fields.summary, .summary)
            fill(&fields.road, .road)
            fill(&fields.category, .category)
            // A recognised date is taken when it reads as one (a list's first that does): a
            // property guessed to be a date does not cost its feature.
            func date(_ role: CSVColumns.Role) -> String? {
                recognised.value(role, in: flat)?.components(separatedBy: "; ").first { TimestampParser.parse($0) != nil }
            }
            if fields.updated == nil { fields.updated = date(.updated) }
            if fields.expires == nil { fields.expires = date(.expires) }
            fill(&fields.weblink, .weblink)
            fill(&fields.iconURL, .icon)
            if fields.id == nil { fields.id = recognised.value(.id, in: flat) }
            if fields.updated == nil { fields.updated = date(.starts) }
            if fields.title == nil { fields.title = TabularIncidents.title(category: fields.category, road: fields.road, summary: fields.summary) }
        }

        guard let geometry = feature["geometry"] as? [String: Any] else {
            if feature["geometry"] is NSNull || feature["geometry"] == nil {
                // RFC 7946 allows unlocated features; they are kept without a position.
                return finish(fields, properties: properties, featureID: featureID, source: source, index: index)
            }
            return .skipped(SkippedEntry(index: index, entryID: featureID, reason: "geometry is not an object"))
        }
        // Any geometry (GeoJSONGeometry): a point, a line's first point and the line, an area's
        // point on its surface and its outline; positions through the document's CRS if it has one.
        let convert: GeoJSONGeometry.Conversion = conversion.map { c in { x, y in try c.position(x: x, y: y) } } ?? GeoJSONGeometry.lonLat
        switch GeoJSONGeometry.placement(geometry, convert: convert) {
        case let .success(placed):
            fields.latitude = String(placed.position.latitude)
            fields.longitude = String(placed.position.longitude)
            fields.segment = placed.segment
        case let .failure(problem):
            // Kept without the position, the reason with it: its words may still say where.
            fields.positionProblem = problem.reason
        }
        return finish(fields, properties: properties, featureID: featureID, source: source, index: index)
    }

    private static func finish(_ fields: EntryFields, properties: [String: Any], featureID: String?, source: String, index: Int) -> FeedEvent {
        var fields = fields
        fields.properties = LooseJSON.flatten(properties, skipping: [
            "id", "identifier", "title", "name", "summary", "subtitle", "description", "weblink", "url", "link", "icon", "iconURL",
            "iconUrl", "updated", "startTimestamp", "published", "expires", "endTimestamp", "road", "category",
            // our own export's derived keys: reading an export back must not pile them up as properties
            "pinColor", "marker-color", "marker-symbol", "distanceMeters", "bearingDegrees", "coordinate",
        ])
        do {
            return .incident(try fields.makeIncident(source: source, index: index))
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: featureID, reason: error.reason))
        }
    }
}
