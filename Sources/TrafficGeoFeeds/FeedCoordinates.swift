import Foundation
import TrafficGeoModel
import TrafficGeoPROJ

/// Brings positions a feed gives in another CRS (`--crs`, or a GeoJSON file's legacy `crs`
/// member) to WGS84 with PROJ, and refuses those that land outside where the CRS is used: UTM
/// coordinates read as Gauss-Krüger, or easting and northing swapped, land far off, and a wrong
/// position is worse than none. Made on the reading thread (a PROJ context is not thread-safe).
final class FeedCoordinates {
    let crs: String
    private let projector: Projector

    /// nil for WGS84 longitude/latitude, which needs no PROJ.
    static func make(_ crs: String?) throws(ProjectionError) -> FeedCoordinates? {
        guard let crs, !Projector.isWGS84(crs) else { return nil }
        return try FeedCoordinates(crs)
    }

    private init(_ crs: String) throws(ProjectionError) {
        self.crs = crs
        projector = try Projector(source: crs, target: "EPSG:4326")
    }

    /// The WGS84 position of (x, y): east or longitude first, north or latitude second.
    func position(x: Double, y: Double) throws(Failure) -> Coordinate {
        guard x.isFinite, y.isFinite else { throw Failure(reason: "(\(x), \(y)) is not a position") }
        let lonLat: (x: Double, y: Double)
        do {
            lonLat = try projector.transform(x: x, y: y)
        } catch {
            throw Failure(reason: "(\(x), \(y)) in \(crs) cannot be brought to WGS84: \(error)")
        }
        let c: Coordinate
        do {
            c = try Coordinate(validatingLatitude: lonLat.y, longitude: lonLat.x)
        } catch {
            throw Failure(reason: "(\(x), \(y)) in \(crs) gives no valid WGS84 position")
        }
        if let d = projector.description, !d.covers(c) {
            let area = d.areaOfUse.map { String(format: " (its area of use: %.1f…%.1f°E, %.1f…%.1f°N)", $0.west, $0.east, $0.south, $0.north) } ?? ""
            throw Failure(reason: String(format: "(%.3f, %.3f) in %@ lands at %.5f, %.5f, outside where %@ is used%@: wrong CRS, or x and y swapped?",
                                         x, y, crs, c.latitude, c.longitude, d.name, area))
        }
        return c
    }

    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The CRS a legacy GeoJSON `crs` member names (GeoJSON 2008: `{"type": "name",
    /// "properties": {"name": "urn:ogc:def:crs:EPSG::25832"}}` or `{"type": "EPSG",
    /// "properties": {"code": 25832}}`), from the document's first bytes; RFC 7946 dropped the member.
    static func legacyGeoJSONCRS(_ head: Data) -> String? {
        let text = String(decoding: head, as: UTF8.self)
        guard let member = text.range(of: #""crs"\s*:\s*\{[^{}]*\{[^{}]*\}[^{}]*\}"#, options: .regularExpression) else { return nil }
        let object = String(text[member].drop(while: { $0 != "{" }))
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(object.utf8)) as? [String: Any],
              let properties = parsed["properties"] as? [String: Any] else { return nil }
        if let name = properties["name"] as? String, !name.isEmpty { return name }
        if let code = properties["code"] as? Int { return "EPSG:\(code)" }
        if let code = properties["code"] as? String, !code.isEmpty { return "EPSG:\(code)" }
        return nil
    }
}

extension EntryFields {
    /// The entry's position, given as (x, y) in `coordinates`' CRS, in WGS84; when it cannot be
    /// converted, the reason, and the entry keeps no position.
    mutating func setPosition(x: Double, y: Double, convertedBy coordinates: FeedCoordinates) {
        do {
            let c = try coordinates.position(x: x, y: y)
            (latitude, longitude) = (String(c.latitude), String(c.longitude))
        } catch {
            positionProblem = error.reason
        }
    }
}
