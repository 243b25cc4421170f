import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// Where a question looks: a circle, a box, or a corridor along a route (a standing query
/// of `trafficgeo watch`, a watches file's entry).
public enum QueryArea: Sendable, Equatable {
    /// Within `radius` metres (WGS84 geodesic, boundary included) of `center`.
    case circle(center: Coordinate, radius: Double)
    /// Inside the box, edges included (`west > east` crosses the antimeridian).
    case box(LonLatBox)
    /// Within `buffer` metres of the polyline `route` (a road the user drives).
    case corridor(route: [Coordinate], buffer: Double)

    /// Whether `point` is inside, and how far from the centre or the route it is (nil for a box).
    public func locate(_ point: Coordinate) -> (inside: Bool, distance: Double?) {
        PreparedArea(self).locate(point, GeocentricPoint(point))
    }

    /// A box holding the whole corridor (the route's, widened by the buffer), for a quick test;
    /// across the antimeridian when the route crosses it.
    package var corridorBounds: LonLatBox? {
        guard case let .corridor(route, buffer) = self else { return nil }
        return RouteCourse.bounds(of: route, buffer: buffer)
    }

    /// The shortest distance from `point` to the polyline, in metres, each segment measured in a
    /// `LocalPlane` around the point.
    package static func distance(from point: Coordinate, toRoute route: [Coordinate]) -> Double {
        let plane = LocalPlane(around: point)
        guard let first = route.first else { return .infinity }
        var best = LocalPlane.nearest(to: .zero, from: plane.point(first), to: plane.point(first)).distance
        for (a, b) in zip(route, route.dropFirst()) {
            best = min(best, LocalPlane.nearest(to: .zero, from: plane.point(a), to: plane.point(b)).distance)
        }
        return best
    }

    /// Where the store can look for what is inside: a circle around the area (nil: a box query).
    package var searchCircle: (center: Coordinate, radius: Double)? {
        switch self {
        case let .circle(center, radius): return (center, radius)
        case .box, .corridor: return nil
        }
    }

    /// The box the store searches for a box or a corridor.
    package var searchBox: LonLatBox? {
        switch self {
        case .circle: return nil
        case let .box(box): return box
        case .corridor: return corridorBounds
        }
    }
}

/// An area with what its tests reuse worked out once (the circle's centre as a geocentric
/// point, the corridor's bounds): a country-wide ingest tests every changed incident against
/// every standing query.
package struct PreparedArea {
    package let area: QueryArea
    private let center: GeocentricPoint?
    private let bounds: LonLatBox?

    package init(_ area: QueryArea) {
        self.area = area
        if case let .circle(c, _) = area { center = GeocentricPoint(c) } else { center = nil }
        bounds = area.corridorBounds
    }

    /// `point` and its geocentric position `p`.
    package func locate(_ point: Coordinate, _ p: GeocentricPoint) -> (inside: Bool, distance: Double?) {
        switch area {
        case let .circle(c, radius):
            // The chord is never longer than the geodesic: farther by chord is outside (the
            // cheap test that decides nearly every incident of a country-wide ingest).
            if center!.chord(to: p) > radius { return (false, nil) }
            let d = Geodesic.distance(center!, p, from: c, to: point)
            return (d <= radius, d)
        case let .box(box):
            return (box.contains(point), nil)
        case let .corridor(route, buffer):
            guard let bounds, bounds.contains(point) else { return (false, nil) }
            let d = QueryArea.distance(from: point, toRoute: route)
            return (d <= buffer, d)
        }
    }
}
