import TrafficGeoModel

/// A longitude/latitude box, edges included; `west > east` crosses the antimeridian.
public struct LonLatBox: Sendable, Equatable {
    public var west, south, east, north: Double

    public init(west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// Degrees of longitude the box spans (through the antimeridian when `west > east`).
    public var longitudeSpan: Double { west <= east ? east - west : east + 360 - west }

    public func contains(_ p: Coordinate) -> Bool {
        guard p.latitude >= south, p.latitude <= north else { return false }
        return west <= east ? p.longitude >= west && p.longitude <= east : p.longitude >= west || p.longitude <= east
    }

    /// A circle (centre, geodesic radius in metres) that holds the whole box, for boxes up to
    /// `maxSpan` degrees a side; nil for larger ones, or ones that reach a pole.
    ///
    /// The box's farthest points from its centre are on its edges; for a box this small they
    /// are at or near the corners, so the largest distance to points along the edges, 1 % more
    /// and a kilometre besides, bounds them all.
    public func enclosingCircle(maxSpan: Double) -> (center: Coordinate, radius: Double)? {
        let lonSpan = longitudeSpan
        guard north - south <= maxSpan, lonSpan <= maxSpan, south > -89, north < 89 else { return nil }
        var centerLongitude = west + lonSpan / 2
        if centerLongitude > 180 { centerLongitude -= 360 }
        let center = Coordinate(latitude: (south + north) / 2, longitude: centerLongitude)
        var farthest = 0.0
        let steps = 16
        for i in 0...steps {
            let t = Double(i) / Double(steps)
            var lon = west + lonSpan * t
            if lon > 180 { lon -= 360 }
            let lat = south + (north - south) * t
            for point in [(south, lon), (north, lon), (lat, west), (lat, east)] {
                let p = Coordinate(latitude: point.0, longitude: point.1)
                farthest = max(farthest, Geodesic.distance(from: center, to: p))
            }
        }
        return (center, farthest * 1.01 + 1000)
    }
}
