import CProj

/// Ellipsoidal distances on WGS84 with Karney's algorithm (PROJ's `geodesic.h`); the same numbers
/// as `geod -I +ellps=WGS84`.
///
///     let (metres, bearing) = Geodesic.inverse(from: a, to: b)
public enum Geodesic {
    public static let wgs84SemiMajorAxis = 6_378_137.0
    public static let wgs84Flattening = 1 / 298.257223563

    private static let ellipsoid: geod_geodesic = {
        var g = geod_geodesic()
        geod_init(&g, wgs84SemiMajorAxis, wgs84Flattening)
        return g
    }()

    /// Distance in metres and initial bearing in degrees [0, 360) from `a` to `b`.
    @inline(__always)
    public static func inverse(from a: Coordinate, to b: Coordinate) -> (distance: Double, bearing: Double) {
        var g = ellipsoid
        var s12 = 0.0, azi1 = 0.0, azi2 = 0.0
        geod_inverse(&g, a.latitude, a.longitude, b.latitude, b.longitude, &s12, &azi1, &azi2)
        var bearing = azi1
        if bearing < 0 { bearing += 360 }
        if bearing >= 360 { bearing -= 360 }
        return (s12, bearing)
    }

    /// Distance in metres from `a` to `b`.
    @inline(__always)
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double {
        var g = ellipsoid
        var s12 = 0.0
        geod_inverse(&g, a.latitude, a.longitude, b.latitude, b.longitude, &s12, nil, nil)
        return s12
    }

    /// The point reached by going `distance` metres from `start` on initial bearing `bearing`.
    public static func direct(from start: Coordinate, bearing: Double, distance: Double) -> Coordinate {
        var g = ellipsoid
        var lat2 = 0.0, lon2 = 0.0, azi2 = 0.0
        geod_direct(&g, start.latitude, start.longitude, bearing, distance, &lat2, &lon2, &azi2)
        return Coordinate(latitude: lat2, longitude: lon2)
    }
}
