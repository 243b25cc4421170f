import Foundation
import TrafficGeoSupport

/// Which feed a document is, so that the same feed read from two files, from stdin or from a URL
/// files its incidents under one source (and re-reading it updates them instead of adding copies).
///
/// The feed says it itself where the format lets it: an Atom feed's `<id>` (else its `self` link),
/// an RSS channel's `<link>`, a DATEX II publication's creator or supplier (`gb/NTIS`), the
/// Autobahn API (whose identifiers are unique across the whole API).
/// Other documents are named by where they came from: a file by its name without the directory,
/// a URL as given, standard input as `stdin`.
public enum FeedIdentity {
    /// The name of every Autobahn API document's source.
    public static let autobahnAPI = "autobahn"

    /// The source name for a document: the feed's own identity, else its location's name.
    public static func sourceName(of input: FeedInput, format: FeedFormat) -> String {
        declared(by: input, format: format) ?? sourceName(forLocation: input.location)
    }

    /// The name of a location that says nothing about itself.
    public static func sourceName(forLocation location: String) -> String {
        if location == "-" || location == "stdin" { return "stdin" }
        if location.contains("://") { return location }
        let name = URL(fileURLWithPath: location).lastPathComponent
        return name.isEmpty || name == "/" ? location : name
    }

    /// The names older versions may have filed this location's incidents under.
    public static func formerNames(forLocation location: String) -> FormerSourceNames {
        // Standard input held whatever was piped in, not necessarily this feed.
        if location == "-" || location == "stdin" { return .none }
        if location.contains("://") { return FormerSourceNames(given: [location], migrated: []) }
        // 0.1 used the absolute path; the v6 migration renamed such sources to the file name.
        return FormerSourceNames(given: [URL(fileURLWithPath: location).standardizedFileURL.path],
                                 migrated: [sourceName(forLocation: location)])
    }

    /// The identity the document declares before its first entry, if any: one that comes after
    /// entries have been read cannot change the source they were filed under.
    static func declared(by input: FeedInput, format: FeedFormat) -> String? {
        switch format {
        case .autobahn:
            return autobahnAPI
        case .atom, .rss:
            guard let head = try? input.head(headBytes) else { return nil }
            let scanner = HeaderScanner(format: format)
            let parser = SAXParser(handler: scanner)
            _ = parser.parse(InputStream(data: head))
            return scanner.identity
        case .datex2:
            // The publication's creator (else the exchange's supplier), "gb/NTIS": saving each
            // fetch to a new file updates the same situations instead of adding copies.
            guard let head = try? input.head(headBytes) else { return nil }
            let scanner = DatexPublisherScanner()
            _ = SAXParser(handler: scanner).parse(InputStream(data: head))
            return scanner.identity
        default:
            return nil
        }
    }

    /// Feed headers are short; one that does not reach its first entry in 64 KiB names nothing.
    static let headBytes = 1 << 16
    /// Longer "identities" are not ids but content (or an attack).
    static let maxLength = 2048
}

/// Names under which a store written by an older version may hold a feed's incidents.
public struct FormerSourceNames: Sendable, Equatable {
    /// Names an older version gave this location itself: their incidents are this feed's.
    public var given: [String]
    /// Names the store's migration gave such sources (a file name for an absolute path): theirs
    /// are this feed's only where the migration made the name (a source that a current version
    /// named so may be another feed of the same file name).
    public var migrated: [String]

    public init(given: [String], migrated: [String]) {
        self.given = given
        self.migrated = migrated
    }

    public static let none = FormerSourceNames(given: [], migrated: [])
}

/// Reads a feed's header up to its first entry: Atom `feed/id` and `feed/link[@rel=self]`, RSS
/// `rss/channel/link`.
private final class HeaderScanner: SAXHandler {
    enum Tag: Int { case other, id, link, entry, item }
    let format: FeedFormat
    private var depth = 0
    private var reading: Tag?
    private var text: [UInt8] = []
    private var id: String?
    private var selfLink: String?
    private var channelLink: String?

    init(format: FeedFormat) { self.format = format }

    var identity: String? {
        let found = format == .atom ? id ?? selfLink : channelLink
        return found.flatMap { $0.trimmed.nilIfEmpty }.flatMap { $0.count <= FeedIdentity.maxLength ? $0 : nil }
    }

    func tag(forElementName name: String) -> Int {
        switch name {
        case "id": Tag.id.rawValue
        case "link": Tag.link.rawValue
        case "entry": Tag.entry.rawValue
        case "item": Tag.item.rawValue
        default: Tag.other.rawValue
        }
    }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes) {
        depth += 1
        let element = Tag(rawValue: tag) ?? .other
        if element == .entry || element == .item { return parser.abort() }
        // Only the feed's own children: <feed><id> is at depth 2, <rss><channel><link> at depth 3
        // (an <image><link> or an <author> is deeper).
        let own = qualifiedName == (element == .id ? "id" : "link")   // no namespace prefix (not atom:link in RSS)
        switch (format, element) {
        case (.atom, .id) where depth == 2 && own:
            reading = .id
            text.removeAll()
        case (.atom, .link) where depth == 2:
            if attributes["rel"] == "self", selfLink == nil { selfLink = attributes["href"] }
        case (.rss, .link) where depth == 3 && own:
            reading = .link
            text.removeAll()
        default:
            break
        }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {
        depth -= 1
        guard let reading else { return }
        let value = String(decoding: text, as: UTF8.self)
        if reading == .id, id == nil { id = value }
        if reading == .link, channelLink == nil { channelLink = value }
        self.reading = nil
    }

    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard reading != nil, text.count <= FeedIdentity.maxLength else { return }
        text.append(contentsOf: bytes)
    }

    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        parser.abort()
    }
}

/// Reads a DATEX II document's head up to its first situation: `publicationCreator` (v2 and
/// v3), else the v2 exchange's `supplierIdentification`, each a `country` and a
/// `nationalIdentifier`, as "country/nationalIdentifier" ("gb/NTIS", "nl/NDWNL").
private final class DatexPublisherScanner: SAXHandler {
    enum Tag: Int { case other, creator, supplier, country, national, situation }
    private var inside: Tag?
    private var reading: Tag?
    private var text: [UInt8] = []
    private var found: [Tag: (country: String?, national: String?)] = [:]

    var identity: String? {
        for tag in [Tag.creator, .supplier] {
            guard let (country, national) = found[tag], let national = national?.trimmed.nilIfEmpty else { continue }
            let name = [country?.trimmed.nilIfEmpty, national].compactMap { $0 }.joined(separator: "/")
            return name.count <= FeedIdentity.maxLength ? name : nil
        }
        return nil
    }

    func tag(forElementName name: String) -> Int {
        switch name {
        case "publicationCreator": Tag.creator.rawValue
        case "supplierIdentification": Tag.supplier.rawValue
        case "country": Tag.country.rawValue
        case "nationalIdentifier": Tag.national.rawValue
        case "situation", "situationRecord": Tag.situation.rawValue
        default: Tag.other.rawValue
        }
    }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes) {
        switch Tag(rawValue: tag) ?? .other {
        case .situation: parser.abort()
        case .creator: inside = .creator
        case .supplier: inside = .supplier
        case .country, .national:
            guard inside != nil else { return }
            reading = Tag(rawValue: tag)
            text.removeAll()
        case .other: break
        }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {
        let element = Tag(rawValue: tag) ?? .other
        if element == .creator || element == .supplier {
            inside = nil
            if found[.creator] != nil { parser.abort() }
            return
        }
        guard let reading, reading == element, let inside else { return }
        let value = String(decoding: text, as: UTF8.self)
        var entry = found[inside] ?? (nil, nil)
        if reading == .country { entry.country = entry.country ?? value } else { entry.national = entry.national ?? value }
        found[inside] = entry
        self.reading = nil
    }

    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard reading != nil, text.count <= FeedIdentity.maxLength else { return }
        text.append(contentsOf: bytes)
    }

    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        parser.abort()
    }
}
