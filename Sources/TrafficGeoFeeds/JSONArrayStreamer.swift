import Foundation

/// Splits the big arrays of a JSON document into their elements without reading the whole document.
///
/// Incident feeds in JSON are one object holding one or more long arrays (`{"warning":[...]}`,
/// `{"type":"FeatureCollection","features":[...]}`) or one bare array. The streamer scans bytes in
/// chunks, tracks strings and nesting, and hands each element of the wanted arrays to `handle` as
/// its own small `Data`, to be decoded alone: memory stays at one element, and a broken element
/// spoils only itself. Foundation's JSON decoders need the whole document, hence this scanner.
struct JSONArrayStreamer {
    /// The keys (at the top level of the root object) whose arrays are split; `nil` also splits a
    /// root array.
    var keys: Set<String>
    var maxElementBytes = 64 << 20

    enum ScanError: Error, CustomStringConvertible {
        case truncated
        case unexpected(String, offset: Int)
        case elementTooLarge(Int)

        var description: String {
            switch self {
            case .truncated: return "the document ends inside a value (truncated?)"
            case let .unexpected(what, offset): return "\(what) at byte \(offset)"
            case let .elementTooLarge(limit): return "an array element is larger than \(limit) bytes"
            }
        }
    }

    /// Calls `handle(key, elementBytes)` for every element; `key` is nil for a root array.
    /// Returns the top-level members it saw: scalars (such as `"type"`) as raw JSON text, objects
    /// and arrays as `{…}` and `[…]` (present, content not kept).
    @discardableResult
    /// The top-level members `scan` returned, named for a message: "events, meta, pagination"
    /// (sorted, at most 8, each cut to 40 characters).
    static func describeMembers(_ topLevel: [String: String]) -> String {
        let names = topLevel.keys.sorted()
        let shown = names.prefix(8).map { String($0.prefix(40)) }.joined(separator: ", ")
        return names.count > 8 ? shown + ", …" : shown
    }

    func scan(_ stream: InputStream, handle: (String?, Data) throws -> Void) throws -> [String: String] {
        stream.open()
        defer { stream.close() }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)

        var depth = 0
        var inString = false
        var escaped = false
        var offset = 0
        // Top-level key tracking (depth 1 of the root object).
        var rootIsObject = false
        var keyBytes: [UInt8] = []
        var capturingKey = false
        var lastKey: String?
        var expectingValue = false
        var scalarBytes: [UInt8] = []
        var topLevelScalars: [String: String] = [:]
        // Array splitting.
        var splitting = false          // inside a wanted array (its elements are at depth `splitDepth`)
        var splitKey: String?
        var splitDepth = 0
        var element: [UInt8] = []
        var inElement = false
        var elementIsScalar = false
        var sawAnything = false

        func finishElement() throws {
            var end = element.count
            while end > 0, Self.isSpace(element[end - 1]) { end -= 1 }
            if end > 0 { try handle(splitKey, Data(element[0..<end])) }
            element.removeAll(keepingCapacity: true)
            inElement = false
            elementIsScalar = false
        }

        while true {
            let n = stream.read(&chunk, maxLength: chunk.count)
            if n < 0 { throw stream.streamError ?? ScanError.truncated }
            if n == 0 { break }
            for i in 0..<n {
                let c = chunk[i]
                offset += 1
                if inElement {
                    element.append(c)
                    if element.count > maxElementBytes { throw ScanError.elementTooLarge(maxElementBytes) }
                }
                if inString {
                    if escaped { escaped = false }
                    else if c == 0x5C { escaped = true }             // backslash
                    else if c == 0x22 {                              // closing quote
                        inString = false
                        if capturingKey {
                            capturingKey = false
                            lastKey = String(decoding: keyBytes, as: UTF8.self)
                        }
                    }
                    if capturingKey && inString { keyBytes.append(c) }
                    if expectingValue && depth == 1 && !splitting { scalarBytes.append(c) }
                    continue
                }
                if Self.isSpace(c) { continue }
                sawAnything = true
                // A new element of a split array starts at the first non-space byte at its depth.
                if splitting && depth == splitDepth && !inElement && c != 0x2C && c != 0x5D {
                    inElement = true
                    element = [c]
                    elementIsScalar = !(c == 0x7B || c == 0x5B)  // strings, numbers, literals end at , or ]
                }
                switch c {
                case 0x22: // "
                    inString = true
                    if rootIsObject && depth == 1 && !expectingValue {
                        capturingKey = true
                        keyBytes.removeAll(keepingCapacity: true)
                    } else if expectingValue && depth == 1 {
                        scalarBytes.append(c)
                    }
                case 0x3A: // :
                    if depth == 1 && rootIsObject { expectingValue = true; scalarBytes.removeAll(keepingCapacity: true) }
                case 0x7B, 0x5B: // { [
                    if depth == 0 {
                        rootIsObject = c == 0x7B
                        if c == 0x5B && keys.contains("") { splitting = true; splitKey = nil; splitDepth = 1 }
                    } else if depth == 1 && rootIsObject && expectingValue {
                        // An object or array member: noted as present (its content is not kept).
                        if let key = lastKey { topLevelScalars[key] = c == 0x7B ? "{…}" : "[…]" }
                        if c == 0x5B, let key = lastKey, keys.contains(key) {
                            splitting = true; splitKey = key; splitDepth = 2
                        }
                        expectingValue = false
                    }
                    depth += 1
                case 0x7D, 0x5D: // } ]
                    if elementIsScalar && inElement && depth == splitDepth {
                        element.removeLast()
                        try finishElement()
                    }
                    depth -= 1
                    if depth < 0 { throw ScanError.unexpected("an unmatched closing bracket", offset: offset) }
                    if inElement && depth == splitDepth && !elementIsScalar { try finishElement() }
                    if splitting && depth == splitDepth - 1 { splitting = false }
                    if depth == 1 && expectingValue && rootIsObject { expectingValue = false }
                case 0x2C: // ,
                    if inElement && elementIsScalar && depth == splitDepth {
                        element.removeLast()
                        try finishElement()
                    }
                    if depth == 1 && rootIsObject && expectingValue {
                        if let key = lastKey { topLevelScalars[key] = String(decoding: scalarBytes, as: UTF8.self) }
                        expectingValue = false
                    }
                default:
                    if expectingValue && depth == 1 { scalarBytes.append(c) }
                }
            }
        }
        if inString || depth != 0 || !sawAnything { throw ScanError.truncated }
        if expectingValue, let key = lastKey { topLevelScalars[key] = String(decoding: scalarBytes, as: UTF8.self) }
        return topLevelScalars
    }

    @inline(__always)
    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
}
