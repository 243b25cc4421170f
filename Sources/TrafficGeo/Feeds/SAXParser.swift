import CXMLStream
import Foundation

/// What a `SAXParser` reports; names arrive as Swift strings (invalid UTF-8 repaired), text as
/// libxml2's UTF-8 bytes (valid for the call only), so that a handler can gather an element's
/// pieces before it makes one string of them.
protocol SAXHandler: AnyObject {
    func startElement(_ parser: SAXParser, localName: String, namespaceURI: String?, qualifiedName: String, attributes: [String: String])
    func endElement(_ parser: SAXParser, localName: String, namespaceURI: String?, qualifiedName: String)
    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>)
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
    /// Strings for the element names and namespace URIs seen recently (see `name(_:)`).
    private var names: [(pointer: UnsafePointer<UInt8>, bytes: ContiguousArray<UInt8>, string: String)] = []
    private var lastName = -1

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
            let local = parser.name(localname)
            let qualified = prefix.map { parser.name($0) + ":" + local } ?? local
            var attrs: [String: String] = [:]
            if let attributes, count > 0 {
                // Five pointers per attribute: localname, prefix, URI, value start, value end.
                for i in 0..<Int(count) {
                    guard let name = attributes[i * 5], let start = attributes[i * 5 + 3], let end = attributes[i * 5 + 4] else { continue }
                    let length = max(0, end - start)
                    attrs[String(cString: name)] = String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self)
                }
            }
            parser.handler.startElement(parser, localName: local, namespaceURI: uri.map(parser.name), qualifiedName: qualified, attributes: attrs)
        }
        callbacks.end_element = { user, localname, prefix, uri in
            guard let parser = SAXParser.from(user), let localname else { return }
            let local = parser.name(localname)
            let qualified = prefix.map { parser.name($0) + ":" + local } ?? local
            parser.handler.endElement(parser, localName: local, namespaceURI: uri.map(parser.name), qualifiedName: qualified)
        }
        callbacks.characters = { user, text, length in
            guard let parser = SAXParser.from(user), let text, length > 0 else { return }
            parser.handler.characters(parser, UnsafeBufferPointer(start: text, count: Int(length)))
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

    /// The string for a name or URI from libxml2. Its dictionary hands out the same pointer for
    /// the same name, so the few strings a feed uses are made once and then found by address;
    /// the bytes are compared too, so nothing depends on that being so.
    private func name(_ pointer: UnsafePointer<UInt8>) -> String {
        let length = strlen(pointer)
        // Names come back in the order they were first seen: start looking after the last one found.
        for step in 0..<names.count {
            let slot = (lastName + 1 + step) % names.count
            guard names[slot].pointer == pointer, names[slot].bytes.count == length,
                  length == 0 || names[slot].bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, pointer, length) == 0 }) else { continue }
            lastName = slot
            return names[slot].string
        }
        let string = String(cString: pointer)
        let entry = (pointer, ContiguousArray(UnsafeBufferPointer(start: pointer, count: length)), string)
        if names.count < 32 { names.append(entry); lastName = names.count - 1 } else { lastName = (lastName + 1) % 32; names[lastName] = entry }
        return string
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> SAXParser? {
        user.map { Unmanaged<SAXParser>.fromOpaque($0).takeUnretainedValue() }
    }
}
