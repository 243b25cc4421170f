import Foundation
import TrafficGeoModel
import TrafficGeoSupport


/// `gml:posList` and `gml:coordinates` text into coordinates.
enum GMLPositions {
    /// Whether positions under this CRS name come latitude first. GML 3 with an EPSG:4326 URN or URI
    /// follows EPSG's axis order (latitude, longitude), as DATEX II v3 does when it names "WGS 84"
    /// or nothing; CRS84 and the old `…/epsg.xml#4326` form are longitude first.
    static func latitudeFirst(_ srsName: String?, default latitudeFirstWithoutName: Bool = true) -> Bool {
        guard let s = srsName?.lowercased() else { return latitudeFirstWithoutName }
        if s.contains("crs84") || s.contains("epsg.xml#") { return false }
        return true
    }

    static func read(_ text: String, srsName: String?, dimension: Int?, latitudeFirstWithoutName: Bool = true) -> Result<[Coordinate], PlacementProblem> {
        let numbers = text.split(whereSeparator: { $0 == " " || $0.isNewline || $0 == "\t" || $0 == "," }).map { DecimalText.double(String($0)) }
        if numbers.contains(where: { $0 == nil }) { return .failure(PlacementProblem("a gml:posList that is not numbers")) }
        let values = numbers.map { $0! }
        let step = max(2, min(dimension ?? 2, 3))
        guard values.count >= step, values.count % step == 0 else { return .failure(PlacementProblem("a gml:posList of \(values.count) numbers is not pairs")) }
        let latFirst = latitudeFirst(srsName, default: latitudeFirstWithoutName)
        var out: [Coordinate] = []
        var swappedOut: [Coordinate] = []
        var plainValid = true, swappedValid = true
        for i in stride(from: 0, to: values.count, by: step) {
            let (a, b) = (values[i], values[i + 1])
            let (lat, lon) = latFirst ? (a, b) : (b, a)
            if let c = try? Coordinate(validatingLatitude: lat, longitude: lon) { out.append(c) } else { plainValid = false }
            if let c = try? Coordinate(validatingLatitude: lon, longitude: lat) { swappedOut.append(c) } else { swappedValid = false }
        }
        if plainValid { return .success(out) }
        // The axis order the name implies gives latitudes past 90°, the other does not: the producer wrote the other.
        if swappedValid { return .success(swappedOut) }
        return .failure(PlacementProblem("a gml:posList with positions out of range"))
    }

    /// `gml:coordinates`: "lon,lat lon,lat …" (tuples by spaces, axes by commas).
    static func readCoordinates(_ text: String) -> Result<[Coordinate], PlacementProblem> {
        var out: [Coordinate] = []
        for tuple in text.split(whereSeparator: { $0 == " " || $0.isNewline || $0 == "\t" }) {
            let parts = tuple.split(separator: ",")
            guard parts.count >= 2, let lon = DecimalText.double(String(parts[0])), let lat = DecimalText.double(String(parts[1])),
                  let c = try? Coordinate(validatingLatitude: lat, longitude: lon) else {
                return .failure(PlacementProblem("gml:coordinates '\(tuple.prefix(40))' is not 'longitude,latitude'"))
            }
            out.append(c)
        }
        return out.isEmpty ? .failure(PlacementProblem("empty gml:coordinates")) : .success(out)
    }
}
