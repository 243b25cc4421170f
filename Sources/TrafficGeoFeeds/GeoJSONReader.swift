import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Reads a GeoJSON FeatureCollection (RFC 7946), streaming the `features` array one feature at a
/// time; any geometry places its feature (`GeoJSONGeometry`). A lone Feature is read too.
struct GeoJSONReader: FeedReader {
    /// The CRS of positions when the document names none (`--crs`); a legacy `crs` member
    /// (GeoJSON 2008, still written by older tools) is read when there is no `--crs`.
    var crs: String?

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
        do {
            topLevel = try streamer.scan(try input.makeStream()) { _, data in
                index += 1
                try handle(Self.decode(data, source: source, index: index, coordinates: coordinates))
            }
        } catch let error as JSONArrayStreamer.ScanError {
            throw FeedError.malformed(input.location, format: .geojson, reason: error.description, entriesRead: index)
        }
        // A single Feature document: small by nature, decoded whole.
        if index == 0, topLevel["type"] == "\"Feature\"" {
            let data = try Data(contentsOf: input.fileURL)
            try handle(Self.decode(data, source: source, index: 1, coordinates: coordinates))
        } else if index == 0, !topLevel.isEmpty, topLevel["features"] == nil {
            // Another JSON document (Open511, the Autobahn API) read nothing: refused, so that a
            // snapshot of it ends nothing. (An empty FeatureCollection has nothing on.)
            throw FeedError.malformed(input.location, format: .geojson,
                                      reason: "no features array (GeoJSON is {\"type\": \"FeatureCollection\", \"features\": [...]} or a Feature); "
                                          + "its members are \(JSONArrayStreamer.describeMembers(topLevel))", entriesRead: 0)
        }
    }

    static func decode(_ data: Data, source: String, index: Int, coordinates conversion: FeedCoordinates? = nil) -> FeedEvent {
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
