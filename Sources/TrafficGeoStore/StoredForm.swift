import Foundation
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
package enum PropertiesJSON {
    package static func text(_ dictionary: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
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
