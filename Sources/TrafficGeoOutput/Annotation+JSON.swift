import Foundation
import TrafficGeoSupport

extension Annotation {
    /// The annotation object, keys in the order of docs/architecture.md (annotations).
    package var jsonText: String {
        var o = JSONObjectText()
        o.add("id", id)
        if let coordinate {
            var c = JSONObjectText()
            c.add("latitude", coordinate.latitude, digits: 6)
            c.add("longitude", coordinate.longitude, digits: 6)
            o.add(raw: "coordinate", c.closed())
        } else {
            o.add(raw: "coordinate", "null")
        }
        o.add("title", title)
        o.add("subtitle", subtitle)
        o.add("pinColor", pinColor.rawValue)
        o.add("distanceMeters", distanceMeters, digits: 1)
        o.add("bearingDegrees", bearingDegrees, digits: 1)
        o.add("alongRouteMeters", alongRouteMeters, digits: 1)
        o.add("road", road)
        o.add("category", category)
        o.add("updated", updated)
        o.add("expires", expires)
        o.add("weblink", weblink)
        o.add("source", source)
        o.add("positionSource", positionSource)
        o.add("precision", precision)
        o.add("confidence", confidence, digits: 2)
        o.add("ended", ended)
        o.add("state", state.rawValue)
        o.add("lastHeard", lastHeard)
        for (property, key) in Self.detailColumns { o.add(key, details[property]) }
        o.add("event", event)
        if !reports.isEmpty { o.add(raw: "reports", reportsJSON) }
        return o.closed()
    }
}
