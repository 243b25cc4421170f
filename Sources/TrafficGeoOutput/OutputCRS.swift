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

    /// (x, y): easting and northing, or longitude and latitude.
    public func position(_ c: Coordinate) throws(ProjectionError) -> (x: Double, y: Double) {
        guard let projector else { return (c.longitude, c.latitude) }
        let p = try projector.forward(c)
        return (p.x, p.y)
    }

    /// The names of the x and y columns.
    public var columnNames: (x: String, y: String) { description?.columnNames ?? ("longitude", "latitude") }

    /// Digits after the point: 6 for degrees (~0.1 m), 3 for metres.
    var digits: Int { description.map { $0.isGeographic ? 8 : 3 } ?? 6 }
}
