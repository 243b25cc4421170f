import Foundation
import TrafficGeoModel

/// A WGS84 position in geocentric (ECEF, EPSG:4978) metres on the ellipsoid surface, with the
/// local frame and radii of curvature the short-line distance needs.
///
/// Computed in closed form rather than through PROJ: the query engine makes one per candidate
/// row (hundreds per query), and the spatial index decides which block owns a row by the same
/// numbers wherever it is asked (writer and reader must agree to the last bit; a PROJ call is
/// also ~10× slower). `GeocentricPointTests` checks it against PROJ's EPSG:4326 → EPSG:4978.
///
/// Its hot parts are `@inlinable`: the SQLite store calls them for every candidate row from
/// another module, where a plain call would not be inlined (10-NN and radius queries slowed by
/// a tenth when the stages became modules).
public struct GeocentricPoint: Sendable, Equatable {
    public var x: Double, y: Double, z: Double
    @usableFromInline var sinLat: Double, cosLat: Double, sinLon: Double, cosLon: Double
    /// Meridional (M) and prime-vertical (N) radii of curvature, metres.
    @usableFromInline var meridionalRadius: Double, normalRadius: Double

    /// WGS84's semi-major axis and first eccentricity squared, as constants the compiler folds.
    @inlinable static var a: Double { 6_378_137.0 }
    @inlinable package static var e2: Double { (1 / 298.257223563) * (2 - 1 / 298.257223563) }

    @inlinable
    public init(_ c: Coordinate) {
        let phi = c.latitude * (.pi / 180), lambda = c.longitude * (.pi / 180)
        sinLat = sin(phi); cosLat = cos(phi); sinLon = sin(lambda); cosLon = cos(lambda)
        let w2 = 1 - Self.e2 * sinLat * sinLat
        normalRadius = Self.a / w2.squareRoot()
        meridionalRadius = normalRadius * (1 - Self.e2) / w2
        x = normalRadius * cosLat * cosLon
        y = normalRadius * cosLat * sinLon
        z = normalRadius * (1 - Self.e2) * sinLat
    }

    /// The straight-line distance through the Earth: a lower bound of the geodesic distance.
    @inlinable
    public func chord(to p: GeocentricPoint) -> Double {
        let dx = p.x - x, dy = p.y - y, dz = p.z - z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// The curvature of the normal section through this point along the direction (dx, dy, dz):
    /// Euler's formula 1/R = cos²α/M + sin²α/N, α the azimuth of the direction.
    @inlinable
    func normalCurvature(_ dx: Double, _ dy: Double, _ dz: Double) -> Double {
        let east = -sinLon * dx + cosLon * dy
        let north = -sinLat * cosLon * dx - sinLat * sinLon * dy + cosLat * dz
        let h2 = east * east + north * north
        guard h2 > 0 else { return 1 / normalRadius }
        return (north * north / meridionalRadius + east * east / normalRadius) / h2
    }
}

extension Geodesic {
    /// Chords up to this length take the short-line formula; longer ones Karney's algorithm.
    @inlinable static var shortLineLimit: Double { 30_000.0 }

    /// The geodesic distance between two nearby points from their chord c: the arc of a curve of
    /// curvature κ over a chord c is c (1 + c²κ²/24 + 3c⁴κ⁴/640 + …) (exact for a circle); κ² is
    /// the mean of the normal-section curvatures at both ends along the chord. Against Karney's
    /// algorithm (`geod_inverse`) on 400,000 random pairs at every latitude, 1 cm to 30 km, the
    /// largest difference is 5 nm (docs/benchmarks.md), at a tenth of the cost. Returns nil for
    /// chords over `shortLineLimit` (the neglected terms grow as c⁵): use `distance(from:to:)`.
    @inlinable
    public static func shortLineDistance(_ a: GeocentricPoint, _ b: GeocentricPoint) -> Double? {
        let dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z
        let c2 = dx * dx + dy * dy + dz * dz
        let c = c2.squareRoot()
        guard c <= shortLineLimit else { return nil }
        let ka = a.normalCurvature(dx, dy, dz), kb = b.normalCurvature(dx, dy, dz)
        let x = c2 * (ka * ka + kb * kb) / 2
        return c * (1 + x / 24 + 3 * x * x / 640)
    }

    /// The geodesic distance, by the short-line formula when the points are near each other and
    /// by Karney's algorithm otherwise. Both are exact to well under a micrometre.
    @inlinable
    public static func distance(_ a: GeocentricPoint, _ b: GeocentricPoint, from ca: Coordinate, to cb: Coordinate) -> Double {
        shortLineDistance(a, b) ?? distance(from: ca, to: cb)
    }

    /// The initial bearing from `a` to `b` in degrees, [0, 360). For a short line away from the
    /// poles it is the direction of the chord in `a`'s horizontal plane: that is the azimuth of
    /// the normal section from `a` through `b`, which differs from the geodesic's by about
    /// e′²(s/N)²/12 radians (Bomford): under 10⁻⁶° at 30 km, so it rounds like Karney's azimuth
    /// (`shortLineBearingMatchesKarney`), at a twentieth of the cost: radius queries, whose
    /// distances come from the short-line formula, no longer run Karney's algorithm per result
    /// for the bearing alone. Chords under a metre (whose direction the coordinates' rounding
    /// blurs), longer lines and points near a pole (where azimuths follow Karney's conventions)
    /// take Karney's. (Nearest results carry Karney's distance, and its azimuth with it.)
    @inlinable
    public static func bearing(_ a: GeocentricPoint, _ b: GeocentricPoint, from ca: Coordinate, to cb: Coordinate) -> Double {
        let dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z
        let c2 = dx * dx + dy * dy + dz * dz
        guard c2 >= 1, c2 <= shortLineLimit * shortLineLimit, abs(ca.latitude) < 89 else {
            return inverse(from: ca, to: cb).bearing
        }
        let east = -a.sinLon * dx + a.cosLon * dy
        let north = -a.sinLat * a.cosLon * dx - a.sinLat * a.sinLon * dy + a.cosLat * dz
        var degrees = atan2(east, north) * (180 / .pi)
        if degrees < 0 { degrees += 360 }
        if degrees >= 360 { degrees -= 360 }
        return degrees
    }

    /// `distance(_:_:from:to:)` of a candidate that its caller compares with `limit` (a radius or
    /// a maximum distance): within a micrometre of it Karney's algorithm decides (the short-line
    /// formula is nanometres off), so a limit of exactly a reported distance includes it. Every
    /// store measures with this, so that all give the same distances.
    @inline(__always)
    public static func distance(_ a: GeocentricPoint, _ b: GeocentricPoint, from ca: Coordinate, to cb: Coordinate, limit: Double?) -> Double {
        let d = distance(a, b, from: ca, to: cb)
        if let limit, abs(d - limit) < 1e-6 { return distance(from: ca, to: cb) }
        return d
    }
}
