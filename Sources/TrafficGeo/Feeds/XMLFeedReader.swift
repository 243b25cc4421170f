import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Streams an Atom or RSS feed through Foundation's SAX `XMLParser` (libxml2 on Linux): one entry's
/// fields in memory at a time, external entities never resolved.
struct XMLFeedReader: FeedReader {
    let format: FeedFormat

    init(format: FeedFormat) {
        precondition(format == .atom || format == .rss)
        self.format = format
    }

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let stream = try input.makeStream()
        let parser = XMLParser(stream: stream)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        try withoutActuallyEscaping(handle) { escapable in
            let delegate = EntryCollector(format: format, source: source, handle: escapable)
            parser.delegate = delegate
            let ok = parser.parse()
            delegate.handle = nil
            if let error = delegate.handlerError { throw error }
            if !ok || delegate.entriesSeen == 0 && !delegate.sawRoot {
                let reason = parser.parserError.map { XMLFeedReader.describe($0, line: parser.lineNumber, column: parser.columnNumber) }
                    ?? "no <\(format == .atom ? "feed" : "rss")> element"
                throw FeedError.malformed(input.location, format: format, reason: reason, entriesRead: delegate.entriesSeen)
            }
            // libxml2's push parser, as Foundation drives it from a stream, accepts a document that
            // simply stops: unclosed elements at the end mean a truncated feed.
            if delegate.openElements != 0 {
                throw FeedError.malformed(input.location, format: format,
                                          reason: "the document ends with \(delegate.openElements) elements still open (truncated?)",
                                          entriesRead: delegate.entriesSeen)
            }
        }
    }

    static func describe(_ error: Error, line: Int, column: Int) -> String {
        let ns = error as NSError
        let detail = (ns.userInfo[NSLocalizedDescriptionKey] as? String) ?? "XML error \(ns.code)"
        return "line \(line), column \(column): \(detail)"
    }
}

/// The SAX delegate: tracks the element path and fills `EntryFields` for each entry/item.
private final class EntryCollector: NSObject, XMLParserDelegate {
    let format: FeedFormat
    let source: String
    var handle: ((FeedEvent) throws -> Void)?
    var handlerError: Error?
    var entriesSeen = 0
    var sawRoot = false

    private var depth = 0
    var openElements: Int { depth }
    /// Depth of the open entry/item element, or nil outside one.
    private var entryDepth: Int?
    private var fields = EntryFields()
    private var entryLine = 0
    /// The entry child element being read (local name, qualified name) and its text so far.
    private var child: (name: String, qualified: String)?
    private var childDepth = 0
    private var text = ""
    private var alternateLinkFound = false

    init(format: FeedFormat, source: String, handle: @escaping (FeedEvent) throws -> Void) {
        self.format = format
        self.source = source
        self.handle = handle
    }

    private var entryElement: String { format == .atom ? "entry" : "item" }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes: [String: String] = [:]) {
        depth += 1
        if depth == 1 { sawRoot = true }
        if entryDepth == nil {
            if elementName == entryElement {
                entryDepth = depth
                entryLine = parser.lineNumber
                fields = EntryFields()
                alternateLinkFound = false
            }
            return
        }
        guard let entryDepth else { return }
        if depth == entryDepth + 1 {
            child = (elementName, qName ?? elementName)
            childDepth = depth
            text = ""
            startChild(elementName, namespaceURI: namespaceURI, attributes: attributes)
        } else if let child, child.name == "content" || child.name == "description" || child.name == "summary" {
            // xhtml inside <content type="xhtml">: keep the words, note an icon, a line break becomes a space.
            if elementName == "img", fields.iconURL == nil, let src = attributes["src"] { fields.iconURL = src }
            if elementName == "br" || elementName == "div" || elementName == "p" { text += " " }
        } else if format == .rss, elementName == "lat" || elementName == "long" {
            // <geo:Point><geo:lat>…</geo:lat></geo:Point>: nested W3C geo.
            text = ""
        }
    }

    private func startChild(_ name: String, namespaceURI: String?, attributes: [String: String]) {
        switch (format, name) {
        case (.atom, "link"):
            let rel = attributes["rel"] ?? "alternate"   // RFC 4287: no rel means alternate
            guard let href = attributes["href"] else { return }
            if rel == "alternate", !alternateLinkFound {
                fields.weblink = href
                alternateLinkFound = true
            } else if rel == "enclosure" || rel == "icon", let type = attributes["type"], type.hasPrefix("image/") {
                fields.iconURL = fields.iconURL ?? href
            }
        case (.atom, "category"), (.rss, "category"):
            if let term = attributes["term"] { fields.category = fields.category ?? term }
        case (.rss, "enclosure"):
            if let type = attributes["type"], type.hasPrefix("image/"), let url = attributes["url"] { fields.iconURL = url }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if child != nil { text += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if child != nil { text += String(decoding: CDATABlock, as: UTF8.self) }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        defer { depth -= 1 }
        guard let entryDepth else { return }
        if depth == entryDepth {
            finishEntry(parser)
            self.entryDepth = nil
            return
        }
        if format == .rss, depth > childDepth, elementName == "lat" { fields.latitude = text }
        if format == .rss, depth > childDepth, elementName == "long" { fields.longitude = text }
        guard depth == childDepth, let child else { return }
        endChild(child.name, qualified: child.qualified, namespaceURI: namespaceURI, text: text)
        self.child = nil
    }

    private func endChild(_ name: String, qualified: String, namespaceURI: String?, text: String) {
        let ns = namespaceURI ?? ""
        switch name {
        case "title": fields.title = text
        case "id" where format == .atom: fields.id = text
        case "guid": fields.id = text
        case "updated", "modified": fields.updated = text
        case "published", "pubDate", "issued", "date":
            // Only a stand-in: an explicit <updated> wins wherever it appears.
            if fields.updated == nil { fields.updated = text }
        case "expires", "expirationDate", "validTo": fields.expires = text
        case "summary": fields.summary = text
        case "description": fields.summary = format == .rss ? HTMLText.plain(text) : text
        case "content", "encoded":
            if fields.summary == nil { fields.summary = HTMLText.plain(text) }
        case "link" where format == .rss: fields.weblink = text
        case "category": if fields.category == nil, !text.isEmpty { fields.category = text }
        case "point" where ns.contains("georss") || qualified.hasPrefix("georss"): fields.point = text
        case "lat": fields.latitude = text
        case "long", "lon": fields.longitude = text
        case "road": fields.road = text
        case "icon", "image": if fields.iconURL == nil { fields.iconURL = text.nilIfBlank }
        default:
            let trimmed = text.normalizedWhitespace
            if !trimmed.isEmpty, fields.properties.count < 64 { fields.properties[qualified] = String(trimmed.prefix(4096)) }
        }
    }

    private func finishEntry(_ parser: XMLParser) {
        entriesSeen += 1
        let event: FeedEvent
        switch fields.makeIncident(source: source, index: entriesSeen) {
        case let .success(incident):
            event = .incident(incident)
        case let .failure(.invalid(reason)):
            event = .skipped(SkippedEntry(index: entriesSeen, entryID: fields.id?.normalizedWhitespace, line: entryLine, reason: reason))
        }
        do {
            try handle?(event)
        } catch {
            handlerError = error
            parser.abortParsing()
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
