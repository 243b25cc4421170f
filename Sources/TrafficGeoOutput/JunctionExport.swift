import Foundation
import TrafficGeoGeocoding
import TrafficGeoSupport

/// The known junctions written out: GeoJSON (RFC 7946 points, the ODbL attribution when OSM
/// imports are among them) and CSV (RFC 4180, spreadsheet-safe quoting like the query results).
/// `JunctionExchange.read` reads both back.
///
///     let text = JunctionExport.geoJSON(try store.knownJunctions(roads: ["A4"]))
public enum JunctionExport {
    public static func geoJSON(_ junctions: [KnownJunction]) -> String {
        var out = "{\"type\":\"FeatureCollection\","
        if junctions.contains(where: { $0.learnedFrom.contains("osm") }) {
            out += "\"attribution\":\(JSONObjectText.string(JunctionExchange.osmAttribution)),"
        }
        out += "\"features\":["
        for (n, j) in junctions.enumerated() {
            if n > 0 { out += "," }
            var p = JSONObjectText()
            p.add("road", j.road)
            p.add("name", j.name)
            p.add("kind", j.kind.label)
            p.add("support", Double(j.support), digits: 0)
            p.add("spread_m", j.spreadMeters, digits: 1)
            p.add("learned_from", j.learnedFrom)
            out += "{\"type\":\"Feature\",\"id\":\(JSONObjectText.string(j.road + "/" + j.key)),"
                + "\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(JSONObjectText.number(j.coordinate.longitude, digits: 7)),\(JSONObjectText.number(j.coordinate.latitude, digits: 7))]},"
                + "\"properties\":\(p.closed())}"
        }
        return out + "]}\n"
    }

    public static let csvHeader = ["road", "name", "kind", "latitude", "longitude", "support", "spread_m", "learned_from"]

    public static func csv(_ junctions: [KnownJunction]) -> String {
        var out = csvHeader.joined(separator: ",") + "\r\n"
        for j in junctions {
            let fields = [j.road, j.name, j.kind.label, JSONObjectText.number(j.coordinate.latitude, digits: 7),
                          JSONObjectText.number(j.coordinate.longitude, digits: 7), String(j.support),
                          JSONObjectText.number(j.spreadMeters, digits: 1), j.learnedFrom]
            out += fields.map(CSVResultWriter.quote).joined(separator: ",") + "\r\n"
        }
        return out
    }
}
