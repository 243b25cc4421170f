import Foundation
import TrafficGeoSupport

/// The elements of one record of a standard's document (a DATEX II situation, an Open511
/// event), by local name, built from XML (`RecordTreeCollector`, streaming: one record at a time)
/// or from JSON (`add(json:)`), so that one interpreter reads both encodings of a standard.
///
/// Nodes sit in document order in flat arrays; a node's subtree is the run of nodes up to its
/// `end`, so "the descendants named x" is a scan of a range, not a walk of pointers. Names are
/// numbers from a `RecordNames` table shared by the reader: the interpreters compare numbers.
final class RecordTree {
    struct Node {
        var name: Int32
        var parent: Int32
        /// One past the last node of its subtree.
        var end: Int32
        var textStart: Int32 = 0
        var textEnd: Int32 = 0
        /// The local part of its `xsi:type` (a name number), or -1.
        var type: Int32 = -1
    }

    let names: RecordNames
    // Changed on every SAX callback on the parsing thread, never while another access is open:
    // the runtime's exclusivity checks on them were a tenth of reading a DATEX II feed.
    @exclusivity(unchecked) private(set) var nodes: [Node] = []
    @exclusivity(unchecked) private var text: [UInt8] = []
    /// The few attributes the interpreters read (id, version, lang, srsName, index), in
    /// document order of their nodes: few nodes have any, so a list beats a table.
    @exclusivity(unchecked) private var attributes: [(node: Int32, key: String, value: String)] = []
    @exclusivity(unchecked) private var open: [Int32] = []

    init(names: RecordNames) {
        self.names = names
        nodes.reserveCapacity(256)
        text.reserveCapacity(4096)
    }

    var isEmpty: Bool { nodes.isEmpty }
    var count: Int { nodes.count }
    var textBytes: Int { text.count }

    func reset() {
        indexed = false
        nodes.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
        attributes.removeAll(keepingCapacity: true)
        open.removeAll(keepingCapacity: true)
    }

    // MARK: Building

    @discardableResult
    func start(_ name: Int32, type: Int32 = -1) -> Int32 {
        indexed = false
        let index = Int32(nodes.count)
        nodes.append(Node(name: name, parent: open.last ?? -1, end: index + 1, textStart: Int32(text.count), textEnd: Int32(text.count), type: type))
        open.append(index)
        return index
    }

    func setAttribute(_ node: Int32, _ key: String, _ value: String) {
        attributes.append((node, key, value))
    }

    func setType(_ node: Int32, _ type: Int32) { nodes[Int(node)].type = type }

    /// Text of the innermost open element; text around child elements (indentation) is kept only
    /// while it runs on from the element's own text.
    func appendText(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let current = open.last else { return }
        let i = Int(current)
        guard nodes[i].textEnd == Int32(text.count), nodes.count == i + 1 else { return }
        text.append(contentsOf: bytes)
        nodes[i].textEnd = Int32(text.count)
    }

    func end() {
        guard let current = open.popLast() else { return }
        nodes[Int(current)].end = Int32(nodes.count)
    }

    var depth: Int { open.count }

    /// Adds a decoded JSON value as element `name` (and its members as children): an object's
    /// members are elements (an array, the element repeated), `{"value": x}` is the text x,
    /// members ending in `G` (`idG`, `versionG`, `langG`) are attributes, and an object whose one
    /// member is named by a type (`"sitAccident": {…}`, `"situationAccident": {…}`) is that
    /// type's instance, as `xsi:type` says it in XML.
    func add(json value: Any, name: String) {
        switch value {
        case let array as [Any]:
            for item in array { add(json: item, name: name) }
        case let object as [String: Any]:
            if let (typeName, inner) = Self.typeSubstitution(object) {
                let node = start(names.number(name), type: names.number(typeName))
                addMembers(inner, to: node)
                end()
                return
            }
            let node = start(names.number(name))
            addMembers(object, to: node)
            end()
        case is NSNull:
            return
        default:
            start(names.number(name))
            if var s = LooseJSON.string(value) {
                s.withUTF8 { appendText($0) }
            }
            end()
        }
    }

    private func addMembers(_ object: [String: Any], to node: Int32) {
        for key in object.keys.sorted() {
            let member = object[key]!
            if key == "value", !(member is [String: Any]) && !(member is [Any]) {
                if var s = LooseJSON.string(member) { s.withUTF8 { appendText($0) } }
            } else if key.count > 1, key.hasSuffix("G"), let s = LooseJSON.string(member), !(member is [Any]) {
                setAttribute(node, String(key.dropLast()), s)
            } else if key == "lang" || key == "srsName" || key == "id" || key == "version", let s = LooseJSON.string(member), !(member is [Any]) {
                setAttribute(node, key, s)
            } else if key == "xsi:type" || key == "xsiType" || key == "@type", let s = LooseJSON.string(member) {
                setType(node, names.number(RecordNames.localPart(s)))
            } else {
                add(json: member, name: key)
            }
        }
    }

    /// `{"sitAccident": {…}}` → ("Accident", {…}): one member, an object, named by a lower-case
    /// prefix and a capitalised type name.
    private static func typeSubstitution(_ object: [String: Any]) -> (String, [String: Any])? {
        guard object.count == 1, let (key, value) = object.first, let inner = value as? [String: Any] else { return nil }
        let scalars = Array(key.unicodeScalars)
        guard let upper = scalars.firstIndex(where: { CharacterSet.uppercaseLetters.contains($0) }), upper > 0, upper < scalars.count - 1,
              typePrefixes.contains(String(String.UnicodeScalarView(scalars[..<upper]))) else { return nil }
        return (String(String.UnicodeScalarView(scalars[upper...])), inner)
    }

    /// The namespace prefixes (short and long) that JSON encodings put before a type's name:
    /// only these make a one-member object a type's instance (`pointByCoordinates: {pointCoordinates: …}`
    /// is an element and its child, not the type "Coordinates").
    static let typePrefixes: Set<String> = [
        "sit", "loc", "com", "comx", "locx", "sitx", "ex", "mc", "d2", "fst", "prk", "fac", "roa", "vms", "tmp", "tro", "egi", "cis",
        "situation", "location", "locationReferencing", "common", "commonExtension", "locationExtension", "situationExtension",
    ]

    // MARK: Reading

    func name(_ node: Int32) -> Int32 { nodes[Int(node)].name }
    func nameText(_ node: Int32) -> String { names.string(nodes[Int(node)].name) }
    func type(_ node: Int32) -> Int32 { nodes[Int(node)].type }
    func typeText(_ node: Int32) -> String? { nodes[Int(node)].type < 0 ? nil : names.string(nodes[Int(node)].type) }
    func parent(_ node: Int32) -> Int32 { nodes[Int(node)].parent }
    func attribute(_ node: Int32, _ key: String) -> String? {
        attributes.last { $0.node == node && $0.key == key }?.value
    }

    /// The element's own text, whitespace trimmed; nil when empty.
    func text(_ node: Int32) -> String? {
        let n = nodes[Int(node)]
        var start = Int(n.textStart), end = Int(n.textEnd)
        // ASCII white space trimmed on the bytes (one string made, not two); any other is
        // trimmed as text (rare: a no-break space around a value).
        while start < end, Self.isSpace(text[start]) { start += 1 }
        while end > start, Self.isSpace(text[end - 1]) { end -= 1 }
        guard end > start else { return nil }
        let string = String(decoding: text[start..<end], as: UTF8.self)
        return text[start] < 0x80 && text[end - 1] < 0x80 ? string : string.trimmed.nilIfEmpty
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// The nodes under `node` (not itself), in document order.
    func descendants(of node: Int32) -> Range<Int32> { (node + 1)..<nodes[Int(node)].end }

    // MARK: Finding by name

    // The nodes of each name in document order (built on the first question, once per tree): an
    // interpreter asks for some forty names a record, most of them absent, and scanning the
    // subtree for each was a third of reading a DATEX II feed. `postings[offsets[k] ..< offsets[k+1]]`
    // are the nodes named k.
    @exclusivity(unchecked) private var postings: [Int32] = []
    @exclusivity(unchecked) private var offsets: [Int32] = []
    @exclusivity(unchecked) private var indexed = false

    private func buildIndex() {
        let nameCount = names.count
        offsets.removeAll(keepingCapacity: true)
        offsets.append(contentsOf: repeatElement(0, count: nameCount + 1))
        for n in nodes { offsets[Int(n.name) + 1] += 1 }
        for k in 0..<nameCount { offsets[k + 1] += offsets[k] }
        postings.removeAll(keepingCapacity: true)
        postings.append(contentsOf: repeatElement(0, count: nodes.count))
        var next = offsets
        for (i, n) in nodes.enumerated() {
            postings[Int(next[Int(n.name)])] = Int32(i)
            next[Int(n.name)] += 1
        }
        indexed = true
    }

    /// The postings of `name` that lie inside `node`'s subtree (descendants only).
    private func postingRange(_ name: Int32, in node: Int32) -> Range<Int> {
        if !indexed { buildIndex() }
        guard name >= 0, Int(name) + 1 < offsets.count else { return 0..<0 }
        var low = Int(offsets[Int(name)]), high = Int(offsets[Int(name) + 1])
        let upper = high
        // The first posting after `node`.
        while low < high {
            let mid = (low + high) / 2
            if postings[mid] <= node { low = mid + 1 } else { high = mid }
        }
        let end = nodes[Int(node)].end
        var stop = low
        while stop < upper, postings[stop] < end { stop += 1 }
        return low..<stop
    }

    /// Every descendant named `name`.
    func all(_ name: Int32, in node: Int32) -> [Int32] {
        Array(postings[postingRange(name, in: node)])
    }

    func first(_ name: Int32, in node: Int32) -> Int32? {
        let range = postingRange(name, in: node)
        return range.isEmpty ? nil : postings[range.lowerBound]
    }

    /// The text of the first descendant named `name` that has text.
    func firstText(_ name: Int32, in node: Int32) -> String? {
        for k in postingRange(name, in: node) {
            if let t = text(postings[k]) { return t }
        }
        return nil
    }

    /// The direct children of `node`.
    func children(of node: Int32) -> [Int32] {
        var out: [Int32] = []
        var i = node + 1
        let end = nodes[Int(node)].end
        while i < end {
            out.append(i)
            i = nodes[Int(i)].end
        }
        return out
    }

    /// Whether `node` lies under an element named `name` (at most `within` levels up, stopping at `stop`).
    func hasAncestor(_ node: Int32, named name: Int32, stop: Int32 = -1) -> Bool {
        var p = nodes[Int(node)].parent
        while p >= 0, p != stop {
            if nodes[Int(p)].name == name { return true }
            p = nodes[Int(p)].parent
        }
        return false
    }

    /// The nearest attribute `key` on `node` or an ancestor (srsName on a gml:LineString, say).
    func inheritedAttribute(_ node: Int32, _ key: String) -> String? {
        var p = node
        while p >= 0 {
            if let v = attribute(p, key) { return v }
            p = nodes[Int(p)].parent
        }
        return nil
    }
}

/// Element names as numbers, shared by the trees of one reader. `number` adds a name it has not
/// seen; names a reader knows in advance get their numbers first (`RecordNames(known:)`).
final class RecordNames {
    private var numbers: [String: Int32] = [:]
    private var strings: [String] = []
    var count: Int { strings.count }

    init(known: [String]) {
        for name in known { _ = number(name) }
    }

    func number(_ name: String) -> Int32 {
        if let n = numbers[name] { return n }
        let n = Int32(strings.count)
        strings.append(name)
        numbers[name] = n
        return n
    }

    /// The number of a name if it was ever seen (no new entry).
    func existing(_ name: String) -> Int32? { numbers[name] }

    func string(_ number: Int32) -> String { number >= 0 && Int(number) < strings.count ? strings[Int(number)] : "" }

    /// "sit:Accident" → "Accident".
    static func localPart(_ qualified: String) -> String {
        // By bytes: a colon is ASCII, and walking Characters was 3 % of reading a DATEX II feed.
        let utf8 = qualified.utf8
        guard let colon = utf8.lastIndex(of: UInt8(ascii: ":")) else { return qualified }
        return String(qualified[utf8.index(after: colon)...])
    }
}

/// Collects the subtrees of the elements named one of `recordNames` from a streaming XML parse, handing
/// each finished one to `finished`, so memory holds one record (plus what `header` keeps).
final class RecordTreeCollector: SAXHandler {
    let tree: RecordTree
    let recordNames: Set<Int32>
    /// Text of elements outside records whose local name is in `headerNames` (publication time, language).
    var header: [String: String] = [:]
    private let headerNames: Set<Int32>
    var finished: (RecordTree, _ line: Int) -> Bool
    @exclusivity(unchecked) private(set) var depth = 0
    @exclusivity(unchecked) private var recordDepth: Int?
    private var recordLine = 0
    @exclusivity(unchecked) private var headerText: (name: Int32, bytes: [UInt8])?
    /// The root element's local name.
    private(set) var rootName: String?
    /// Records finished (those too large to read among them).
    private(set) var recordsSeen = 0
    var refusal = SAXRefusal()
    static let maxDepth = 128
    /// A record bigger than this is broken or hostile, not a traffic message.
    static let maxRecordNodes = 200_000
    static let maxRecordTextBytes = 16 << 20
    @exclusivity(unchecked) private var skippingRecord = false
    private(set) var oversizedRecords = 0

    static let keptAttributes = ["id", "version", "lang", "srsName", "index", "srsDimension"]

    init(names: RecordNames, recordNames: [String], headerNames: [String] = [], finished: @escaping (RecordTree, Int) -> Bool) {
        tree = RecordTree(names: names)
        self.recordNames = Set(recordNames.map { names.number($0) })
        self.headerNames = Set(headerNames.map { names.number($0) })
        self.finished = finished
    }

    func tag(forElementName name: String) -> Int { Int(tree.names.number(name)) }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes) {
        depth += 1
        if depth == 1 { rootName = tree.names.string(Int32(tag)) }
        if depth > Self.maxDepth { return refusal.refuse(parser, "elements nested more than \(Self.maxDepth) deep") }
        let name = Int32(tag)
        if recordDepth == nil {
            if recordNames.contains(name) {
                recordDepth = depth
                recordLine = parser.lineNumber
                tree.reset()
                skippingRecord = false
            } else {
                if headerNames.contains(name), header[tree.names.string(name)] == nil { headerText = (name, []) }
                if let lang = attributes["lang"], header["lang"] == nil { header["lang"] = lang }
                // The publication's kind (DATEX II: payloadPublication's xsi:type).
                if header["type"] == nil, let type = attributes["type"] { header["type"] = type }
                return
            }
        }
        guard !skippingRecord else { return }
        if tree.count >= Self.maxRecordNodes || tree.textBytes >= Self.maxRecordTextBytes {
            skippingRecord = true
            return
        }
        guard attributes.count > 0 else {
            tree.start(name)
            return
        }
        let type = attributes["type"].map { tree.names.number(RecordNames.localPart($0)) } ?? -1
        let node = tree.start(name, type: type)
        for key in Self.keptAttributes {
            if let value = attributes[key] { tree.setAttribute(node, key, value) }
        }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {
        defer { depth -= 1 }
        if let h = headerText, h.name == Int32(tag), recordDepth == nil {
            header[tree.names.string(h.name)] = String(decoding: h.bytes, as: UTF8.self).trimmed
            headerText = nil
        }
        guard let recordDepth else { return }
        if !skippingRecord { tree.end() }
        if depth == recordDepth {
            self.recordDepth = nil
            recordsSeen += 1
            if skippingRecord {
                oversizedRecords += 1
                skippingRecord = false
                return
            }
            if !finished(tree, recordLine) { parser.abort() }
        }
    }

    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {
        if recordDepth != nil {
            if !skippingRecord { tree.appendText(bytes) }
        } else if headerText != nil, headerText!.bytes.count < 4096 {
            headerText!.bytes.append(contentsOf: bytes)
        }
    }

    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        refusal.refuseEntity(parser, name: name, external: external)
    }
}
