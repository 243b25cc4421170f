import Foundation
import NIOConcurrencyHelpers
import TrafficGeoGeocoding
import TrafficGeoModel

// How every store keeps a few values, defined once so that the stores agree (and a copy between
// them, `StoreTransfer`, moves them unchanged).

extension PositionSource.Kind {
    /// The kind as stored: a small integer (0 and 1 take no bytes in an SQLite record, a word
    /// 4 to 8; a million feed positions, 4 MB).
    package var storeCode: Int64 {
        switch self {
        case .feed: 0
        case .weblink: 1
        case .geocoder: 2
        }
    }

    package init?(storeCode: Int64) {
        switch storeCode {
        case 0: self = .feed
        case 1: self = .weblink
        case 2: self = .geocoder
        default: return nil
        }
    }
}

/// An incident's other fields (`Incident.properties`) as a JSON object, keys sorted: the same
/// text for the same properties.
///
/// The text is exactly what `JSONSerialization` with `.sortedKeys` writes (stored content hashes
/// depend on it, so a store written before stays unchanged), but built by hand: Foundation sorts
/// keys with a locale-aware comparison and bridges every value, which was 42 % of ingesting a
/// DATEX II feed (a dozen properties an incident). The key order of a set of keys is asked of
/// `JSONSerialization` once and kept (`KeyOrder`); values are escaped as it escapes them
/// (`PropertiesJSONTests` compares the two).
package enum PropertiesJSON {
    package static func text(_ dictionary: [String: String]) -> String {
        if dictionary.isEmpty { return "{}" }
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(256)
        for (i, key) in KeyOrder.shared.sorted(dictionary.keys).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendString(key, to: &out)
            out.append(UInt8(ascii: ":"))
            appendString(dictionary[key]!, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// A JSON string as `JSONSerialization` writes it: `"` `\` and `/` escaped, the named
    /// control characters by name, the others as `\u00xx`; everything else as it is.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case UInt8(ascii: "/"): out.append(contentsOf: [0x5C, 0x2F])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The order `JSONSerialization` puts a set of keys in, asked once per set (feeds repeat the
    /// same few sets) and kept; at most `limit` sets, then forgotten and asked again.
    final class KeyOrder: Sendable {
        static let shared = KeyOrder()
        private let orders = NIOLockedValueBox<[[String]: [String]]>([:])
        private let limit = 4096

        func sorted(_ keys: Dictionary<String, String>.Keys) -> [String] {
            let plain = keys.sorted()
            if let known = orders.withLockedValue({ $0[plain] }) { return known }
            // Asked outside the lock: JSONSerialization is the slow part.
            let order = Self.foundationOrder(plain)
            let limit = self.limit
            orders.withLockedValue { orders in
                if orders.count >= limit { orders.removeAll(keepingCapacity: true) }
                orders[plain] = order
            }
            return order
        }

        /// The keys in the order `JSONSerialization` writes them.
        static func foundationOrder(_ keys: [String]) -> [String] {
            var probe: [String: String] = [:]
            for (i, key) in keys.enumerated() { probe[key] = String(i) }
            guard let data = try? JSONSerialization.data(withJSONObject: probe, options: [.sortedKeys]) else { return keys }
            // The values are the keys' numbers: their order in the text is the keys' order.
            let text = Array(data)
            var positions: [(Int, String)] = []
            for (i, key) in keys.enumerated() {
                guard let at = Self.offset(of: Array(":\"\(i)\"".utf8), in: text) else { return keys }
                positions.append((at, key))
            }
            return positions.sorted { $0.0 < $1.0 }.map(\.1)
        }

        private static func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
            guard haystack.count >= needle.count else { return nil }
            for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
                if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
            }
            return nil
        }
    }

    package static func parse(_ text: String) -> [String: String] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])?.compactMapValues { $0 as? String } ?? [:]
    }
}

extension GeocodeAnswer {
    /// The answer as the geocode cache keeps it: its status (found or not-found) and its JSON.
    package func cacheEntry() throws -> (status: String, json: String) {
        var stored = self
        stored.fromCache = false
        return (candidates.isEmpty ? "not-found" : "found", String(decoding: try JSONEncoder().encode(stored), as: UTF8.self))
    }

    /// An answer read back from the cache.
    package init(cachedJSON json: String) throws {
        self = try JSONDecoder().decode(GeocodeAnswer.self, from: Data(json.utf8))
        fromCache = true
    }
}
