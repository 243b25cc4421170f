import Foundation

/// A request's query string, decoded (`%XX`, and `+` as a space as HTML forms send it), in the
/// order given, so links can be rebuilt with one parameter changed.
struct QueryParameters: Sendable {
    private(set) var items: [(name: String, value: String)] = []

    init(_ query: String?) throws(Problem) {
        guard let query, !query.isEmpty else { return }
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) throws(Problem) -> String {
                guard let text = Self.unescape(s) else {
                    throw Problem(status: .badRequest, title: "Malformed query string",
                                  detail: "'\(s)' is not percent-encoded correctly (a % must be followed by two hex digits, and the bytes must be UTF-8).")
                }
                return text
            }
            items.append((try decode(pair[0]), pair.count > 1 ? try decode(pair[1]) : ""))
        }
    }

    var names: [String] { items.map(\.name) }

    /// The one value of `name`; a parameter given twice is ambiguous (400).
    func single(_ name: String) throws(Problem) -> String? {
        let values = items.filter { $0.name == name }.map(\.value)
        if values.count > 1 {
            throw Problem.badParameter(name, "'\(name)' is given \(values.count) times; give it once.")
        }
        return values.first
    }

    /// Every value of `name`, comma lists split: `road=A1,A3&road=A4` is A1, A3, A4.
    func list(_ name: String) -> [String] {
        items.filter { $0.name == name }.flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// 400 for a parameter this resource does not know: the standard's test suite expects it,
    /// and a misspelt filter silently ignored would answer a different question.
    func allowOnly(_ allowed: Set<String>) throws(Problem) {
        for name in names where !allowed.contains(name) {
            throw Problem.badParameter(name, "'\(name)' is not a parameter of this resource; it takes: \(allowed.sorted().joined(separator: ", ")).")
        }
    }

    /// The query string with `changes` applied (nil removes), encoded: the parameters not
    /// changed in their order, then the changed ones by name. (A literal list, not a
    /// Dictionary: every items answer builds three of these for its links.)
    func encoded(changing changes: KeyValuePairs<String, String?>) -> String {
        var out = items.filter { item in !changes.contains { $0.key == item.name } }
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
            if let value { out.append((name, value)) }
        }
        var text = ""
        for (i, item) in out.enumerated() {
            if i > 0 { text += "&" }
            text += Self.escape(item.name)
            text += "="
            text += Self.escape(item.value)
        }
        return text
    }

    // Percent-coding by hand, on UTF-8 bytes: Foundation's goes through CFString, which was a
    // tenth of the time of a nearest request.

    /// `%XX` decoded and `+` as a space; nil when a % lacks its two hex digits or the bytes are not UTF-8.
    static func unescape(_ s: Substring) -> String? {
        if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(s) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count)
        var i = s.utf8.startIndex
        func hex(_ b: UInt8) -> UInt8? {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        while i < s.utf8.endIndex {
            let b = s.utf8[i]
            if b == UInt8(ascii: "%") {
                let h = s.utf8.index(after: i)
                guard h < s.utf8.endIndex, s.utf8.index(after: h) < s.utf8.endIndex,
                      let high = hex(s.utf8[h]), let low = hex(s.utf8[s.utf8.index(after: h)]) else { return nil }
                bytes.append(high << 4 | low)
                i = s.utf8.index(h, offsetBy: 2)
            } else {
                bytes.append(b == UInt8(ascii: "+") ? UInt8(ascii: " ") : b)
                i = s.utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Everything but unreserved characters (and `,` `:`, which links keep readable) as `%XX`.
    static func escape(_ s: String) -> String {
        func plain(_ b: UInt8) -> Bool {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ","), UInt8(ascii: ":"): return true
            default: return false
            }
        }
        if s.utf8.allSatisfy(plain) { return s }
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count * 3)
        for b in s.utf8 {
            if plain(b) { out.append(b) } else { out += [UInt8(ascii: "%"), digits[Int(b >> 4)], digits[Int(b & 15)]] }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// What the client asked for: JSON (GeoJSON for items) or an HTML page. `f=json|html` wins;
/// else a browser's Accept (text/html before any JSON) picks HTML; everything else gets JSON.
enum ResponseFormat: String, Sendable {
    case json, html

    static func negotiate(_ parameters: QueryParameters, accept: String?) throws(Problem) -> ResponseFormat {
        if let f = try parameters.single("f") {
            switch f.lowercased() {
            case "json", "geojson", "application/json", "application/geo+json": return .json
            case "html", "text/html": return .html
            default: throw Problem.badParameter("f", "f='\(f)' is not a format this server writes: use f=json or f=html.")
            }
        }
        guard let accept = accept?.lowercased() else { return .json }
        let html = accept.range(of: "text/html")?.lowerBound
        let json = accept.range(of: "json")?.lowerBound
        if let html, json.map({ html < $0 }) ?? true { return .html }
        return .json
    }
}
