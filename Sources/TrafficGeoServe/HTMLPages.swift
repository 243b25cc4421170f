import Foundation
import TrafficGeoSupport

/// The HTML side of the API (the standard's HTML conformance class): the map for the landing
/// page and the items, and a plain page for every other resource, with its links followable.
enum HTMLPages {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A resource shown as a page: its title, its links, and the JSON itself.
    static func document(title: String, links: [Link], json: String) -> String {
        var pretty = json
        if let data = json.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data),
           let text = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .withoutEscapingSlashes]) {
            pretty = String(decoding: text, as: UTF8.self)
        }
        let items = links.map { "<li><a href=\"\(escape($0.href))\">\(escape($0.title))</a> <small>(\(escape($0.rel)), \(escape($0.type)))</small></li>" }
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) – trafficgeo</title>
        <style>body{font:15px/1.4 system-ui,sans-serif;margin:1em auto;max-width:60em;padding:0 1em}pre{background:#f4f4f4;padding:1em;overflow:auto}</style>
        </head><body><h1>\(escape(title))</h1>
        <p><a href="/">The map</a> · <a href="/collections">Collections</a> · <a href="/api?f=html">API</a></p>
        <ul>\(items.joined())</ul>
        <pre>\(escape(pretty))</pre>
        </body></html>
        """
    }
}
