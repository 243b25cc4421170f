import TrafficGeoSupport

/// A WGS84 position in degrees (EPSG:4326), latitude first as in the CRS definition.
///
///     let cologne = try Coordinate(validatingLatitude: 50.94, longitude: 6.96)
public struct Coordinate: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    /// Inlinable: the index and the queries make one per candidate row, from other modules.
    @inlinable
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Creates a coordinate after checking that both values are finite and in range.
    public init(validatingLatitude latitude: Double, longitude: Double) throws(CoordinateError) {
        guard latitude.isFinite, longitude.isFinite else { throw .notFinite(latitude: latitude, longitude: longitude) }
        guard (-90...90).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180...180).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        self.init(latitude: latitude, longitude: longitude)
    }

    /// Exactly (0, 0): what feeds send for "unknown position", never a road incident's place.
    public var isNullIsland: Bool { latitude == 0 && longitude == 0 }
}

/// Why a pair of numbers is not a usable WGS84 position.
public enum CoordinateError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFinite(latitude: Double, longitude: Double)
    case latitudeOutOfRange(Double)
    case longitudeOutOfRange(Double)
    case unreadable(String)

    public var description: String {
        switch self {
        case let .notFinite(lat, lon): return "coordinate is not a finite number (lat \(lat), lon \(lon))"
        case let .latitudeOutOfRange(v): return "latitude \(v) is outside [-90, 90]"
        case let .longitudeOutOfRange(v): return "longitude \(v) is outside [-180, 180]"
        case let .unreadable(text): return "unreadable coordinate '\(text.prefix(60))'"
        }
    }
}

extension Coordinate {
    /// A position from decimal text (surrounding spaces allowed; a decimal comma too), checked
    /// to lie on Earth.
    public init(parsingLatitude latitude: String, longitude: String) throws(CoordinateError) {
        guard let lat = DecimalText.double(latitude.trimmed) else { throw .unreadable(latitude) }
        guard let lon = DecimalText.double(longitude.trimmed) else { throw .unreadable(longitude) }
        try self.init(validatingLatitude: lat, longitude: lon)
    }
}
