import CGeodesic
import TrafficGeoModel

/// Ellipsoidal distances on WGS84 with Karney's algorithm, from GeographicLib (Sources/CGeodesic
/// says why not PROJ's `geodesic.h`, which implements the same algorithm; the tests compare the
/// two): the same numbers as `geod -I +ellps=WGS84`.
///
///     let (metres, bearing) = Geodesic.inverse(from: a, to: b)
public enum Geodesic {
    public static let wgs84SemiMajorAxis = 6_378_137.0
    public static let wgs84Flattening = 1 / 298.257223563

    /// Distance in metres and initial bearing in degrees [0, 360) from `a` to `b`.
    @inline(__always)
    public static func inverse(from a: Coordinate, to b: Coordinate) -> (distance: Double, bearing: Double) {
        var s12 = 0.0, azi1 = 0.0
        tg_geodesic_inverse(a.latitude, a.longitude, b.latitude, b.longitude, &s12, &azi1, nil)
        var bearing = azi1
        if bearing < 0 { bearing += 360 }
        if bearing >= 360 { bearing -= 360 }
        return (s12, bearing)
    }

    /// Distance in metres from `a` to `b`.
    @inline(__always)
    public static func distance(from a: Coordinate, to b: Coordinate) -> Double {
        var s12 = 0.0
        tg_geodesic_inverse(a.latitude, a.longitude, b.latitude, b.longitude, &s12, nil, nil)
        return s12
    }

    /// The point reached by going `distance` metres from `start` on initial bearing `bearing`.
    public static func direct(from start: Coordinate, bearing: Double, distance: Double) -> Coordinate {
        var lat2 = 0.0, lon2 = 0.0
        tg_geodesic_direct(start.latitude, start.longitude, bearing, distance, &lat2, &lon2, nil)
        return Coordinate(latitude: lat2, longitude: lon2)
    }
}
