import Foundation

/// A small ordered JSON object builder: keys come out in the order written (JSONEncoder sorts or
/// shuffles them), numbers in their shortest round-trip form.
package struct JSONObjectText {
    private(set) var text = "{"
    private var first = true

    package init() {}

    package mutating func add(_ key: String, _ value: String?) {
        guard let value else { return }
        appendKey(key)
        JSONObjectText.appendString(value, to: &text)
    }

    package mutating func add(_ key: String, _ value: Double?, digits: Int? = nil) {
        guard let value, value.isFinite else { return }
        appendKey(key)
        text += JSONObjectText.number(value, digits: digits)
    }

    package mutating func add(raw key: String, _ json: String?) {
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

    package func closed() -> String { text + "}" }

    package static func number(_ value: Double, digits: Int? = nil) -> String {
        guard let digits else { return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)" }
        let rounded = round(value, digits)
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

    package static func string(_ s: String) -> String {
        var out = ""
        appendString(s, to: &out)
        return out
    }

    /// `value` rounded to `digits` decimals.
    package static func round(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }
}
