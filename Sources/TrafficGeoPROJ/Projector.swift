import CProj
import Foundation
import TrafficGeoModel
import TrafficGeoProjection

/// A point in a projected or geocentric CRS (metres for the store's EPSG:4978).
public struct ProjectedPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double
}

/// Transforms WGS84 coordinates with PROJ (`proj_create_crs_to_crs` + `proj_normalize_for_visualization`).
///
///     let projector = try Projector(target: "EPSG:4978")
///     let p = try projector.forward(Coordinate(latitude: 50.94, longitude: 6.96))
///
/// A PROJ context is not thread-safe: use one `Projector` per thread or task (it is not `Sendable`).
public final class Projector {
    public let sourceCRS: String
    public let targetCRS: String
    private let context: OpaquePointer
    private let transform: OpaquePointer

    public convenience init(source: String = "EPSG:4326", target: String) throws(ProjectionError) {
        try self.init(source: source, target: target, allowDirectPipeline: true)
    }

    /// `allowDirectPipeline: false` always asks PROJ's database (tests compare the two ways).
    init(source: String, target: String, allowDirectPipeline: Bool) throws(ProjectionError) {
        guard let ctx = proj_context_create() else { throw .contextCreationFailed }
        // PROJ logs through stderr by default; errors reach us through proj_context_errno instead.
        proj_log_level(ctx, PJ_LOG_NONE)
        let transform: OpaquePointer
        if allowDirectPipeline, let pipeline = Projector.directPipelines["\(source)>\(target)"] {
            guard let direct = proj_create(ctx, pipeline) else {
                let message = Projector.errorMessage(ctx)
                proj_context_destroy(ctx)
                throw .crsNotUnderstood(source: source, target: target, reason: message)
            }
            transform = direct
        } else {
            guard let raw = proj_create_crs_to_crs(ctx, source, target, nil) else {
                let message = Projector.errorMessage(ctx)
                proj_context_destroy(ctx)
                throw .crsNotUnderstood(source: source, target: target, reason: message)
            }
            // EPSG:4326 is latitude-first by definition; normalising makes the order lon, lat like every map API.
            guard let normalized = proj_normalize_for_visualization(ctx, raw) else {
                proj_destroy(raw)
                proj_context_destroy(ctx)
                throw .crsNotUnderstood(source: source, target: target, reason: "cannot normalise axis order")
            }
            proj_destroy(raw)
            transform = normalized
        }
        context = ctx
        self.transform = transform
        sourceCRS = source
        targetCRS = target
    }

    /// The operations PROJ itself chooses for these CRS pairs, written out so that creating the
    /// projector does not open proj.db: WGS84 geographic to WGS84 geocentric is a pure conversion
    /// (no datum shift). Opening the database was most of a fresh `trafficgeo near` process's time.
    /// Input order lon, lat as after `proj_normalize_for_visualization`; tests check both ways agree.
    static let directPipelines: [String: String] = [
        "EPSG:4326>EPSG:4978": "+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad +step +proj=cart +ellps=WGS84",
    ]

    deinit {
        proj_destroy(transform)
        proj_context_destroy(context)
    }

    /// Projects one WGS84 coordinate (height 0 on the ellipsoid).
    public func forward(_ c: Coordinate) throws(ProjectionError) -> ProjectedPoint {
        let out = proj_trans(transform, PJ_FWD, proj_coord(c.longitude, c.latitude, 0, 0))
        guard out.xyz.x.isFinite, out.xyz.y.isFinite, out.xyz.z.isFinite else {
            throw .transformFailed(c, reason: Projector.errorMessage(context))
        }
        return ProjectedPoint(x: out.xyz.x, y: out.xyz.y, z: out.xyz.z)
    }

    /// Projects a projected point back to WGS84.
    public func inverse(_ p: ProjectedPoint) throws(ProjectionError) -> Coordinate {
        let out = proj_trans(transform, PJ_INV, proj_coord(p.x, p.y, p.z, 0))
        guard out.lpz.lam.isFinite, out.lpz.phi.isFinite else {
            throw .inverseFailed(reason: Projector.errorMessage(context))
        }
        return Coordinate(latitude: out.xyz.y, longitude: out.xyz.x)
    }

    /// Projects many coordinates in one PROJ call (faster than one `forward` each for bulk ingest).
    public func forward(_ coordinates: [Coordinate]) throws(ProjectionError) -> [ProjectedPoint] {
        var buffer = coordinates.map { proj_coord($0.longitude, $0.latitude, 0, 0) }
        let count = buffer.count
        buffer.withUnsafeMutableBufferPointer { ptr in
            _ = proj_trans_array(transform, PJ_FWD, count, ptr.baseAddress)
        }
        var result: [ProjectedPoint] = []
        result.reserveCapacity(count)
        for (i, p) in buffer.enumerated() {
            guard p.xyz.x.isFinite, p.xyz.y.isFinite, p.xyz.z.isFinite else {
                throw .transformFailed(coordinates[i], reason: Projector.errorMessage(context))
            }
            result.append(ProjectedPoint(x: p.xyz.x, y: p.xyz.y, z: p.xyz.z))
        }
        return result
    }

    private static func errorMessage(_ ctx: OpaquePointer) -> String {
        let code = proj_context_errno(ctx)
        guard code != 0, let text = proj_context_errno_string(ctx, code) else { return "unknown PROJ error" }
        return String(cString: text)
    }
}

/// Errors from PROJ, with what a user can do about them.
public enum ProjectionError: Error, Sendable, CustomStringConvertible {
    case contextCreationFailed
    case crsNotUnderstood(source: String, target: String, reason: String)
    case transformFailed(Coordinate, reason: String)
    case inverseFailed(reason: String)

    public var description: String {
        switch self {
        case .contextCreationFailed:
            return "PROJ could not create a context (out of memory?)"
        case let .crsNotUnderstood(source, target, reason):
            return "PROJ cannot transform \(source) to \(target): \(reason). Is proj-data installed (proj.db)? Set PROJ_DATA to its folder."
        case let .transformFailed(c, reason):
            return "PROJ could not project lat \(c.latitude), lon \(c.longitude): \(reason)"
        case let .inverseFailed(reason):
            return "PROJ could not unproject a point: \(reason)"
        }
    }
}

/// PROJ's own geodesics (`geodesic.h`): what `Geodesic` (GeographicLib) is checked against.
public enum PROJGeodesic {
    /// Distance in metres and the azimuths at both ends, from `a` to `b`.
    public static func inverse(from a: Coordinate, to b: Coordinate) -> (distance: Double, azimuth1: Double, azimuth2: Double) {
        var g = geod_geodesic()
        geod_init(&g, Geodesic.wgs84SemiMajorAxis, Geodesic.wgs84Flattening)
        var s12 = 0.0, azi1 = 0.0, azi2 = 0.0
        geod_inverse(&g, a.latitude, a.longitude, b.latitude, b.longitude, &s12, &azi1, &azi2)
        return (s12, azi1, azi2)
    }
}
