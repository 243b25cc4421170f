import Foundation
import TrafficGeoModel

/// The line of a GPX file (GPX 1.0 and 1.1, what navigation apps and route planners export):
/// its track points (`trk/trkseg/trkpt`, every track and segment in document order), or when it
/// has none its route points (`rte/rtept`). Waypoints (`wpt`) are places, not a line, and are
/// left out. Read with the same streaming parser and refusals as the feeds (no entities, no
/// network, libxml2's limits).
public enum GPXRoute {
    /// A GPX document that gave no line, and why.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The most points a route may have (a day's drive recorded every second is ~90,000).
    public static let maxPoints = 1_000_000

    public static func positions(in data: Data) throws -> [Coordinate] {
        let collector = GPXPointCollector()
        let parser = SAXParser(handler: collector)
        let ok = parser.parse(InputStream(data: data))
        if let refusal = collector.refusal.message ?? collector.problem { throw Problem(description: refusal) }
        guard ok else {
            let reason = parser.error.map { XMLFeedReader.describe(code: $0.code, message: $0.message, line: $0.line, column: $0.column) }
                ?? "not an XML document"
            throw Problem(description: "not a readable GPX document: \(reason)")
        }
        guard collector.sawGPX else { throw Problem(description: "not a GPX document (its root element is not <gpx>)") }
        let line = collector.trackPoints.isEmpty ? collector.routePoints : collector.trackPoints
        guard line.count >= 2 else {
            throw Problem(description: "a route needs at least two positions: the GPX document has \(line.count) track or route point\(line.count == 1 ? "" : "s")")
        }
        return line
    }
}

private final class GPXPointCollector: SAXHandler {
    enum Tag: Int { case other, gpx, trkpt, rtept }
    var trackPoints: [Coordinate] = []
    var routePoints: [Coordinate] = []
    var sawGPX = false
    var refusal = SAXRefusal()
    var problem: String?

    func tag(forElementName name: String) -> Int {
        switch name {
        case "gpx": Tag.gpx.rawValue
        case "trkpt": Tag.trkpt.rawValue
        case "rtept": Tag.rtept.rawValue
        default: Tag.other.rawValue
        }
    }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes) {
        let element = Tag(rawValue: tag) ?? .other
        switch element {
        case .gpx: sawGPX = true
        case .trkpt, .rtept:
            guard let lat = attributes["lat"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
                  let lon = attributes["lon"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
                  lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 else {
                problem = "line \(parser.lineNumber): a <\(qualifiedName)> has no lat and lon in degrees (lat -90 … 90, lon -180 … 180)"
                return parser.abort()
            }
            guard trackPoints.count + routePoints.count < GPXRoute.maxPoints else {
                problem = "the GPX document has more than \(GPXRoute.maxPoints) points; simplify the route first"
                return parser.abort()
            }
            let point = Coordinate(latitude: lat, longitude: lon)
            if element == .trkpt { trackPoints.append(point) } else { routePoints.append(point) }
        case .other:
            break
        }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {}
    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {}
    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        refusal.refuse(parser, "the document declares the \(external ? "external " : "")XML entity '\(name.prefix(40))'; a route has no business declaring entities (refused)")
    }
}
