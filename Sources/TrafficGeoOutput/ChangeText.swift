import Foundation
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// `trafficgeo changes` lines: one change-feed event with the incident as it is now (nil: it
/// was deleted since).
public enum ChangeText {
    /// One NDJSON line (without the newline): seq, at, change, store id, incident (an annotation).
    public static func ndjson(_ change: Change, _ stored: StoredIncident?) -> String {
        var o = JSONObjectText()
        o.add("seq", Double(change.sequence))
        o.add("at", TimestampParser.format(change.at))
        o.add("change", change.kind.rawValue)
        o.add("storeId", Double(change.storeID))
        o.add("ended", stored?.ended.map(TimestampParser.format))
        o.add(raw: "incident", stored.map { Annotation(QueryResult(stored: $0)).jsonText } ?? "null")
        return o.closed()
    }

    /// One GeoJSON text sequence record (RFC 8142: RS, a Feature, a newline): the incident's
    /// point (null geometry without one), the event and the annotation in the properties.
    public static func geojsonSequence(_ change: Change, _ stored: StoredIncident?) -> String {
        var feature = JSONObjectText()
        feature.add("type", "Feature")
        feature.add("id", stored?.incident.id)
        if let p = stored?.incident.position {
            feature.add(raw: "geometry", "{\"type\":\"Point\",\"coordinates\":[\(JSONObjectText.number(p.longitude)),\(JSONObjectText.number(p.latitude))]}")
        } else {
            feature.add(raw: "geometry", "null")
        }
        feature.add(raw: "properties", ndjson(change, stored))
        return "\u{1E}" + feature.closed() + "\n"
    }
}
