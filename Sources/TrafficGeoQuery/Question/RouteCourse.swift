import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoStore

/// A route as a driver takes it: its positions, how far along it each one is, and where along
/// it a point beside the road is passed. What `along` (and serve's `route=`) orders its answer
/// by, so that the incidents come in the order the driver meets them.
public struct RouteCourse: Sendable, Equatable {
    public let route: [Coordinate]
    /// Geodesic metres from the start to each position of `route`.
    public let distanceToPosition: [Double]

    public init(_ route: [Coordinate]) {
        self.route = route
        var driven = [0.0]
        driven.reserveCapacity(route.count)
        for (a, b) in zip(route, route.dropFirst()) { driven.append(driven.last! + Geodesic.distance(from: a, to: b)) }
        distanceToPosition = driven
    }

    /// The route's length in metres.
    public var length: Double { distanceToPosition.last ?? 0 }

    /// Where the point is met, driving the route from its start.
    public struct Meeting: Sendable, Equatable {
        /// Metres driven from the start to where the point is closest, on the first stretch of the
        /// route that passes within the buffer.
        public var along: Double
        /// How far the point is from the route there, in metres.
        public var offset: Double
    }

    /// The first time the route passes within `buffer` metres of `point`: on that stretch (the
    /// consecutive segments within the buffer), the closest place. A route that turns back past
    /// the point meets it on the way out, not on the way back; nil when it never passes within
    /// the buffer. Distances in a local plane around the point, as `QueryArea.distance` measures
    /// a corridor (so `meet` is non-nil exactly when the corridor holds the point); the metres
    /// along are the geodesic lengths of the segments before, and the part of the segment in
    /// proportion. Longitudes wrap, so a route across the antimeridian is one line.
    public func meet(_ point: Coordinate, within buffer: Double) -> Meeting? {
        guard let first = route.first else { return nil }
        let plane = LocalPlane(around: point)
        // Degrees of latitude the buffer spans, and a little more: a segment wholly farther
        // north or south than this from the point cannot be within the buffer (a quick skip,
        // most segments of a long route).
        let latitudeReach = buffer / (LocalPlane.radius * .pi / 180) * 1.01 + 1e-9
        if route.count == 1 {
            let d = LocalPlane.nearest(to: .zero, from: plane.point(first), to: plane.point(first)).distance
            return d <= buffer ? Meeting(along: 0, offset: d) : nil
        }
        var best: Meeting?
        for i in 0..<(route.count - 1) {
            let a = route[i], b = route[i + 1]
            if min(a.latitude, b.latitude) - point.latitude > latitudeReach || point.latitude - max(a.latitude, b.latitude) > latitudeReach {
                if best != nil { return best }
                continue
            }
            let (d, t) = LocalPlane.nearest(to: .zero, from: plane.point(a), to: plane.point(b))
            guard d <= buffer else {
                // The first stretch within the buffer has ended: that is where the driver meets it.
                if best != nil { return best }
                continue
            }
            let along = distanceToPosition[i] + t * (distanceToPosition[i + 1] - distanceToPosition[i])
            if best == nil || d < best!.offset { best = Meeting(along: along, offset: d) }
        }
        return best
    }

    /// How far from the route an incident's own position may be while its road segment still
    /// reaches the corridor: the store is asked this much wider around the route, then each
    /// segment is measured (`meet(segment:within:)`). Work zones run a few kilometres; one whose
    /// start is farther than this from the route is not found.
    public static let segmentReach = 10_000.0

    /// Where the route first passes within `buffer` of a road segment (a work zone's line): the
    /// first stretch of route segments whose shortest distance to the line is within the buffer,
    /// and on it the closest approach (0 where the route crosses the line). Measured in a local
    /// plane around the segment's first position, as `meet(_:within:)` measures a point.
    public func meet(segment: [Coordinate], within buffer: Double) -> Meeting? {
        guard let origin = segment.first else { return nil }
        guard segment.count >= 2 else { return meet(origin, within: buffer) }
        guard route.count >= 2 else { return nil }
        let plane = LocalPlane(around: origin)
        let pieces = zip(segment, segment.dropFirst()).map { (plane.point($0), plane.point($1)) }
        var best: Meeting?
        for i in 0..<(route.count - 1) {
            let a = plane.point(route[i]), b = plane.point(route[i + 1])
            var nearest = (distance: Double.infinity, t: 0.0)
            for (c, d) in pieces {
                let found = Self.closestApproach(a, b, c, d)
                if found.distance < nearest.distance { nearest = found }
            }
            guard nearest.distance <= buffer else {
                if best != nil { return best }
                continue
            }
            let along = distanceToPosition[i] + nearest.t * (distanceToPosition[i + 1] - distanceToPosition[i])
            if best == nil || nearest.distance < best!.offset { best = Meeting(along: along, offset: nearest.distance) }
        }
        return best
    }

    /// The shortest distance between the plane segments a–b and c–d, and where on a–b (0…1) it is.
    static func closestApproach(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>, _ d: SIMD2<Double>) -> (distance: Double, t: Double) {
        func cross(_ u: SIMD2<Double>, _ v: SIMD2<Double>) -> Double { u.x * v.y - u.y * v.x }
        let project = LocalPlane.nearest(to:from:to:)
        let ab = b - a, cd = d - c, denominator = cross(ab, cd)
        if denominator != 0 {
            let t = cross(c - a, cd) / denominator, u = cross(c - a, ab) / denominator
            if (0...1).contains(t), (0...1).contains(u) { return (0, t) }
        }
        // Apart: the closest pair has an end of one of them.
        var best = project(c, a, b)
        let fromD = project(d, a, b)
        if fromD.distance < best.distance { best = fromD }
        let fromA = project(a, c, d)
        if fromA.distance < best.distance { best = (fromA.distance, 0) }
        let fromB = project(b, c, d)
        if fromB.distance < best.distance { best = (fromB.distance, 1) }
        return best
    }

    /// Boxes that together hold the corridor (`buffer` metres either side): one per run of
    /// consecutive segments, so a long diagonal route asks the store about a band along it, not
    /// about the box of the whole journey. A run crossing the antimeridian gives a box with
    /// `west > east`.
    public func searchBoxes(buffer: Double, maxSegments: Int = 32, maxSpanDegrees: Double = 1) -> [LonLatBox] {
        guard let first = route.first else { return [] }
        guard route.count > 1 else {
            return [Self.widened(west: first.longitude, south: first.latitude, east: first.longitude, north: first.latitude, by: buffer)]
        }
        var boxes: [LonLatBox] = []
        var start = 0
        while start < route.count - 1 {
            // Longitudes unwrapped along the run (each step the short way round), so a run over
            // the antimeridian has one continuous span.
            var lon = route[start].longitude
            var west = lon, east = lon, south = route[start].latitude, north = south
            var end = start
            while end + 1 < route.count, end - start < maxSegments {
                let next = lon + Self.step(from: route[end].longitude, to: route[end + 1].longitude)
                let nextLatitude = route[end + 1].latitude
                if end > start, max(east, next) - min(west, next) > maxSpanDegrees
                    || max(north, nextLatitude) - min(south, nextLatitude) > maxSpanDegrees { break }
                lon = next
                west = min(west, lon); east = max(east, lon)
                south = min(south, nextLatitude); north = max(north, nextLatitude)
                end += 1
            }
            boxes.append(Self.widened(west: west, south: south, east: east, north: north, by: buffer))
            // The next run starts at this one's last position: each segment is in one box.
            start = end
        }
        return boxes
    }

    /// One box holding the whole corridor (a watch's quick test), across the antimeridian when
    /// the route crosses it.
    public static func bounds(of route: [Coordinate], buffer: Double) -> LonLatBox? {
        guard let first = route.first else { return nil }
        var lon = first.longitude, west = lon, east = lon
        for (a, b) in zip(route, route.dropFirst()) {
            lon += step(from: a.longitude, to: b.longitude)
            west = min(west, lon); east = max(east, lon)
        }
        return widened(west: west, south: route.map(\.latitude).min()!, east: east, north: route.map(\.latitude).max()!, by: buffer)
    }

    /// Degrees east from one longitude to the next, the short way round.
    static func step(from a: Double, to b: Double) -> Double {
        var step = b - a
        if step > 180 { step -= 360 }
        if step < -180 { step += 360 }
        return step
    }

    /// The box `west…east` (unwrapped longitudes), `south…north`, widened by `metres` on every side.
    static func widened(west: Double, south: Double, east: Double, north: Double, by metres: Double) -> LonLatBox {
        let dLat = metres / 111_000 * 1.01 + 0.001
        let newSouth = max(-90, south - dLat), newNorth = min(90, north + dLat)
        let maxLat = max(abs(newSouth), abs(newNorth))
        // Near a pole every longitude is close: the whole band.
        guard maxLat < 89.9 else { return LonLatBox(west: -180, south: newSouth, east: 180, north: newNorth) }
        let dLon = dLat / cos(maxLat * .pi / 180)
        let w = west - dLon, e = east + dLon
        guard e - w < 360 else { return LonLatBox(west: -180, south: newSouth, east: 180, north: newNorth) }
        func wrapped(_ x: Double) -> Double {
            var x = x
            while x > 180 { x -= 360 }
            while x < -180 { x += 360 }
            return x
        }
        return LonLatBox(west: wrapped(w), south: newSouth, east: wrapped(e), north: newNorth)
    }
}

/// A plane around one place: equirectangular, the Earth's mean radius, longitudes wrapped (so a
/// line across the antimeridian stays one line). How a corridor's distances are measured —
/// `QueryArea.distance`, `RouteCourse.meet` — exact enough for a few kilometres (under 0.5 % off
/// for segments of 100 km).
package struct LocalPlane {
    package static let radius = 6_371_008.8
    private let origin: Coordinate
    private let metresPerLongitude: Double, metresPerLatitude: Double

    package init(around origin: Coordinate) {
        self.origin = origin
        let rad = Double.pi / 180
        metresPerLatitude = rad * Self.radius
        metresPerLongitude = metresPerLatitude * cos(origin.latitude * rad)
    }

    /// `c` in metres east and north of the origin.
    package func point(_ c: Coordinate) -> SIMD2<Double> {
        var dLon = c.longitude - origin.longitude
        if dLon > 180 { dLon -= 360 }
        if dLon < -180 { dLon += 360 }
        return SIMD2(dLon * metresPerLongitude, (c.latitude - origin.latitude) * metresPerLatitude)
    }

    /// The shortest distance from `p` to the segment `s`–`e`, and where on it (0 at `s`, 1 at `e`).
    package static func nearest(to p: SIMD2<Double>, from s: SIMD2<Double>, to e: SIMD2<Double>) -> (distance: Double, t: Double) {
        let v = e - s, length2 = (v * v).sum()
        let t = length2 > 0 ? max(0, min(1, ((p - s) * v).sum() / length2)) : 0
        let q = s + t * v - p
        return (hypot(q.x, q.y), t)
    }
}
