import Foundation
import TrafficGeoModel
import TrafficGeoPROJ

/// The CRS that CSV and GeoPackage output is written in: WGS84 longitude/latitude unless the user
/// asks for another (`--crs`), whose positions PROJ computes. PROJ is opened only for another CRS.
public final class OutputCRS {
    /// nil: WGS84 geographic, written as it is stored.
    public let description: CRSDescription?
    private let projector: Projector?

    public static var wgs84: OutputCRS { OutputCRS() }

    private init() {
        description = nil
        projector = nil
    }

    /// Another CRS: any PROJ definition (EPSG:25832, a PROJ string, WKT).
    public init(_ definition: String) throws(ProjectionError) {
        let projector = try Projector(source: "EPSG:4326", target: definition)
        self.projector = projector
        description = projector.description
    }

    public var isWGS84: Bool { projector == nil }

    /// Positions the CRS cannot hold, and one of them for the message: outside its area of use
    /// (widened by 3°, as on reading: a pole in Web Mercator, Tokyo in UTM zone 32N, where PROJ
    /// still gives numbers, meaningless ones), or where PROJ fails. Their rows are written
    /// without a position.
    public private(set) var failures = 0
    public private(set) var firstFailure: String?

    /// (x, y): easting and northing, or longitude and latitude; nil (counted in `failures`) when
    /// PROJ cannot project the position.
    public func position(_ c: Coordinate) -> (x: Double, y: Double)? {
        guard let projector else { return (c.longitude, c.latitude) }
        if let d = description, !d.covers(c) {
            failures += 1
            if firstFailure == nil {
                firstFailure = String(format: "%.5f, %.5f is outside where %@ is used", c.latitude, c.longitude, d.name)
            }
            return nil
        }
        do {
            let p = try projector.forward(c)
            return (p.x, p.y)
        } catch {
            failures += 1
            if firstFailure == nil { firstFailure = "\(error)" }
            return nil
        }
    }

    /// The names of the x and y columns.
    public var columnNames: (x: String, y: String) { description?.columnNames ?? ("longitude", "latitude") }

    /// Digits after the point: 6 for degrees (~0.1 m), 3 for metres.
    var digits: Int { description.map { $0.isGeographic ? 8 : 3 } ?? 6 }
}
