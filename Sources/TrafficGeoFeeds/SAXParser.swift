import CXMLStream
import Foundation

/// What a `SAXParser` reports; elements arrive as the handler's own tag for their local name
/// and their qualified name as a Swift string (invalid UTF-8 repaired), namespace URIs, text and
/// attributes as libxml2's pointers (valid for the call only), so that a handler makes strings
/// only of what it keeps.
protocol SAXHandler: AnyObject {
    /// The handler's number for an element name, asked once per distinct name (prefixes are
    /// asked too; their number is not used) and handed back with every element of that name: a
    /// handler switches on it instead of comparing strings.
    func tag(forElementName name: String) -> Int
    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes)
    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?)
    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>)
    /// Any ENTITY declaration in the document's DTD.
    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool)
}

/// A streaming XML parser on libxml2's SAX2 interface (it pulls the input as it needs it).
///
/// Why not Foundation's XMLParser: on Linux it crashes on hostile input (force-unwrapped strings
/// for element names that are not UTF-8, strlen on the missing data of `<?pi?>`), found by
/// fuzzing (Fuzz/corpus/atom, Fuzz/corpus/rss). Here every libxml2 string goes through
/// `String(cString:)`, which repairs bad UTF-8, and nothing is assumed non-null.
///
/// Safety settings (Sources/CXMLStream): no network, no DTD loading, declared entities never
/// registered (so never expanded or loaded), libxml2's default limits on (depth 256, 10 MB text).
final class SAXParser {
    /// Unowned and unchecked: the handler outlives `parse` (the reader holds both, and `parse`
    /// is the only caller of the handler); a weak load per callback was 2 % of reading a feed,
    /// the checked unowned reference's retain and release another 2 %.
    private unowned(unsafe) let handler: SAXHandler
    private var stream: OpaquePointer?
    /// The first error libxml2 reported.
    private(set) var error: (code: Int, line: Int, column: Int, message: String)?
    private(set) var stopped = false
    /// Strings and tags for the element names and prefixes seen (see `name(_:)`). Unchecked: only
    /// `name` touches it, from libxml2's callbacks on one thread, and the runtime's exclusivity
    /// check cost more than the lookup.
    @exclusivity(unchecked) private var names = NameTable()

    init(handler: SAXHandler) {
        self.handler = handler
    }

    deinit {
        names.release()
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
        // The callbacks borrow the parser (`withParser`) rather than retain and release it: the
        // element and text ones come once or more per element.
        callbacks.start_element = { user, localname, prefix, uri, count, attributes in
            guard let user, let localname else { return }
            SAXParser.withParser(user) { parser in
                let (local, tag) = parser.name(localname)
                let qualified = prefix.map { parser.name($0).string + ":" + local } ?? local
                let attributes = SAXAttributes(pointers: attributes, count: Int(count))
                parser.handler.startElement(parser, tag: tag, namespaceURI: uri.map(SAXName.init), qualifiedName: qualified, attributes: attributes)
            }
        }
        callbacks.end_element = { user, localname, _, uri in
            guard let user, let localname else { return }
            SAXParser.withParser(user) { parser in
                parser.handler.endElement(parser, tag: parser.name(localname).tag, namespaceURI: uri.map(SAXName.init))
            }
        }
        callbacks.characters = { user, text, length in
            guard let user, let text, length > 0 else { return }
            SAXParser.withParser(user) { parser in
                parser.handler.characters(parser, UnsafeBufferPointer(start: text, count: Int(length)))
            }
        }
        callbacks.entity_declaration = { user, name, external in
            guard let user else { return }
            SAXParser.withParser(user) { parser in
                parser.handler.entityDeclaration(parser, name: name.map { String(cString: $0) } ?? "", external: external != 0)
            }
        }
        callbacks.error = { user, code, line, column, message in
            guard let user else { return }
            SAXParser.withParser(user) { parser in
                guard parser.error == nil else { return }
                let text = message.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "XML error"
                parser.error = (Int(code), Int(line), Int(column), text)
            }
        }

        input.open()
        defer { input.close() }
        reading = Reading(input: input, chunkSize: chunkSize)
        defer { reading = nil }
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let created = xml_stream_create(&callbacks, me, { user, buffer, length in
            guard let user, let buffer else { return -1 }
            guard length > 0 else { return 0 }
            return SAXParser.withParser(user) { $0.read(into: buffer, count: Int(length)) }
        }) else {
            error = (0, 0, 0, "cannot create an XML parser (out of memory)")
            return false
        }
        stream = created
        defer {
            xml_stream_free(created)
            stream = nil
        }
        let wellFormed = xml_stream_parse(created) != 0
        return !stopped && wellFormed && error == nil
    }

    /// The input as libxml2 pulls it: it asks for a few KiB at a time, which are served from
    /// chunks read from the stream (one read call per chunk, not per request).
    private final class Reading {
        let input: InputStream
        var chunk: [UInt8]
        var start = 0, end = 0

        init(input: InputStream, chunkSize: Int) {
            self.input = input
            chunk = [UInt8](repeating: 0, count: max(chunkSize, 4096))
        }
    }
    private var reading: Reading?

    /// libxml2's read callback: up to `count` bytes into `buffer`; 0 at the end, -1 on an error
    /// (recorded as the parse's error).
    private func read(into buffer: UnsafeMutablePointer<CChar>, count: Int) -> Int32 {
        guard !stopped, let r = reading else { return 0 }
        if r.start == r.end {
            let n = r.chunk.withUnsafeMutableBufferPointer { r.input.read($0.baseAddress!, maxLength: $0.count) }
            if n < 0 {
                error = error ?? (0, lineNumber, columnNumber, "cannot read the input: \(r.input.streamError?.localizedDescription ?? "read error")")
                return -1
            }
            (r.start, r.end) = (0, n)
            if n == 0 { return 0 }
        }
        let n = min(count, r.end - r.start)
        r.chunk.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + r.start, byteCount: n) }
        r.start += n
        return Int32(n)
    }

    /// The string for a name from libxml2, and the handler's tag for it (see `NameTable`).
    private func name(_ pointer: UnsafePointer<UInt8>) -> (string: String, tag: Int) {
        names.name(for: pointer, tag: handler.tag(forElementName:))
    }

    /// Runs `body` with the parser behind a callback's user pointer, borrowed: `parse` keeps it
    /// alive for as long as libxml2 can call back.
    @inline(__always)
    private static func withParser<Result>(_ user: UnsafeMutableRawPointer, _ body: (SAXParser) -> Result) -> Result {
        Unmanaged<SAXParser>.fromOpaque(user)._withUnsafeGuaranteedRef(body)
    }
}

/// Strings (and the handler's tags) for libxml2's names, made once. libxml2 hands names out of
/// its dictionary, so the same name comes back as the same pointer: a table indexed by the
/// address finds it in one probe. The bytes are compared too (a copy is kept), so nothing
/// depends on that being so; a miss just makes the string and tag again.
private struct NameTable {
    // 1024 slots: DATEX II documents use a few hundred names; with 128 they evicted each other.
    private static let bits = 10
    private static let size = 1 << bits
    private var pointers = [UnsafePointer<UInt8>?](repeating: nil, count: size)
    private var copies = [UnsafeMutablePointer<CChar>?](repeating: nil, count: size)
    private var strings = [String](repeating: "", count: size)
    private var tags = [Int](repeating: 0, count: size)

    mutating func name(for pointer: UnsafePointer<UInt8>, tag: (String) -> Int) -> (string: String, tag: Int) {
        let cName = UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self)
        // The dictionary packs names end to end ("entry\0title\0id\0…"), so neighbouring names
        // share their high address bits and differ by a few bytes: a multiplicative hash spreads
        // them (taking address bits directly put "id" and "link" in one slot, and they evicted
        // each other on every entry).
        let slot = Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: pointer)) &* 0x9E37_79B9_7F4A_7C15) >> (64 - Self.bits))
        if pointers[slot] == pointer, let copy = copies[slot], strcmp(copy, cName) == 0 { return (strings[slot], tags[slot]) }
        let string = String(cString: pointer)
        free(copies[slot])
        copies[slot] = strdup(cName)
        pointers[slot] = copies[slot] == nil ? nil : pointer
        strings[slot] = string
        tags[slot] = tag(string)
        return (string, tags[slot])
    }

    /// Frees the copies; the table is not used after.
    mutating func release() {
        for copy in copies { free(copy) }
        copies = []
        pointers = []
    }
}

/// A namespace URI as libxml2 hands it over, valid during the call only; a string when asked for
/// (readers look at few: making one per element was 2 % of reading a feed).
struct SAXName {
    let pointer: UnsafePointer<UInt8>
    var string: String { String(cString: pointer) }
}

/// An element's attributes as libxml2 hands them over (five pointers each: local name, prefix,
/// URI, value start, value end), valid during the `startElement` call only. A value becomes a
/// string when asked for; most attributes of a feed are never read.
struct SAXAttributes {
    fileprivate let pointers: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    /// How many attributes the element has.
    let count: Int

    /// Every attribute, local name and value, in document order (a publisher's own schema puts
    /// its fields in attributes: truckinfo's `<evt r='A1' x='539007' …>`).
    var all: [(name: String, value: String)] {
        guard let pointers, count > 0 else { return [] }
        return (0..<count).compactMap { i in
            guard let local = pointers[i * 5], let start = pointers[i * 5 + 3], let end = pointers[i * 5 + 4] else { return nil }
            return (String(cString: local), String(decoding: UnsafeBufferPointer(start: start, count: max(0, end - start)), as: UTF8.self))
        }
    }

    /// The value of the attribute with this local name (the last, as a dictionary would keep).
    subscript(name: String) -> String? {
        guard let pointers, count > 0, !name.isEmpty else { return nil }
        var name = name
        return name.withUTF8 { wanted -> String? in
            for i in stride(from: count - 1, through: 0, by: -1) {
                guard let local = pointers[i * 5], let start = pointers[i * 5 + 3], let end = pointers[i * 5 + 4],
                      strlen(local) == wanted.count, memcmp(local, wanted.baseAddress!, wanted.count) == 0 else { continue }
                return String(decoding: UnsafeBufferPointer(start: start, count: max(0, end - start)), as: UTF8.self)
            }
            return nil
        }
    }
}

/// Why a SAX handler stopped reading on purpose (hostile or absurd input) and on which line: the
/// first reason counts. Shared by the Atom/RSS reader and the standards' record reader, which
/// refuse the same things in the same words.
struct SAXRefusal {
    private(set) var reason: String?
    private(set) var line = 0

    /// Notes the reason (unless one was noted before) and stops the parser.
    mutating func refuse(_ parser: SAXParser, _ reason: String) {
        guard self.reason == nil else { return }
        self.reason = reason
        line = parser.lineNumber
        parser.abort()
    }

    /// A feed has no business declaring entities: internal ones are how expansion bombs work,
    /// external ones how XXE reads files or URLs.
    mutating func refuseEntity(_ parser: SAXParser, name: String, external: Bool) {
        refuse(parser, "the document declares the \(external ? "external " : "")XML entity '\(name.prefix(40))'; feeds must not declare entities (refused)")
    }

    /// "line N: reason", for the reader's error.
    var message: String? { reason.map { "line \(line): \($0)" } }
}
