import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Junction knowledge into the store: GeoJSON and CSV (as `JunctionExport` writes them), and
/// OpenStreetMap's `highway=motorway_junction` nodes as `osmium export` writes them.
///
///     osmium tags-filter germany.osm.pbf n/highway=motorway_junction -o junctions.osm.pbf
///     osmium export junctions.osm.pbf -o junctions.geojson
///     trafficgeo junctions import junctions.geojson        # road unknown: a candidate for every road
///
/// OSM nodes do not say which road they belong to (their `ref` is the exit number), so they are
/// stored with road "" and serve as candidates that road consistency chooses between.
public enum JunctionExchange {
    public static let osmAttribution = "© OpenStreetMap contributors, ODbL 1.0 (https://www.openstreetmap.org/copyright)"

    public enum Format: String, Sendable, CaseIterable {
        case geojson, csv
    }

    public struct ReadError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    // MARK: - Reading

    /// Observations from a GeoJSON FeatureCollection (trafficgeo's own export, or an `osmium
    /// export` of motorway junctions) or a CSV with `name`, `latitude`/`lat`, `longitude`/`lon`
    /// and optionally `road` and `kind` columns. `road` applies to rows that name none.
    public static func read(_ data: Data, format: Format, road: String? = nil, origin: String) throws -> [JunctionObservation] {
        switch format {
        case .geojson: return try readGeoJSON(data, road: road, origin: origin)
        case .csv: return try readCSV(data, road: road, origin: origin)
        }
    }

    /// The format by file name, else by the first byte.
    public static func detect(path: String, data: Data) -> Format {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") || lower.hasSuffix(".tsv") { return .csv }
        if lower.hasSuffix(".json") || lower.hasSuffix(".geojson") { return .geojson }
        return data.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) == UInt8(ascii: "{") ? .geojson : .csv
    }

    static func readGeoJSON(_ data: Data, road: String?, origin: String) throws -> [JunctionObservation] {
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ReadError(description: "not a JSON object (expected a GeoJSON FeatureCollection)")
        }
        let features: [[String: Any]]
        if let list = root["features"] as? [[String: Any]] { features = list }
        else if root["type"] as? String == "Feature" { features = [root] }
        else { throw ReadError(description: "no \"features\" array (expected a GeoJSON FeatureCollection)") }
        var out: [JunctionObservation] = []
        for (n, f) in features.enumerated() {
            let props = f["properties"] as? [String: Any] ?? [:]
            guard let geometry = f["geometry"] as? [String: Any], geometry["type"] as? String == "Point",
                  let coords = geometry["coordinates"] as? [Any], coords.count >= 2,
                  let lon = LooseJSON.double(coords[0]), let lat = LooseJSON.double(coords[1]),
                  let c = try? Coordinate(validatingLatitude: lat, longitude: lon), !c.isNullIsland else {
                throw ReadError(description: "feature \(n + 1): not a Point with valid [longitude, latitude]")
            }
            // OSM tags: highway=motorway_junction, name, ref (the exit number, not the road).
            let isOSM = props["highway"] != nil || props["@id"] != nil || (f["id"] as? String)?.hasPrefix("node/") == true
            guard let name = LooseJSON.string(props["name"])?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { continue }
            let rowRoad = isOSM ? road : (LooseJSON.string(props["road"]).flatMap { RoadReference.normalize($0) } ?? road)
            let kind = JunctionMention.Kind(label: LooseJSON.string(props["kind"])) ?? JunctionName.kind(of: name, fallback: .unspecified)
            out.append(JunctionObservation(road: rowRoad ?? "", name: name, kind: kind, coordinate: c,
                                           origin: isOSM ? "import:osm" : origin))
        }
        return out
    }

    static func readCSV(_ data: Data, road: String?, origin: String) throws -> [JunctionObservation] {
        // Tab-separated when the header has tabs and no commas (a TSV such as an osmium or psql dump).
        let firstLine = data.prefix(while: { $0 != 0x0A })
        let separator: UInt8 = firstLine.contains(0x09) && !firstLine.contains(UInt8(ascii: ",")) ? 0x09 : UInt8(ascii: ",")
        let reader = CSVRecordReader(stream: InputStream(data: data), separator: separator)
        var records: [[String]] = []
        do {
            while let record = try reader.next() { records.append(record.fields) }
        } catch {
            throw ReadError(description: "\(error)")
        }
        guard let header = records.first?.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else { return [] }
        func column(_ names: [String]) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let nameCol = column(["name"]), let latCol = column(["latitude", "lat", "y"]), let lonCol = column(["longitude", "lon", "lng", "x"]) else {
            throw ReadError(description: "the CSV needs columns name, latitude (or lat), longitude (or lon); it has: \(header.joined(separator: ", "))")
        }
        let roadCol = column(["road"]), kindCol = column(["kind"])
        var out: [JunctionObservation] = []
        for (n, row) in records.dropFirst().enumerated() {
            func cell(_ i: Int?) -> String? { i.flatMap { $0 < row.count ? row[$0].trimmingCharacters(in: .whitespaces) : nil } }
            guard let name = cell(nameCol), !name.isEmpty else { continue }
            guard let lat = cell(latCol).flatMap(Double.init), let lon = cell(lonCol).flatMap(Double.init),
                  let c = try? Coordinate(validatingLatitude: lat, longitude: lon), !c.isNullIsland else {
                throw ReadError(description: "row \(n + 2): latitude/longitude missing or out of range")
            }
            let rowRoad = cell(roadCol).flatMap { $0.isEmpty ? nil : RoadReference.normalize($0) } ?? road
            let kind = JunctionMention.Kind(label: cell(kindCol)) ?? JunctionName.kind(of: name, fallback: .unspecified)
            out.append(JunctionObservation(road: rowRoad ?? "", name: name, kind: kind, coordinate: c, origin: origin))
        }
        return out
    }
}

extension JunctionMention.Kind {
    /// "exit", "interchange", "triangle", "" — readable in exports.
    public var label: String {
        switch self {
        case .exit: "exit"
        case .interchange: "interchange"
        case .triangle: "triangle"
        case .unspecified: ""
        }
    }

    init?(label: String?) {
        switch label?.lowercased() {
        case "exit", "as": self = .exit
        case "interchange", "ak": self = .interchange
        case "triangle", "ad": self = .triangle
        default: return nil
        }
    }
}
