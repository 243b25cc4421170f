import CXMLStream
import Foundation

/// What a `SAXParser` reports; names and text arrive as Swift strings (invalid UTF-8 repaired).
protocol SAXHandler: AnyObject {
    func startElement(_ parser: SAXParser, localName: String, namespaceURI: String?, qualifiedName: String, attributes: [String: String])
    func endElement(_ parser: SAXParser, localName: String, namespaceURI: String?, qualifiedName: String)
    func characters(_ parser: SAXParser, _ text: String)
    /// Any ENTITY declaration in the document's DTD.
    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool)
}

/// A streaming XML parser on libxml2's SAX2 push interface.
///
/// Why not Foundation's XMLParser: on Linux it crashes on hostile input (force-unwrapped strings
/// for element names that are not UTF-8, strlen on the missing data of `<?pi?>`), found by
/// fuzzing (Fuzz/corpus/atom, Fuzz/corpus/rss). Here every libxml2 string goes through
/// `String(cString:)`, which repairs bad UTF-8, and nothing is assumed non-null.
///
/// Safety settings (Sources/CXMLStream): no network, no DTD loading, declared entities never
/// registered (so never expanded or loaded), libxml2's default limits on (depth 256, 10 MB text).
final class SAXParser {
    /// Unowned: the handler outlives `parse` (the reader holds both); a weak load per callback was 2 % of reading a feed.
    private unowned let handler: SAXHandler
    private var stream: OpaquePointer?
    /// The first error libxml2 reported.
    private(set) var error: (code: Int, line: Int, column: Int, message: String)?
    private(set) var stopped = false

    init(handler: SAXHandler) {
        self.handler = handler
    }

    /// The line being parsed (1-based).
    var lineNumber: Int { stream.map { Int(xml_stream_line($0)) } ?? 0 }
    var columnNumber: Int { stream.map { Int(xml_stream_column($0)) } ?? 0 }

    /// Stops parsing after the current callback (`parse` then returns false).
    func abort() {
        stopped = true
        if let stream { xml_stream_stop(stream) }
    }

    /// Parses the input to its end; false when the document is not well-formed or was aborted.
    func parse(_ input: InputStream, chunkSize: Int = 1 << 16) -> Bool {
        var callbacks = xml_stream_callbacks()
        callbacks.start_element = { user, localname, prefix, uri, count, attributes in
            guard let parser = SAXParser.from(user), let localname else { return }
            let local = String(cString: localname)
            let qualified = prefix.map { String(cString: $0) + ":" + local } ?? local
            var attrs: [String: String] = [:]
            if let attributes, count > 0 {
                // Five pointers per attribute: localname, prefix, URI, value start, value end.
                for i in 0..<Int(count) {
                    guard let name = attributes[i * 5], let start = attributes[i * 5 + 3], let end = attributes[i * 5 + 4] else { continue }
                    let length = max(0, end - start)
                    attrs[String(cString: name)] = String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self)
                }
            }
            parser.handler.startElement(parser, localName: local, namespaceURI: uri.map { String(cString: $0) }, qualifiedName: qualified, attributes: attrs)
        }
        callbacks.end_element = { user, localname, prefix, uri in
            guard let parser = SAXParser.from(user), let localname else { return }
            let local = String(cString: localname)
            let qualified = prefix.map { String(cString: $0) + ":" + local } ?? local
            parser.handler.endElement(parser, localName: local, namespaceURI: uri.map { String(cString: $0) }, qualifiedName: qualified)
        }
        callbacks.characters = { user, text, length in
            guard let parser = SAXParser.from(user), let text, length > 0 else { return }
            parser.handler.characters(parser, String(decoding: UnsafeBufferPointer(start: text, count: Int(length)), as: UTF8.self))
        }
        callbacks.entity_declaration = { user, name, external in
            guard let parser = SAXParser.from(user) else { return }
            parser.handler.entityDeclaration(parser, name: name.map { String(cString: $0) } ?? "", external: external != 0)
        }
        callbacks.error = { user, code, line, column, message in
            guard let parser = SAXParser.from(user), parser.error == nil else { return }
            let text = message.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "XML error"
            parser.error = (Int(code), Int(line), Int(column), text)
        }

        input.open()
        defer { input.close() }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        let first = max(0, input.read(&buffer, maxLength: 4))   // libxml2 detects the encoding from these
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let created = buffer.withUnsafeBytes({ b in
            xml_stream_create(&callbacks, me, b.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(first))
        }) else {
            error = (0, 0, 0, "cannot create an XML parser (out of memory)")
            return false
        }
        stream = created
        defer {
            xml_stream_free(created)
            stream = nil
        }
        while !stopped {
            let n = input.read(&buffer, maxLength: buffer.count)
            if n < 0 {
                error = error ?? (0, lineNumber, columnNumber, "cannot read the input: \(input.streamError?.localizedDescription ?? "read error")")
                return false
            }
            let status = buffer.withUnsafeBytes { b in
                xml_stream_push(created, b.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(n), n == 0 ? 1 : 0)
            }
            if status != 0 || xml_stream_well_formed(created) == 0 || n == 0 { break }
        }
        return !stopped && xml_stream_well_formed(created) != 0 && error == nil
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> SAXParser? {
        user.map { Unmanaged<SAXParser>.fromOpaque($0).takeUnretainedValue() }
    }
}
