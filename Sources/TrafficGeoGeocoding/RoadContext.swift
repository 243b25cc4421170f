import Foundation
import TrafficGeoModel
import TrafficGeoProjection

/// Where the road is known to run: the positions of its incidents and junctions.
struct RoadContext {
    /// A grid of known positions (cells of ~0.1°) for nearest look-ups.
    private var cells: [Int64: [Coordinate]] = [:]
    let hasPositions: Bool

    init(positions: [Coordinate]) {
        for p in positions { cells[Self.cell(p), default: []].append(p) }
        hasPositions = positions.count >= 3
    }

    private static func cell(_ c: Coordinate) -> Int64 { cell(Int64((c.latitude * 10).rounded(.down)), Int64((c.longitude * 10).rounded(.down))) }
    private static func cell(_ a: Int64, _ b: Int64) -> Int64 { a &* 100_000 &+ b }

    /// The distance to the nearest known position of the road, if one lies within ~50 km.
    func distanceToRoad(_ c: Coordinate) -> Double? {
        guard hasPositions else { return nil }
        let a = Int64((c.latitude * 10).rounded(.down)), b = Int64((c.longitude * 10).rounded(.down))
        var best: Double?
        for da in -4...4 {
            for db in -7...7 {
                for p in cells[Self.cell(a + Int64(da), b + Int64(db))] ?? [] {
                    let d = Geodesic.distance(from: c, to: p)
                    if best == nil || d < best! { best = d }
                }
            }
        }
        return best
    }

    func penalty(_ c: Coordinate) -> Double {
        guard hasPositions else { return 0 }
        let d = distanceToRoad(c) ?? 60_000
        return min(5, max(0, d - 8_000) / 8_000)
    }

    func isOnRoad(_ c: Coordinate) -> Bool {
        hasPositions && (distanceToRoad(c) ?? .infinity) <= 5_000
    }
}
