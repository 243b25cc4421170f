import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Where a GeoJSON geometry (RFC 7946, longitude first) places an incident, whatever its type:
/// nothing a feed gives is skipped for its shape (DESIGN.md §13).
///
///     | geometry                   | position                          | segment (drawn on the map)   |
///     |----------------------------|-----------------------------------|------------------------------|
///     | Point                      | the point                         | –                            |
///     | LineString, MultiPoint     | the first point                   | the line                     |
///     | MultiLineString            | the first line's first point      | the lines joined in order    |
///     | Polygon                    | a point on its surface            | its outer ring (the outline) |
///     | MultiPolygon               | a point on the largest polygon    | that polygon's outer ring    |
///     | GeometryCollection         | its first member that places one  | that member's                |
///
/// A point on the surface, not the centroid: the centroid of a C-shaped works area or of a
/// road's buffer can lie outside it, on another road.
enum GeoJSONGeometry {
    /// What a geometry gives: a point, a line, or an area with the point that stands for it.
    enum Placement: Equatable {
        case point(Coordinate)
        case line([Coordinate])
        case area(point: Coordinate, outline: [Coordinate])

        /// GML's or another list of positions: one is a point, more a line. Not empty.
        init(positions: [Coordinate]) {
            self = positions.count == 1 ? .point(positions[0]) : .line(positions)
        }

        /// The incident's position.
        var position: Coordinate {
            switch self {
            case let .point(p): p
            case let .line(l): l[0]
            case let .area(p, _): p
            }
        }

        /// What the map draws and the store keeps as the segment; nil for a point.
        var segment: [Coordinate]? {
            switch self {
            case .point: nil
            case let .line(l): l.count >= 2 ? l : nil
            case let .area(_, outline): outline.count >= 2 ? outline : nil
            }
        }
    }

    /// Turns a GeoJSON position's numbers into WGS84 (a `--crs` or legacy `crs` conversion, or
    /// none: longitude and latitude checked for range).
    typealias Conversion = (_ x: Double, _ y: Double) throws -> Coordinate

    static func lonLat(_ x: Double, _ y: Double) throws -> Coordinate { try Coordinate(validatingLatitude: y, longitude: x) }

    /// The placement of a geometry object, or why it places nothing.
    static func placement(_ geometry: [String: Any], convert: Conversion = lonLat) -> Result<Placement, PlacementProblem> {
        let type = LooseJSON.string(geometry["type"]) ?? ""
        do {
            return .success(try place(type: type, geometry: geometry, convert: convert, depth: 0))
        } catch let problem as PlacementProblem {
            return .failure(problem)
        } catch {
            return .failure(PlacementProblem("a \(type.prefix(30)) with a position that cannot be placed: \(error)"))
        }
    }

    /// The positions alone, as the segment readers had them: a point's one, a line's, an area's
    /// outline (WZDx keeps its own rule for which is the position).
    static func positions(_ geometry: [String: Any]) -> Result<[Coordinate], PlacementProblem> {
        placement(geometry).map { placement in
            switch placement {
            case let .point(p): [p]
            case let .line(l): l
            case let .area(p, outline): outline.isEmpty ? [p] : outline
            }
        }
    }

    private static func place(type: String, geometry: [String: Any], convert: Conversion, depth: Int) throws -> Placement {
        let coordinates = geometry["coordinates"]
        func position(_ value: Any) throws -> Coordinate {
            guard let pair = value as? [Any], pair.count >= 2, let x = LooseJSON.double(pair[0]), let y = LooseJSON.double(pair[1]) else {
                throw PlacementProblem("a \(type) with a position that is not [longitude, latitude]")
            }
            return try convert(x, y)
        }
        func line(_ value: Any?) throws -> [Coordinate] {
            guard let items = value as? [Any], !items.isEmpty else { throw PlacementProblem("a \(type) without coordinates") }
            return try items.map(position)
        }
        func parts(_ value: Any?) throws -> [Any] {
            guard let items = value as? [Any], !items.isEmpty else { throw PlacementProblem("a \(type) without coordinates") }
            return items
        }
        switch type {
        case "Point":
            guard let coordinates else { throw PlacementProblem("a Point without coordinates") }
            return .point(try position(coordinates))
        case "LineString", "MultiPoint":
            let l = try line(coordinates)
            return l.count == 1 ? .point(l[0]) : .line(l)
        case "MultiLineString":
            let l = try parts(coordinates).flatMap(line)
            return l.count == 1 ? .point(l[0]) : .line(l)
        case "Polygon":
            return try area(outerRing: line(parts(coordinates)[0]))
        case "MultiPolygon":
            // The largest polygon stands for the whole: its point and outline.
            let rings = try parts(coordinates).map { try line(parts($0)[0]) }
            guard let largest = rings.max(by: { abs(signedArea($0)) < abs(signedArea($1)) }) else {
                throw PlacementProblem("a MultiPolygon without coordinates")
            }
            return try area(outerRing: largest)
        case "GeometryCollection":
            guard depth < 4 else { throw PlacementProblem("a GeometryCollection nested too deep") }
            for member in geometry["geometries"] as? [[String: Any]] ?? [] {
                let memberType = LooseJSON.string(member["type"]) ?? ""
                if let placed = try? place(type: memberType, geometry: member, convert: convert, depth: depth + 1) { return placed }
            }
            throw PlacementProblem("a GeometryCollection without a member that can be placed")
        default:
            throw PlacementProblem("geometry type '\(type.prefix(30))' is not a GeoJSON geometry (Point, LineString, Polygon, their Multi forms, GeometryCollection)")
        }
    }

    /// An area placed by a point on its surface, its outer ring kept as the outline.
    private static func area(outerRing ring: [Coordinate]) throws -> Placement {
        guard let first = ring.first else { throw PlacementProblem("a Polygon without coordinates") }
        guard ring.count >= 3 else { return ring.count == 1 ? .point(first) : .line(ring) }
        return .area(point: pointOnSurface(ring), outline: ring)
    }

    // MARK: - A point on the surface

    /// Twice the signed area in degrees² (the shoelace formula): only its sign and the comparison
    /// between rings matter here.
    static func signedArea(_ ring: [Coordinate]) -> Double {
        var sum = 0.0
        for i in ring.indices {
            let a = ring[i], b = ring[(i + 1) % ring.count]
            sum += a.longitude * b.latitude - b.longitude * a.latitude
        }
        return sum
    }

    /// A point inside the ring: its centroid when that is inside, else the middle of the widest
    /// stretch of the ring's interior on the parallel through the middle of its latitudes (as
    /// GEOS's interior point does for polygons). Rings across the antimeridian are read with
    /// their longitudes unwrapped around the first point.
    static func pointOnSurface(_ ring: [Coordinate]) -> Coordinate {
        let origin = ring[0].longitude
        // Longitudes made continuous around the first point, so a ring across ±180° is one shape.
        let points = ring.map { c -> (x: Double, y: Double) in
            var x = c.longitude - origin
            if x > 180 { x -= 360 } else if x < -180 { x += 360 }
            return (x, c.latitude)
        }
        func make(_ x: Double, _ y: Double) -> Coordinate {
            var lon = x + origin
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
            return (try? Coordinate(validatingLatitude: y, longitude: lon)) ?? ring[0]
        }
        // The centroid of the ring's area.
        var a = 0.0, cx = 0.0, cy = 0.0
        for i in points.indices {
            let p = points[i], q = points[(i + 1) % points.count]
            let cross = p.x * q.y - q.x * p.y
            a += cross
            cx += (p.x + q.x) * cross
            cy += (p.y + q.y) * cross
        }
        if abs(a) > 1e-18 {
            let centroid = (x: cx / (3 * a), y: cy / (3 * a))
            if contains(points, centroid) { return make(centroid.x, centroid.y) }
        }
        // The widest interior stretch on the parallel halfway between the lowest and the highest point.
        let ys = points.map(\.y)
        let y = (ys.min()! + ys.max()!) / 2
        var crossings: [Double] = []
        for i in points.indices {
            let p = points[i], q = points[(i + 1) % points.count]
            // Half-open in y, so a vertex on the parallel counts once.
            if (p.y <= y) != (q.y <= y) {
                crossings.append(p.x + (y - p.y) / (q.y - p.y) * (q.x - p.x))
            }
        }
        crossings.sort()
        var best: (width: Double, x: Double)?
        var k = 0
        while k + 1 < crossings.count {
            let width = crossings[k + 1] - crossings[k]
            if best == nil || width > best!.width { best = (width, (crossings[k] + crossings[k + 1]) / 2) }
            k += 2
        }
        if let best { return make(best.x, y) }
        // A degenerate ring (all on one line): its first point.
        return ring[0]
    }

    /// Whether a point lies inside the ring (even-odd rule).
    static func contains(_ ring: [(x: Double, y: Double)], _ point: (x: Double, y: Double)) -> Bool {
        var inside = false
        var j = ring.count - 1
        for i in ring.indices {
            let p = ring[i], q = ring[j]
            if (p.y > point.y) != (q.y > point.y), point.x < (q.x - p.x) * (point.y - p.y) / (q.y - p.y) + p.x {
                inside.toggle()
            }
            j = i
        }
        return inside
    }
}
