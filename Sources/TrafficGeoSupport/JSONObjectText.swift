import Foundation

/// A small ordered JSON object builder: keys come out in the order written (JSONEncoder sorts or
/// shuffles them), numbers in their shortest round-trip form. It writes UTF-8 bytes, not a
/// String: appending to a String re-checks capacity, uniqueness and ASCII-ness per piece, which
/// was most of the time `serve` spent writing a page of features.
package struct JSONObjectText {
    package private(set) var bytes: [UInt8]
    private var first = true

    package init() { bytes = [UInt8(ascii: "{")] }

    /// An object written after what `buffer` holds already (a page of features in one buffer):
    /// `closedBytes()` returns the buffer with the object added.
    package init(appendingTo buffer: consuming [UInt8]) {
        bytes = consume buffer
        bytes.append(UInt8(ascii: "{"))
    }

    package mutating func add(_ key: String, _ value: String?) {
        guard let value else { return }
        appendKey(key)
        JSONObjectText.appendString(value, to: &bytes)
    }

    package mutating func add(_ key: String, _ value: Double?, digits: Int? = nil) {
        guard let value, value.isFinite else { return }
        appendKey(key)
        JSONObjectText.appendNumber(value, digits: digits, to: &bytes)
    }

    /// `"key":` and then the JSON `write` appends: a value written straight into the buffer
    /// (a feature's geometry), with no String in between.
    package mutating func add(raw key: String, writing write: (inout [UInt8]) -> Void) {
        appendKey(key)
        write(&bytes)
    }

    package mutating func add(_ key: String, _ value: Int64) {
        appendKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    package mutating func add(raw key: String, _ json: String?) {
        guard let json else { return }
        appendKey(key)
        bytes.append(contentsOf: json.utf8)
    }

    /// `"key":{`: the members added next go into that object, until `closeObject()`.
    package mutating func openObject(_ key: String) {
        appendKey(key)
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    package mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    private mutating func appendKey(_ key: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        JSONObjectText.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    package func closed() -> String {
        String(unsafeUninitializedCapacity: bytes.count + 1) { out in
            let n = out.initialize(fromContentsOf: bytes)
            out[n] = UInt8(ascii: "}")
            return n + 1
        }
    }

    package consuming func closedBytes() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    package static func number(_ value: Double, digits: Int? = nil) -> String {
        let rounded = digits.map { round(value, $0) } ?? value
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : "\(rounded)"
    }

    /// `number(value, digits:)` appended as UTF-8 (short numbers are small Strings: no allocation).
    package static func appendNumber(_ value: Double, digits: Int? = nil, to out: inout [UInt8]) {
        var text = number(value, digits: digits)
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// `s` as a JSON string. U+2028/U+2029 are escaped too: they end a line in JavaScript, and
    /// the map page embeds JSON in a script.
    package static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escaping: check the bytes in place and copy them whole (0xE2
        // leads U+2028/U+2029).
        let copied = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0xE2 { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        func ascii(_ text: StaticString) {
            text.withUTF8Buffer { out.append(contentsOf: $0) }
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": ascii("\\\"")
            case "\\": ascii("\\\\")
            case "\n": ascii("\\n")
            case "\r": ascii("\\r")
            case "\t": ascii("\\t")
            case "\u{2028}": ascii("\\u2028")
            case "\u{2029}": ascii("\\u2029")
            default:
                if scalar.value < 0x20 {
                    let hex = Array("0123456789abcdef".utf8)
                    ascii("\\u00")
                    out.append(hex[Int(scalar.value >> 4)])
                    out.append(hex[Int(scalar.value & 0xF)])
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    package static func string(_ s: String) -> String {
        var out: [UInt8] = []
        appendString(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` rounded to `digits` decimals.
    package static func round(_ value: Double, _ digits: Int) -> Double {
        // The scale from a table: `pow` was 1 % of serving a page of features.
        let scale = powersOfTen.indices.contains(digits) ? powersOfTen[digits] : pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }

    /// 10⁰ … 10¹⁵, each exact.
    private static let powersOfTen: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]
}
