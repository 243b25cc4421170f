import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
import TrafficGeoTestSupport
import TrafficGeoPROJ

@Suite("Geocentric points and the short-line geodesic distance")
struct GeocentricPointTests {
    /// The closed form agrees with PROJ's EPSG:4326 → EPSG:4978 everywhere, poles and antimeridian included.
    @Test func closedFormMatchesPROJ() throws {
        let projector = try Projector(target: "EPSG:4978")
        var generator = SplitMix64(seed: 3)
        var coordinates = [Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: -90, longitude: 180),
                           Coordinate(latitude: 0, longitude: -180), Coordinate(latitude: 0, longitude: 180)]
        for _ in 0..<2000 {
            coordinates.append(Coordinate(latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator)))
        }
        for c in coordinates {
            let p = GeocentricPoint(c), q = try projector.forward(c)
            #expect(abs(p.x - q.x) < 1e-6 && abs(p.y - q.y) < 1e-6 && abs(p.z - q.z) < 1e-6, "\(c)")
        }
    }

    /// 20,000 random lines from 1 cm to 30 km at every latitude, one in 50 starting within 0.1° of
    /// the north pole and one in 40 within 0.1° of the antimeridian: start, end, length (m).
    private static func shortLines(seed: UInt64) -> [(a: Coordinate, b: Coordinate, length: Double)] {
        var generator = SplitMix64(seed: seed)
        return (0..<20_000).map { i in
            let lat = i % 50 == 0 ? Double.random(in: 89.9...90, using: &generator) : Double.random(in: -89.99...89.99, using: &generator)
            let lon = i % 40 == 0 ? Double.random(in: 179.9...180, using: &generator) : Double.random(in: -180...180, using: &generator)
            let a = Coordinate(latitude: lat, longitude: lon)
            let length = exp(Double.random(in: log(0.01)...log(30_000), using: &generator))
            return (a, Geodesic.direct(from: a, bearing: Double.random(in: 0..<360, using: &generator), distance: length), length)
        }
    }

    /// Against Karney's algorithm on random pairs from 1 cm to 30 km at every latitude, across
    /// the antimeridian and near the poles: never more than 10 nm apart; longer chords fall back
    /// to Karney, so `distance` is Karney's number there.
    @Test func shortLineDistanceMatchesKarney() {
        var worst = 0.0
        for (a, b, length) in Self.shortLines(seed: 17) {
            let karney = Geodesic.distance(from: a, to: b)
            let pa = GeocentricPoint(a), pb = GeocentricPoint(b)
            guard let short = Geodesic.shortLineDistance(pa, pb) else {
                Issue.record("a \(length) m line was not short")
                continue
            }
            worst = max(worst, abs(short - karney))
            #expect(Geodesic.distance(pa, pb, from: a, to: b) == short)
        }
        #expect(worst < 1e-8, "largest difference \(worst) m")
        let far = Coordinate(latitude: 50, longitude: 8), farther = Coordinate(latitude: 51, longitude: 9)
        #expect(Geodesic.shortLineDistance(GeocentricPoint(far), GeocentricPoint(farther)) == nil)
        #expect(Geodesic.distance(GeocentricPoint(far), GeocentricPoint(farther), from: far, to: farther) == Geodesic.distance(from: far, to: farther))
    }

    /// The short-line bearing against Karney's azimuth on random pairs from 1 cm to 30 km at every
    /// latitude, across the antimeridian and near the poles: never more than 2 × 10⁻⁶° apart
    /// (6.6 × 10⁻⁷° seen; the output rounds to 0.1°); pole, sub-metre and long lines are
    /// Karney's own number.
    @Test func shortLineBearingMatchesKarney() {
        var worst = 0.0
        for (a, b, length) in Self.shortLines(seed: 23) {
            let karney = Geodesic.inverse(from: a, to: b).bearing
            let short = Geodesic.bearing(GeocentricPoint(a), GeocentricPoint(b), from: a, to: b)
            #expect((0..<360).contains(short))
            let apart = abs(short - karney)
            worst = max(worst, min(apart, 360 - apart))
            if length < 0.9 || abs(a.latitude) >= 89 { #expect(short == karney, "\(a) → \(b)") }
        }
        #expect(worst < 2e-6, "largest difference \(worst)°")
        let far = Coordinate(latitude: 50, longitude: 8), farther = Coordinate(latitude: 51, longitude: 9)
        #expect(Geodesic.bearing(GeocentricPoint(far), GeocentricPoint(farther), from: far, to: farther) == Geodesic.inverse(from: far, to: farther).bearing)
        // Due north, east, south and west of a point on the 50th parallel.
        let here = Coordinate(latitude: 50, longitude: 7)
        for (bearing, expected) in [(0.0, 0.0), (90, 90), (180, 180), (270, 270)] {
            let there = Geodesic.direct(from: here, bearing: bearing, distance: 5_000)
            let measured = Geodesic.bearing(GeocentricPoint(here), GeocentricPoint(there), from: here, to: there)
            #expect(min(abs(measured - expected), 360 - abs(measured - expected)) < 1e-6, "\(bearing)")
        }
    }
}
