import Foundation

/// A small ordered JSON object builder: keys come out in the order written (JSONEncoder sorts or
/// shuffles them), numbers in their shortest round-trip form.
struct JSONObjectText {
    private(set) var text = "{"
    private var first = true

    mutating func add(_ key: String, _ value: String?) {
        guard let value else { return }
        appendKey(key)
        JSONObjectText.appendString(value, to: &text)
    }

    mutating func add(_ key: String, _ value: Double?, digits: Int? = nil) {
        guard let value, value.isFinite else { return }
        appendKey(key)
        text += JSONObjectText.number(value, digits: digits)
    }

    mutating func add(raw key: String, _ json: String?) {
        guard let json else { return }
        appendKey(key)
        text += json
    }

    private mutating func appendKey(_ key: String) {
        if !first { text += "," }
        first = false
        JSONObjectText.appendString(key, to: &text)
        text += ":"
    }

    func closed() -> String { text + "}" }

    static func number(_ value: Double, digits: Int? = nil) -> String {
        guard let digits else { return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)" }
        let rounded = Annotation.round(value, digits)
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : "\(rounded)"
    }

    static func appendString(_ s: String, to out: inout String) {
        out += "\""
        // Most strings need no escaping: copy them whole (per-scalar appends were most of the output time).
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    static func string(_ s: String) -> String {
        var out = ""
        appendString(s, to: &out)
        return out
    }
}

extension Annotation {
    /// The annotation object of DESIGN.md section 6, keys in its order.
    var jsonText: String {
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
        o.add("road", road)
        o.add("category", category)
        o.add("updated", updated)
        o.add("expires", expires)
        o.add("weblink", weblink)
        o.add("source", source)
        o.add("positionSource", positionSource)
        o.add("precision", precision)
        o.add("confidence", confidence, digits: 2)
        return o.closed()
    }
}
