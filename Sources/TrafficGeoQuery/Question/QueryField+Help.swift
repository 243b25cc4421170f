import TrafficGeoModel
import TrafficGeoStore

/// What each field asks, said once: the command line's `--help` and serve's OpenAPI document
/// (its parameters' descriptions and schemas) read it, so an option and the parameter of the
/// same field cannot drift apart. Other fields are named the surface's way (`--active-at`,
/// `active-at`).
extension QueryField {
    public func help(on surface: Surface) -> String {
        func name(_ field: QueryField) -> String { field.name(on: surface) }
        let api = surface != .commandLine
        let list = "a comma list, or \(api ? "the parameter" : "the option") repeated"
        let time = "'now', 'today', 'yesterday', an ISO 8601 time, or relative such as -2h / -3d / -1w"
        if let measure { return measure.help() }
        switch self {
        case .lat:
            return "Latitude in degrees, -90 … 90 (WGS84)" + (api ? ": where distances are measured from (with \(name(.lon))). Features then carry distance_m and bearing_deg (a page of items is ordered by it)." : ".")
        case .lon:
            return "Longitude in degrees, -180 … 180 (WGS84)" + (api ? ": where distances are measured from (with \(name(.lat)))." : ".")
        case .radius:
            return "Only incidents within this distance of \(name(.lat))/\(name(.lon)) (WGS84 geodesic, boundary included), with its unit: 500m, 25km, 3mi "
                + "(a bare number is refused: it was taken for metres by people who meant kilometres); more than 0."
        case .bbox:
            return "Only incidents inside this box: west,south,east,north in CRS84 degrees (edges included); west > east crosses the antimeridian."
                + (api ? " A 6-number box's heights are ignored." : " The box in one, instead of the four edges.")
        case .route:
            let forms = api ? "a saved route's name (one the server was started with), a WKT LINESTRING (lon lat, …) or a GeoJSON LineString"
                            : "a GeoJSON LineString or a GPX file"
            return "Only incidents within \(name(.buffer)) of this route, in the order a driver from its start meets them (along_m: the metres driven to each; "
                + "distance_m: how far off the route it is). The route: \(forms)."
        case .buffer:
            return "With \(name(.route)): how far from it an incident may be, with its unit: 500m, 2km, 1mi (default 2km)."
        case .activeAt:
            return "Only incidents in effect at this time (begun by then — the feed's own start, else the last update — not expired, not ended, within their "
                + "recurring schedule, and if they give no end, not unconfirmed): \(time), or +1h."
        case .since:
            return "Only incidents updated at or after this time: \(time)."
        case .until:
            return "Only incidents updated before this time: \(time)."
        case .road:
            return "Only incidents on these roads, on any road they are on (A4 = a4 = A 4 = BAB 4; M1, A1(M), I-25, US-40, CO-7, N7, E40; "
                + "fr:A7 is A7 where the feed names France; \(list))."
        case .category:
            return "Only incidents of these categories (\(list); German names such as Unfall or Baustelle too): "
                + IncidentCategory.allCases.map(\.rawValue).joined(separator: ", ") + "."
        case .search:
            return "Only incidents whose title, summary or road contain every word (case, accents and umlauts folded: Koeln finds Köln)."
        case .source:
            return "Only incidents read from this source (the name `trafficgeo stats` lists)."
        case .minConfidence:
            return "Only incidents placed at least this surely, 0 … 1 (geocoded ones; positions a feed gave always pass, incidents with no position never)."
        case .precision:
            return "Only geocoded incidents of these precisions (\(list): \(GeocodePrecision.allCases.map(\.rawValue).joined(separator: ", "))); positions a feed gave always pass, and an incident with no position is none."
        case .minSeverity:
            return "Only incidents at least this severe: \(Severity.allCases.map(\.name).joined(separator: ", ")) (the feeds' words map onto this scale: "
                + "minor = low, moderate = medium, major = high); those whose feed gives no severity are left out."
        case .unconfirmedAfter:
            return "With \(name(.activeAt)): a report that gives no end is no longer in effect once it has not been heard of for this long — not updated, "
                + "not first read, not listed by a snapshot of its feed (7d unless given; 'never' keeps it in effect). A file read once does not stay 'active now' for ever."
        case .reports:
            return "Answer with every report the feeds gave, each naming its event (the property event), instead of the events they make "
                + "(one per real-world incident, however many feeds report it; the property reports lists them)."
        case .sort:
            return "Order of results: distance (nearest first, where the question has a point; the default then), updated (newest first), expires (soonest first), "
                + "title, severity (most severe first); ties keep a stable order."
        default:
            // Each field above, or a measure's (its declaration says it).
            return ""
        }
    }

    /// The JSON Schema of the field's value as a query parameter (serve's OpenAPI document).
    public var parameterSchema: String {
        let distance = #"{"type":"string","pattern":"^(0*[1-9][0-9]*(\\.[0-9]+)?|0*\\.[0-9]*[1-9][0-9]*|0+\\.[0-9]*[1-9][0-9]*)(m|km|mi)$"}"#
        if let measure { return measure.parameterSchema }
        switch self {
        case .lat: return #"{"type":"number","minimum":-90,"maximum":90}"#
        case .lon: return #"{"type":"number","minimum":-180,"maximum":180}"#
        case .radius: return distance
        case .buffer: return String(distance.dropLast()) + #","default":"2km"}"#
        case .bbox: return #"{"type":"array","minItems":4,"maxItems":6,"items":{"type":"number"}}"#
        case .minConfidence: return #"{"type":"number","minimum":0,"maximum":1}"#
        case .minSeverity:
            let words = Severity.allCases.map(\.name) + ["none", "minor", "moderate", "major", "severe"]
            return #"{"type":"string","enum":["# + words.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
        case .unconfirmedAfter: return #"{"type":"string","default":"7d"}"#
        case .reports: return #"{"type":"boolean"}"#
        case .sort: return #"{"type":"string","pattern":"^\\+?("# + QuerySort.allCases.map(\.rawValue).joined(separator: "|") + #")$"}"#
        default: return #"{"type":"string"}"#
        }
    }
}
