import Foundation

/// Lenient reads of JSON values decoded with `JSONSerialization`: numbers may come as strings
/// and strings as numbers, as live APIs drift.
package enum LooseJSON {
    package static func string(_ value: Any?) -> String? {
        switch value {
        case let s as String: return s
        case let n as NSNumber: return n.stringValue
        case let a as [Any]: return a.compactMap { string($0) }.joined(separator: " ")
        default: return nil
        }
    }

    package static func double(_ value: Any?) -> Double? {
        switch value {
        case let n as NSNumber: return n.doubleValue
        case let s as String: return Double(s.trimmed)
        default: return nil
        }
    }

    /// Every scalar member of an object as text (arrays joined), for `Incident.properties`.
    package static func flatten(_ object: [String: Any], skipping skipped: Set<String>) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in object where !skipped.contains(key) {
            if value is NSNull { continue }
            if let s = string(value), !s.isEmpty { out[key] = String(s.prefix(4096)) }
        }
        return out
    }
}
