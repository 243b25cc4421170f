import Foundation
import TrafficGeoSupport

/// Streams an Atom or RSS feed through libxml2's SAX parser (`SAXParser`): one entry's fields in
/// memory at a time, entity declarations refused, external entities never loaded.
struct XMLFeedReader: FeedReader {
    let format: FeedFormat

    init(format: FeedFormat) {
        precondition(format == .atom || format == .rss)
        self.format = format
    }

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        try Self.checkDocument(input, format: format)
        let stream = try input.makeStream()
        try withoutActuallyEscaping(handle) { escapable in
            let delegate = EntryCollector(format: format, source: source, handle: escapable)
            let parser = SAXParser(handler: delegate)
            let ok = parser.parse(stream)
            delegate.handle = nil
            if let error = delegate.handlerError { throw error }
            if let refusal = delegate.refusal.message {
                throw FeedError.malformed(input.location, format: format, reason: refusal,
                                          entriesRead: delegate.entriesSeen)
            }
            if !ok || delegate.entriesSeen == 0 && delegate.rootName == nil {
                let reason = parser.error.map { XMLFeedReader.describe(code: $0.code, message: $0.message, line: $0.line, column: $0.column) }
                    ?? "no <\(format == .atom ? "feed" : "rss")> element"
                throw FeedError.malformed(input.location, format: format, reason: reason, entriesRead: delegate.entriesSeen)
            }
            // Another kind of document (an RSS feed read as Atom, a DATEX II one as RSS) has no
            // entries of this format: refused, so that a snapshot of it ends nothing. One that
            // has entries is read whatever its root is called.
            if delegate.entriesSeen == 0, let root = delegate.rootName, !Self.roots(of: format).contains(Self.localName(root)) {
                throw FeedError.malformed(input.location, format: format,
                                          reason: "the document's root is <\(root.prefix(60))>, not <\(Self.roots(of: format)[0])>", entriesRead: 0)
            }
            // A document that simply stops: unclosed elements at the end mean a truncated feed.
            if delegate.openElements != 0 {
                throw FeedError.malformed(input.location, format: format,
                                          reason: "the document ends with \(delegate.openElements) elements still open (truncated?)",
                                          entriesRead: delegate.entriesSeen)
            }
        }
    }

    /// The root elements of a feed of `format` (local names): Atom's `feed`; RSS 2.0's `rss`,
    /// RSS 1.0's `rdf:RDF`, and a bare `channel` some servers send.
    static func roots(of format: FeedFormat) -> [String] {
        format == .atom ? ["feed"] : ["rss", "RDF", "channel"]
    }

    static func localName(_ qualified: String) -> String {
        qualified.split(separator: ":").last.map(String.init) ?? qualified
    }

    /// Refuses, before parsing, what no feed has any business with: entity declarations (in the
    /// DOCTYPE at the top; later ones stop the parse), an encoding trafficgeo does not read, and
    /// bytes that are not the declared UTF-8 (`wholeUTF8Check`: a pass over the whole file before
    /// parsing, so that a feed with bad bytes is refused before anything of it is stored).
    static func checkDocument(_ input: FeedInput, format: FeedFormat, wholeUTF8Check: Bool = true) throws {
        // Entity declarations sit in the DOCTYPE at the top: refuse them before parsing, with a
        // clear message (EntryCollector.entityDeclaration stops any later one).
        let head = try input.head(16384)
        if head.range(of: Data("<!ENTITY".utf8)) != nil {
            throw FeedError.malformed(input.location, format: format,
                                      reason: "the document declares XML entities; feeds must not (refused: entity expansion and external entities)",
                                      entriesRead: 0)
        }
        let encoding = UTF8Validation.declaredXMLEncoding(head: head) ?? "utf-8"
        guard UTF8Validation.convertedEncodings.contains(encoding) || UTF8Validation.utf8Encodings.contains(encoding) else {
            throw FeedError.malformed(input.location, format: format,
                                      reason: "the document declares the encoding '\(encoding.prefix(40))', which trafficgeo does not read "
                                          + "(UTF-8, UTF-16, ISO-8859-1, ISO-8859-15 and Windows-1252 it does)",
                                      entriesRead: 0)
        }
        if wholeUTF8Check, UTF8Validation.utf8Encodings.contains(encoding),
           let problem = try UTF8Validation.firstProblem(in: input.makeStream) {
            throw FeedError.malformed(input.location, format: format,
                                      reason: "line \(problem.line) (byte \(problem.offset)): bytes that are not valid UTF-8, the document's encoding; "
                                          + "if it is Latin-1 or Windows-1252, its <?xml?> declaration must say so",
                                      entriesRead: 0)
        }
    }

    static func describe(code: Int, message: String, line: Int, column: Int) -> String {
        // libxml2's own words, with a plainer explanation for the errors broken and hostile feeds cause.
        let detail = libxml2Errors[code].map { "\($0) (libxml2: \(message))" } ?? message
        return "line \(line), column \(column): \(detail)"
    }

    /// libxml2's xmlParserErrors numbers (libxml/xmlerror.h) that broken and hostile feeds meet.
    static let libxml2Errors: [Int: String] = [
        2: "out of memory",
        4: "the document is empty",
        5: "extra content after the end of the document",
        8: "an invalid character reference",
        9: "a byte sequence that is not valid in the document's encoding (is it declared right? UTF-8 is the default)",
        23: "an entity reference without its ';'",
        26: "an undeclared entity (external entities are never loaded)",
        27: "an undeclared entity (external entities are never loaded)",
        31: "an unknown encoding",
        32: "an unsupported encoding",
        38: "'<' inside an attribute value",
        39: "an attribute value without quotes",
        64: "a reserved name (xml...) used",
        68: "a name is missing",
        73: "'>' is missing",
        76: "an end tag that does not match its start tag",
        77: "the document ends inside an element (truncated?)",
        79: "a malformed encoding name",
        81: "bytes that are not valid in the declared encoding",
        88: "a parameter entity used inside the DTD",
        89: "entity references that loop or expand too much (entity expansion refused)",
    ]
}

/// The SAX delegate: tracks the element path and fills `EntryFields` for each entry/item.
private final class EntryCollector: SAXHandler {
    let format: FeedFormat
    let source: String
    var handle: ((FeedEvent) throws -> Void)?
    var handlerError: Error?
    var entriesSeen = 0
    /// The document's root element (qualified name), once it started.
    var rootName: String?

    @exclusivity(unchecked) private var depth = 0
    var openElements: Int { depth }
    /// Why reading stopped on purpose (hostile or absurd input), if it did.
    var refusal = SAXRefusal()
    /// Feeds nest a few levels deep; thousands of levels only serve to exhaust the reader.
    static let maxDepth = 64
    /// One entry's text; a bigger title or summary is an attack or a broken server, not news.
    static let maxEntryTextBytes = 1 << 20
    // The state below changes on every SAX callback, always on the parsing thread and never
    // while another access is open (the collector calls nothing that calls back into it): the
    // runtime's exclusivity checks on it were 3 % of reading a feed, so they are left out.
    /// Depth of the open entry/item element, or nil outside one.
    @exclusivity(unchecked) private var entryDepth: Int?
    @exclusivity(unchecked) private var fields = EntryFields()
    private var entryLine = 0
    /// The entry child element being read (which one, qualified name) and its text so far.
    @exclusivity(unchecked) private var child: (element: Element, qualified: String)?
    @exclusivity(unchecked) private var childDepth = 0
    /// The child's text so far, as UTF-8 bytes (one string is made when the child ends).
    @exclusivity(unchecked) private var textBytes: [UInt8] = []
    private var text: String { String(decoding: textBytes, as: UTF8.self) }
    private var alternateLinkFound = false

    init(format: FeedFormat, source: String, handle: @escaping (FeedEvent) throws -> Void) {
        self.format = format
        self.source = source
        self.handle = handle
    }

    /// The element names the reader acts on; every other name is `other`.
    enum Element: Int, CaseIterable {
        case other
        case entry, item, title, id, guid, updated, modified, published, pubDate, issued, date
        case expires, expirationDate, validTo, summary, description, content, encoded, link, category
        case point, lat, long, lon, road, icon, image, enclosure, img, br, div, p

        static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ("\($0)", $0) })
    }

    func tag(forElementName name: String) -> Int {
        (Element.byName[name] ?? .other).rawValue
    }

    private var entryElement: Element { format == .atom ? .entry : .item }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName qName: String, attributes: SAXAttributes) {
        let element = Element(rawValue: tag) ?? .other
        depth += 1
        if depth == 1 { rootName = qName }
        if depth > Self.maxDepth { return refusal.refuse(parser, "elements nested more than \(Self.maxDepth) deep") }
        if entryDepth == nil {
            if element == entryElement {
                entryDepth = depth
                entryLine = parser.lineNumber
                fields = EntryFields()
                alternateLinkFound = false
            }
            return
        }
        guard let entryDepth else { return }
        if depth == entryDepth + 1 {
            child = (element, qName)
            childDepth = depth
            textBytes.removeAll(keepingCapacity: true)
            startChild(element, attributes: attributes)
        } else if let child, child.element == .content || child.element == .description || child.element == .summary {
            // xhtml inside <content type="xhtml">: keep the words, note an icon, a line break becomes a space.
            if element == .img, fields.iconURL == nil, let src = attributes["src"] { fields.iconURL = src }
            if element == .br || element == .div || element == .p { textBytes.append(0x20) }
        } else if format == .rss, element == .lat || element == .long {
            // <geo:Point><geo:lat>…</geo:lat></geo:Point>: nested W3C geo.
            textBytes.removeAll(keepingCapacity: true)
        }
    }

    private func startChild(_ element: Element, attributes: SAXAttributes) {
        switch (format, element) {
        case (.atom, .link):
            let rel = attributes["rel"] ?? "alternate"   // RFC 4287: no rel means alternate
            guard let href = attributes["href"] else { return }
            if rel == "alternate", !alternateLinkFound {
                fields.weblink = href
                alternateLinkFound = true
            } else if rel == "enclosure" || rel == "icon", let type = attributes["type"], type.hasPrefix("image/") {
                fields.iconURL = fields.iconURL ?? href
            }
        case (.atom, .category), (.rss, .category):
            if let term = attributes["term"] { fields.category = fields.category ?? term }
        case (.rss, .enclosure):
            if let type = attributes["type"], type.hasPrefix("image/"), let url = attributes["url"] { fields.iconURL = url }
        default:
            break
        }
    }

    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard child != nil else { return }
        textBytes.append(contentsOf: bytes)
        if textBytes.count > Self.maxEntryTextBytes { refusal.refuse(parser, "an element holds more than \(Self.maxEntryTextBytes >> 20) MiB of text") }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {
        defer { depth -= 1 }
        guard let entryDepth else { return }
        if depth == entryDepth {
            finishEntry(parser)
            self.entryDepth = nil
            return
        }
        if format == .rss, depth > childDepth, tag == Element.lat.rawValue { fields.latitude = text }
        if format == .rss, depth > childDepth, tag == Element.long.rawValue { fields.longitude = text }
        guard depth == childDepth, let child else { return }
        endChild(child.element, qualified: child.qualified, namespaceURI: namespaceURI, text: text)
        self.child = nil
    }

    private func endChild(_ element: Element, qualified: String, namespaceURI: SAXName?, text: String) {
        switch element {
        case .title: fields.title = text
        case .id where format == .atom: fields.id = text
        case .guid: fields.id = text
        case .updated, .modified: fields.updated = text
        case .published, .pubDate, .issued, .date:
            // Only a stand-in: an explicit <updated> wins wherever it appears.
            if fields.updated == nil { fields.updated = text }
        case .expires, .expirationDate, .validTo: fields.expires = text
        case .summary: fields.summary = text
        case .description: fields.summary = format == .rss ? HTMLText.plain(text) : text
        case .content, .encoded:
            if fields.summary == nil { fields.summary = HTMLText.plain(text) }
        case .link where format == .rss: fields.weblink = text
        case .category: if fields.category == nil, !text.isEmpty { fields.category = text }
        case .point where namespaceURI?.string.contains("georss") == true || qualified.hasPrefix("georss"): fields.point = text
        case .lat: fields.latitude = text
        case .long, .lon: fields.longitude = text
        case .road: fields.road = text
        case .icon, .image: if fields.iconURL == nil { fields.iconURL = text.nilIfBlank }
        default:
            let trimmed = text.normalizedWhitespace
            if !trimmed.isEmpty, fields.properties.count < 64 { fields.properties[qualified] = String(trimmed.prefix(4096)) }
        }
    }

    // A feed has no business declaring entities. Internal ones are how "billion laughs" expansion
    // bombs work, external ones how XXE reads local files or URLs: refuse the document at the
    // declaration, before anything is expanded. (`read` refuses declarations in the first 16 KiB
    // before parsing; this catches later ones. libxml2 never loads external entities here, and
    // stops expansion loops and amplification itself.)
    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        refusal.refuseEntity(parser, name: name, external: external)
    }

    private func finishEntry(_ parser: SAXParser) {
        entriesSeen += 1
        // The entry's fields are taken out rather than copied (a copy retained each of its strings).
        var fields = EntryFields()
        swap(&fields, &self.fields)
        let event: FeedEvent
        do {
            event = .incident(try fields.makeIncident(source: source, index: entriesSeen))
        } catch {
            event = .skipped(SkippedEntry(index: entriesSeen, entryID: fields.id?.normalizedWhitespace, line: entryLine, reason: error.reason))
        }
        do {
            try handle?(event)
        } catch {
            handlerError = error
            parser.abort()
        }
    }
}

/// Plain text from a fragment of HTML (RSS descriptions often carry escaped markup).
enum HTMLText {
    static func plain(_ html: String) -> String {
        guard html.contains("<") || html.contains("&") else { return html }
        var out = ""
        var inTag = false
        for ch in html {
            if ch == "<" { inTag = true; out.append(" "); continue }
            if ch == ">" && inTag { inTag = false; continue }
            if !inTag { out.append(ch) }
        }
        return out
            .replacingOccurrences(of: "&nbsp;", with: " ")
            .replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
