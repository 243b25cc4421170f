import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Reads a WZDx feed (the US Work Zone Data Exchange, a GeoJSON profile): v4.x with each
/// feature's `core_details`, and v3 with flat properties. One incident per road event, streamed
/// one feature at a time: work zones are roadworks, detours and restrictions their own kinds;
/// the LineString or MultiPoint geometry (upstream first) is the segment, its first point the
/// position.
struct WZDxReader: FeedReader {
    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let streamer = JSONArrayStreamer(keys: ["features"])
        var index = 0, roadEvents = 0
        let topLevel: [String: String]
        do {
            topLevel = try streamer.scan(try input.makeStream()) { _, data in
                index += 1
                let event = Self.decode(data, source: source, index: index)
                if case .incident = event { roadEvents += 1 }
                try handle(event)
            }
        } catch let error as JSONArrayStreamer.ScanError {
            throw FeedError.malformed(input.location, format: .wzdx, reason: error.description, entriesRead: index)
        }
        // Not a WZDx feed at all (`--format wzdx` on other JSON): refused, so that a snapshot of it
        // ends nothing. (Refused with no entries read: the store keeps none of what was handed over.)
        if topLevel["feed_info"] == nil, topLevel["road_event_feed_info"] == nil, roadEvents == 0 {
            throw FeedError.malformed(input.location, format: .wzdx,
                                      reason: "no feed_info and no road events (WZDx features carry core_details, or v3's road_event_id)", entriesRead: 0)
        }
    }

    static func decode(_ data: Data, source: String, index: Int, now: Date = Date()) -> FeedEvent {
        guard let feature = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return .skipped(SkippedEntry(index: index, reason: "not a JSON object"))
        }
        let properties = feature["properties"] as? [String: Any] ?? [:]
        // v4: the shared fields in core_details; v3: all flat (road_event_id, road_name, event_type).
        let core = properties["core_details"] as? [String: Any] ?? properties
        func text(_ object: [String: Any], _ key: String) -> String? { LooseJSON.string(object[key])?.trimmed.nilIfEmpty }
        let id = LooseJSON.string(feature["id"])?.trimmed.nilIfEmpty ?? text(properties, "road_event_id") ?? text(core, "road_event_id")
        guard let id else { return .skipped(SkippedEntry(index: index, reason: "a road event without an id")) }

        // A device feed's features (arrow boards, cameras) are not road events.
        if text(core, "device_type") != nil {
            return .skipped(SkippedEntry(index: index, entryID: id, reason: "a field device (\(text(core, "device_type")!.prefix(40))), not a road event: read the road event feed"))
        }
        let eventType = text(core, "event_type") ?? "work-zone"
        let category: IncidentCategory = switch eventType {
        case "detour": .detour
        case "restriction": .restriction
        default: .roadworks
        }
        var roads = (core["road_names"] as? [Any])?.compactMap { LooseJSON.string($0)?.trimmed.nilIfEmpty } ?? []
        if roads.isEmpty, let road = text(core, "road_name") ?? text(properties, "road_name") { roads = [road] }
        if let number = text(properties, "road_number"), !roads.contains(number) { roads.append(number) }
        // "unknown" (every direction of some feeds) is no direction, and no word of a title.
        let direction = PlaceholderText.meaningful(text(core, "direction") ?? text(properties, "direction"))
        let description = text(core, "description") ?? text(properties, "description")

        var details: [String: String] = [:]
        if !roads.isEmpty { details["road_name"] = roads.joined(separator: ", ") }
        if let direction { details["direction"] = direction }
        details["record_types"] = eventType
        if let start = text(properties, "start_date") ?? text(core, "start_date") {
            details["valid_from"] = TimestampParser.parse(start).map(TimestampParser.format) ?? start
        }
        if let impact = text(properties, "vehicle_impact") { details["vehicle_impact"] = impact }
        if let lanes = properties["lanes"] as? [[String: Any]] {
            // Travel lanes only: a closed shoulder, sidewalk or bike lane restricts no lane of traffic.
            let notTravel: Set<String> = ["shoulder", "sidewalk", "bike-lane", "parking", "median"]
            let closed = lanes.filter {
                (LooseJSON.string($0["status"]) ?? "").contains("closed") && !notTravel.contains(LooseJSON.string($0["type"]) ?? "general")
            }.count
            if closed > 0 { details["lanes_restricted"] = String(closed) }
        }
        for key in ["beginning_cross_street", "ending_cross_street", "work_zone_type", "location_method", "event_status"] {
            if let v = text(properties, key) ?? text(core, key) { details[key] = v }
        }
        if let from = LooseJSON.string(properties["beginning_milepost"]) { details["beginning_milepost"] = from }
        if let to = LooseJSON.string(properties["ending_milepost"]) { details["ending_milepost"] = to }
        if let name = text(core, "name") { details["name"] = name }
        if let sourceID = text(core, "data_source_id") { details["data_source_id"] = sourceID }

        var fields = EntryFields()
        fields.id = id
        let kind = eventType == "work-zone" ? "Work zone" : eventType.prefix(1).uppercased() + eventType.dropFirst().replacingOccurrences(of: "-", with: " ")
        var title = kind
        if !roads.isEmpty { title += " on " + roads.joined(separator: " / ") }
        if let direction { title += " " + direction }
        fields.title = title
        fields.summary = description
        fields.updated = text(core, "update_date") ?? text(properties, "update_date")
        fields.expires = text(properties, "end_date") ?? text(core, "end_date")
        let roadsNamed = RoadReference.roads(inFields: roads)
        fields.road = roadsNamed.first
        fields.impliedCategory = category
        fields.category = nil
        fields.properties = details

        if let geometry = feature["geometry"] as? [String: Any] {
            // Any geometry (GeoJSONGeometry): a line's first point (upstream) and the line, an
            // area's point on its surface and its outline.
            switch GeoJSONGeometry.placement(geometry) {
            case let .success(placed):
                fields.segment = placed.segment
                fields.latitude = String(placed.position.latitude)
                fields.longitude = String(placed.position.longitude)
            case let .failure(reason):
                fields.positionProblem = reason.reason
            }
        }
        do {
            var incident = try fields.makeIncident(source: source, index: index)
            // The feed's own road name ("I-76") is the road, never a number found in the description.
            // Every road it names is filterable (I-80 and I-35 where they run together).
            // "I-87 Northway" is the I-87, "Merritt Parkway/CT 15" the CT-15 and the Merritt Parkway.
            if !roadsNamed.isEmpty { incident.setRoads(roadsNamed) }
            incident.category = category
            // v3's event_status says when a road event is over.
            if let status = details["event_status"]?.lowercased(), status == "completed" || status == "cancelled" {
                incident.endedAt = min(incident.updated ?? now, now)
            }
            return .incident(incident)
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: id, reason: error.reason))
        }
    }
}
