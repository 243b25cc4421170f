import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoSupport

/// Reads the Autobahn GmbH API JSON (`{"warning":[...]}`, `roadworks`, `closure`, ...).
///
/// Decoding is lenient because the live API drifts from its spec: coordinates as strings or numbers,
/// `description` as an array of lines or one string, `extent`/`point` in either axis order.
struct AutobahnJSONReader: FeedReader {
    /// The services whose arrays hold incidents, and the category each implies.
    static let services: [String] = ["warning", "roadworks", "closure", "webcam", "parking_lorry", "electric_charging_station"]
    static let impliedCategory: [String: IncidentCategory] = ["roadworks": .roadworks, "closure": .closure]

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let streamer = JSONArrayStreamer(keys: Set(Self.services + [""]))
        var index = 0
        let topLevel: [String: String]
        do {
            topLevel = try streamer.scan(try input.makeStream()) { key, data in
                index += 1
                try handle(Self.decode(data, service: key ?? "warning", source: source, index: index))
            }
        } catch let error as JSONArrayStreamer.ScanError {
            throw FeedError.malformed(input.location, format: .autobahn, reason: error.description, entriesRead: index)
        }
        // An object with no service's array is another document (WZDx, Open511, GeoJSON) that
        // read nothing: refused, so that a snapshot of it ends nothing. (`[]` and a service's
        // empty array are an answer with nothing on.)
        if index == 0, !topLevel.isEmpty, !Self.services.contains(where: { topLevel[$0] != nil }) {
            throw FeedError.malformed(input.location, format: .autobahn,
                                      reason: "no service's array (\(Self.services.prefix(3).joined(separator: ", ")), …) at the top; "
                                          + "its members are \(JSONArrayStreamer.describeMembers(topLevel))", entriesRead: 0)
        }
    }

    static func decode(_ data: Data, service: String, source: String, index: Int) -> FeedEvent {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return .skipped(SkippedEntry(index: index, reason: "not a JSON object"))
        }
        let identifier = LooseJSON.string(object["identifier"]) ?? LooseJSON.string(object["id"])
        var fields = EntryFields()
        fields.id = identifier
        fields.title = LooseJSON.string(object["title"])
        let subtitle = LooseJSON.string(object["subtitle"])
        let description = LooseJSON.string(object["description"])
        fields.summary = [subtitle, description].compactMap { $0?.nilIfBlank }.joined(separator: " – ").nilIfEmpty
        fields.updated = LooseJSON.string(object["startTimestamp"]) ?? LooseJSON.string(object["updated"])
        fields.expires = LooseJSON.string(object["endTimestamp"]) ?? LooseJSON.string(object["expires"])
        fields.iconURL = LooseJSON.string(object["icon"])
        fields.weblink = LooseJSON.string(object["weblink"]) ?? LooseJSON.string(object["url"])
        fields.impliedCategory = impliedCategory[service]
        fields.fallbackCategory = LooseJSON.string(object["abnormalTrafficType"]).flatMap(trafficTypeCategory)

        if let coordinate = object["coordinate"] as? [String: Any] {
            fields.latitude = LooseJSON.string(coordinate["lat"])
            fields.longitude = LooseJSON.string(coordinate["long"] ?? coordinate["lon"] ?? coordinate["lng"])
        }
        var reference = Self.coordinate(fields.latitude, fields.longitude)
        if reference?.isNullIsland == true {
            // "0"/"0" means unknown: the point or extent may still say where, else the words.
            (reference, fields.latitude, fields.longitude) = (nil, nil, nil)
        }
        if let extent = LooseJSON.string(object["extent"]) {
            let numbers = extent.split(separator: ",").compactMap { Double(String($0).trimmed) }
            if numbers.count == 4 {
                let pairs = orient([(numbers[0], numbers[1]), (numbers[2], numbers[3])], near: reference)
                if let pairs, pairs[0] != pairs[1] { fields.segment = pairs }
            }
        }
        if reference == nil, let point = LooseJSON.string(object["point"]) {
            let numbers = point.split(separator: ",").compactMap { Double(String($0).trimmed) }
            if numbers.count == 2, let oriented = orient([(numbers[0], numbers[1])], near: nil) {
                fields.latitude = String(oriented[0].latitude)
                fields.longitude = String(oriented[0].longitude)
            }
        }
        fields.properties = LooseJSON.flatten(object, skipping: [
            "identifier", "title", "subtitle", "description", "coordinate", "startTimestamp", "icon", "extent", "point", "geometry",
        ])
        fields.properties["service"] = service
        // Germany's federal motorways: "de:A7" is this A7, not France's.
        fields.properties[Incident.countryProperty] = "de"
        do {
            return .incident(try fields.makeIncident(source: source, index: index))
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: identifier, reason: error.reason))
        }
    }

    private static func coordinate(_ lat: String?, _ lon: String?) -> Coordinate? {
        guard let lat, let lon else { return nil }
        return try? EntryFields.coordinate(lat, lon)
    }

    /// Reads number pairs as (lat, lon) or (lon, lat): the order that puts them nearest the
    /// reference coordinate; without one, latitude first as the API serves it today.
    private static func orient(_ pairs: [(Double, Double)], near reference: Coordinate?) -> [Coordinate]? {
        let latFirst = pairs.map { Coordinate(latitude: $0.0, longitude: $0.1) }
        let lonFirst = pairs.map { Coordinate(latitude: $0.1, longitude: $0.0) }
        func valid(_ cs: [Coordinate]) -> Bool { cs.allSatisfy { abs($0.latitude) <= 90 && abs($0.longitude) <= 180 } }
        guard let reference else { return valid(latFirst) ? latFirst : (valid(lonFirst) ? lonFirst : nil) }
        let a = valid(latFirst) ? Geodesic.distance(from: reference, to: latFirst[0]) : .infinity
        let b = valid(lonFirst) ? Geodesic.distance(from: reference, to: lonFirst[0]) : .infinity
        if a == .infinity && b == .infinity { return nil }
        return a <= b ? latFirst : lonFirst
    }

    private static func trafficTypeCategory(_ type: String) -> IncidentCategory? {
        switch type.uppercased() {
        case "STATIONARY_TRAFFIC": return .standstill
        case "QUEUING_TRAFFIC": return .queue
        case "SLOW_TRAFFIC", "HEAVY_TRAFFIC": return .slowTraffic
        default: return nil
        }
    }
}
