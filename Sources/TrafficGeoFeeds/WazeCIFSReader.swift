import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Reads Waze's Closure and Incident Feed Specification (CIFS), what many cities publish for
/// Waze for Cities, in JSON (`{"incidents": [...]}`) and XML (`<incidents><incident id="…">`).
///
/// Each incident has an `id`, a `type` (ACCIDENT, CONSTRUCTION, HAZARD, ROAD_CLOSED, …) and a
/// `subtype`, a `polyline` ("lat lon lat lon …", latitude first), the `street`, a `direction`
/// (ONE_DIRECTION, BOTH_DIRECTIONS), `starttime`/`endtime`, `creationtime`/`updatetime` and a
/// `description`; CIFS 2 nests `street`, `polyline` and `direction` in a `location` object,
/// CIFS 1 has them flat. A feed lists one closure once per stretch of its polyline under the
/// same id: those are one incident, its first stretch's position, every stretch's street.
struct WazeCIFSReader: FeedReader {
    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        var incidents: [WazeIncident] = []
        if FeedFormat.contentFamily(try input.head()) == "XML" {
            let names = RecordNames(known: [])
            let outcome = try XMLRecordReading.read(input, format: .waze, names: names, recordNames: ["incident"]) { tree, _, _ in
                incidents.append(WazeIncident(tree: tree))
            }
            if outcome.records == 0, outcome.rootName != "incidents" {
                throw FeedError.malformed(input.location, format: .waze, reason: "the document's root is <\((outcome.rootName ?? "").prefix(60))>, not <incidents>", entriesRead: 0)
            }
        } else {
            let streamer = JSONArrayStreamer(keys: ["incidents"])
            let topLevel: [String: String]
            do {
                topLevel = try streamer.scan(try input.makeStream()) { _, data in
                    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                    incidents.append(object.map(WazeIncident.init(json:)) ?? WazeIncident())
                }
            } catch let error as JSONArrayStreamer.ScanError {
                throw FeedError.malformed(input.location, format: .waze, reason: error.description, entriesRead: incidents.count)
            }
            if topLevel["incidents"] == nil {
                throw FeedError.malformed(input.location, format: .waze, reason: "no incidents array (a CIFS feed is {\"incidents\": [...]}); "
                                          + "its members are \(JSONArrayStreamer.describeMembers(topLevel))", entriesRead: 0)
            }
        }
        // One incident per id: the stretches of one closure, merged in the order given.
        var order: [String] = []
        var byID: [String: WazeIncident] = [:]
        for (k, incident) in incidents.enumerated() {
            guard let id = incident.id else {
                try handle(.skipped(SkippedEntry(index: k + 1, reason: "an incident without an id")))
                continue
            }
            if var first = byID[id] {
                first.absorb(incident)
                byID[id] = first
            } else {
                byID[id] = incident
                order.append(id)
            }
        }
        for (k, id) in order.enumerated() { try handle(Self.incident(byID[id]!, source: source, index: k + 1)) }
    }

    /// CIFS types and subtypes to categories.
    static func category(type: String?, subtype: String?) -> IncidentCategory {
        let sub = (subtype ?? "").uppercased()
        switch (type ?? "").uppercased() {
        case "ACCIDENT": return .accident
        case "CONSTRUCTION": return .roadworks
        case "ROAD_CLOSED": return .closure
        case "JAM": return sub.contains("STAND_STILL") ? .standstill : .queue
        case "HAZARD":
            if sub.contains("WEATHER") { return .weather }
            if sub.contains("OBJECT") || sub.contains("ROAD_KILL") || sub.contains("CAR_STOPPED") { return .obstacle }
            return .danger
        case "POLICE", "EVENT": return .event
        default: return .other
        }
    }

    static func incident(_ w: WazeIncident, source: String, index: Int) -> FeedEvent {
        var fields = EntryFields()
        fields.id = w.id
        let category = Self.category(type: w.type, subtype: w.subtype)
        // "Road closed (construction) on Schillerstraße": the kind in words, then the street.
        let kind = (w.type ?? "incident").lowercased().replacingOccurrences(of: "_", with: " ")
        var title = kind.prefix(1).uppercased() + kind.dropFirst()
        if let sub = PlaceholderText.meaningful(w.subtype), let type = w.type, sub.uppercased().hasPrefix(type.uppercased() + "_") {
            let detail = sub.dropFirst(type.count + 1).lowercased().replacingOccurrences(of: "_", with: " ")
            if !detail.isEmpty { title += " (\(detail))" }
        }
        if let street = w.streets.first { title += " on " + street }
        fields.title = title
        fields.summary = PlaceholderText.meaningful(w.description)
        fields.updated = w.updated ?? w.created
        fields.expires = w.end
        var details: [String: String] = [:]
        if let direction = PlaceholderText.meaningful(w.direction) { details["direction"] = direction.lowercased().replacingOccurrences(of: "_", with: " ") }
        if let start = w.start { details["valid_from"] = TimestampParser.parse(start).map(TimestampParser.format) ?? start }
        details["record_types"] = [w.type, w.subtype].compactMap { PlaceholderText.meaningful($0) }.joined(separator: ", ").nilIfEmpty
        if !w.streets.isEmpty { details["road_name"] = w.streets.joined(separator: ", ") }
        if let reference = w.reference { details["reference"] = reference }
        fields.properties = details
        switch w.polyline.map(Self.polyline) {
        case let .success(points)?:
            fields.latitude = String(points[0].latitude)
            fields.longitude = String(points[0].longitude)
            // A closure's stretch; a point given twice (a spot, written as CIFS's two-point minimum) is a point.
            if Set(points.map { "\($0.latitude) \($0.longitude)" }).count >= 2 { fields.segment = points }
        case let .failure(problem)?:
            fields.positionProblem = problem.reason
        case nil:
            break
        }
        do {
            var incident = try fields.makeIncident(source: source, index: index)
            incident.category = category
            let roads = RoadReference.roads(inFields: w.streets)
            if !roads.isEmpty { incident.setRoads(roads) }
            return .incident(incident)
        } catch {
            return .skipped(SkippedEntry(index: index, entryID: w.id, reason: error.reason))
        }
    }

    /// CIFS's polyline: latitude and longitude pairs separated by spaces ("48.89 9.18 48.90 9.19").
    static func polyline(_ text: String) -> Result<[Coordinate], PlacementProblem> {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "," || $0.isNewline || $0 == "\t" }).map { DecimalText.double(String($0)) }
        guard !numbers.isEmpty, numbers.count % 2 == 0, !numbers.contains(where: { $0 == nil }) else {
            return .failure(PlacementProblem("a polyline that is not latitude and longitude pairs ('\(text.prefix(40))')"))
        }
        var points: [Coordinate] = []
        for k in stride(from: 0, to: numbers.count, by: 2) {
            do { points.append(try Coordinate(validatingLatitude: numbers[k]!, longitude: numbers[k + 1]!)) } catch {
                return .failure(PlacementProblem("a polyline with a position out of range (\(numbers[k]!), \(numbers[k + 1]!))"))
            }
        }
        return .success(points)
    }
}

/// One CIFS incident as read, from JSON or XML.
struct WazeIncident {
    var id, type, subtype, description, direction, start, end, created, updated, reference, polyline: String?
    var streets: [String] = []

    init() {}

    init(json o: [String: Any]) {
        func text(_ object: [String: Any]?, _ key: String) -> String? { object.flatMap { LooseJSON.string($0[key])?.trimmed.nilIfEmpty } }
        let location = o["location"] as? [String: Any]
        id = text(o, "id"); type = text(o, "type"); subtype = text(o, "subtype"); description = text(o, "description")
        start = text(o, "starttime"); end = text(o, "endtime"); created = text(o, "creationtime"); updated = text(o, "updatetime")
        reference = text(o, "reference") ?? text(o["source"] as? [String: Any], "reference")
        direction = text(location, "direction") ?? text(o, "direction")
        polyline = text(location, "polyline") ?? text(o, "polyline")
        if let street = text(location, "street") ?? text(o, "street") { streets = [street] }
    }

    init(tree: RecordTree) {
        let names = tree.names
        func child(_ name: String, in node: Int32 = 0) -> String? {
            guard let n = names.existing(name) else { return nil }
            return tree.children(of: node).first { tree.name($0) == n }.flatMap { tree.text($0) }
        }
        let location = names.existing("location").flatMap { n in tree.children(of: 0).first { tree.name($0) == n } }
        id = tree.attribute(0, "id") ?? child("id"); type = child("type"); subtype = child("subtype"); description = child("description")
        start = child("starttime"); end = child("endtime"); created = child("creationtime"); updated = child("updatetime")
        reference = child("reference")
        direction = location.flatMap { child("direction", in: $0) } ?? child("direction")
        polyline = location.flatMap { child("polyline", in: $0) } ?? child("polyline")
        if let street = location.flatMap({ child("street", in: $0) }) ?? child("street") { streets = [street] }
    }

    /// Another stretch of the same closure: its street joins, its times widen this one's.
    mutating func absorb(_ other: WazeIncident) {
        for street in other.streets where !streets.contains(street) { streets.append(street) }
        if polyline == nil { polyline = other.polyline }
        if description == nil { description = other.description }
        if let u = other.updated, (updated.flatMap(TimestampParser.parse) ?? .distantPast) < (TimestampParser.parse(u) ?? .distantPast) { updated = u }
    }
}
