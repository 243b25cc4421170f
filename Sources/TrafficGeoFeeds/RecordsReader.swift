import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Reads a document of repeated records in a publisher's own schema, XML or JSON, that no
/// standard's reader claims (a state DOT's `<ERS_Events><Events><Event>`, a traffic service's
/// `<evts><evt r='A1' x=… y=…>`, a WFS answer turned into JSON by xml2js): the records are found
/// by the document's shape, each is flattened into columns, and the columns are recognised as a
/// CSV file's are (`CSVColumns`: named by the user with a field mapping, else by their names'
/// words and their contents, and said), so that the same rules make the same incident of a row
/// and of a record (`TabularIncidents`).
///
/// **The records** are the elements (or JSON objects) at one path of the document, in every
/// place it occurs, that carry the most fields together: a path's score is its number of
/// elements times the distinct fields under one of them (at most 50), so that a list's items
/// beat the list (one element with all fields) and a record beats its parts (many elements with
/// a field or two). Fields are the texts and attributes under a record, named by their path
/// below it (`Location.Latitude`, `r`); the record's own text is `text`. A GML geometry inside a
/// record (Point, LineString, Polygon, … with `pos`, `posList` or `coordinates`, in the CRS its
/// `srsName` names) places it by the rule every format follows (GeoJSONGeometry).
struct RecordsReader: FeedReader {
    /// The CRS of x/y fields (`--crs`); nil: latitude/longitude.
    var crs: String?
    /// Fields the user named (a field mapping: `title=Headline`).
    var fields: [CSVColumns.Role: String] = [:]
    /// Told which path the records were found at and what was recognised.
    var note: ((FeedNote) -> Void)?

    /// A document of no standard is held whole to find its records: past this many elements it
    /// is refused rather than read into memory.
    static let maxNodes = 4_000_000
    /// A record's fields at most (an absurd record is not a traffic message).
    static let maxColumns = 400

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let tree = try DocumentTree.read(input)
        guard let records = tree.records() else {
            throw FeedError.unknownFormat(input.location, seen: FeedFormat.describeContent(try input.head()) + ", with no repeated records of several fields")
        }
        // Every record flattened: its fields by path, and its geometry.
        var header: [String] = [], columnOf: [String: Int] = [:]
        var rows: [(cells: [String: String], geometry: Result<[String: Any], PlacementProblem>?)] = []
        rows.reserveCapacity(records.members.count)
        for member in records.members {
            var cells: [String: String] = [:]
            var geometry: Result<[String: Any], PlacementProblem>?
            tree.flatten(member, into: &cells, geometry: &geometry)
            for name in cells.keys.sorted(by: { tree.order[$0, default: .max] < tree.order[$1, default: .max] }) where columnOf[name] == nil && header.count < Self.maxColumns {
                columnOf[name] = header.count
                header.append(name)
            }
            rows.append((cells, geometry))
        }
        func row(_ cells: [String: String]) -> [String] {
            var out = [String](repeating: "", count: header.count)
            for (name, value) in cells { if let i = columnOf[name] { out[i] = TabularIncidents.missingWords.contains(value) ? "" : value } }
            return out
        }
        let table = rows.map { row($0.cells) }
        let sample = Array(table.prefix(TabularIncidents.sampleRows))
        let coordinates: FeedCoordinates?
        do {
            coordinates = try FeedCoordinates.make(crs)
        } catch {
            throw FeedError.malformed(input.location, format: .records, reason: "\(error)", entriesRead: 0)
        }
        let hasGeometry = rows.contains { $0.geometry != nil }
        let chosen = try TabularIncidents.chooseColumns(header: header, sample: sample, fields: fields, coordinates: coordinates,
                                                         hasGeometry: hasGeometry, location: input.location, format: .records)
        let said = chosen.describe(header: header)
        note?(FeedNote("records: \(records.members.count) <\(records.path)>" + (said.isEmpty ? "" : "; columns recognised: \(said)")))
        if let hint = chosen.hint { note?(FeedNote(hint, setting: .coordinateSystem)) }
        let tabular = TabularIncidents(header: header, chosen: chosen, coordinates: coordinates, sample: sample)
        for (index, cells) in table.enumerated() {
            let placement = rows[index].geometry.map { $0.flatMap { GeoJSONGeometry.placement($0) } }
            try handle(tabular.event(row: cells, index: index + 1, line: nil, source: source, placement: placement))
        }
    }
}

/// A whole document as a tree of named nodes (XML elements; JSON members, an array's items
/// repeating their member's name), with the texts and attributes it holds.
final class DocumentTree {
    struct Node {
        var name: String
        var parent: Int
        var children: [Int] = []
        var attributes: [(name: String, value: String)] = []
        var text = ""
    }

    private(set) var nodes: [Node] = []
    /// Each field name's first position in the document, so that columns keep the document's order.
    private(set) var order: [String: Int] = [:]

    /// A name without its namespace prefix (`alert:Title` is `Title`).
    static func localName(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }

    @discardableResult
    func add(_ name: String, parent: Int) throws -> Int {
        guard nodes.count < RecordsReader.maxNodes else { throw DocumentTooLarge() }
        nodes.append(Node(name: name, parent: parent))
        let index = nodes.count - 1
        if parent >= 0 { nodes[parent].children.append(index) }
        return index
    }

    func appendText(_ text: String, to node: Int) {
        if nodes[node].text.utf8.count < 65_536 { nodes[node].text += text }
    }

    func addAttribute(_ name: String, _ value: String, to node: Int) {
        nodes[node].attributes.append((name, value))
    }

    struct DocumentTooLarge: Error {}

    // MARK: - Reading

    static func read(_ input: FeedInput) throws -> DocumentTree {
        let family = FeedFormat.contentFamily(try input.head())
        do {
            return family == "XML" ? try readXML(input) : try readJSON(input)
        } catch is DocumentTooLarge {
            throw FeedError.malformed(input.location, format: .records,
                                      reason: "over \(RecordsReader.maxNodes) elements: too large for a document of no standard, which is read whole to find its records",
                                      entriesRead: 0)
        }
    }

    private static func readXML(_ input: FeedInput) throws -> DocumentTree {
        try XMLFeedReader.checkDocument(input, format: .records, wholeUTF8Check: false)
        let builder = XMLTreeBuilder()
        let parser = SAXParser(handler: builder)
        let ok = parser.parse(try input.makeStream())
        if builder.tooLarge { throw DocumentTooLarge() }
        if let refusal = builder.refusal.message { throw FeedError.malformed(input.location, format: .records, reason: refusal, entriesRead: 0) }
        if !ok {
            let reason = parser.error.map { XMLFeedReader.describe(code: $0.code, message: $0.message, line: $0.line, column: $0.column) } ?? "not an XML document"
            throw FeedError.malformed(input.location, format: .records, reason: reason, entriesRead: 0)
        }
        return builder.tree
    }

    private static func readJSON(_ input: FeedInput) throws -> DocumentTree {
        let data = try Data(contentsOf: input.fileURL)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw FeedError.malformed(input.location, format: .records, reason: "not valid JSON: \(error.localizedDescription)", entriesRead: 0)
        }
        let tree = DocumentTree()
        try tree.addJSON(object, name: "document", parent: -1, depth: 0)
        return tree
    }

    /// A JSON value as nodes: an object's members are children (xml2js's `$` holds attributes,
    /// `_` the text), an array's items are siblings of its name, a scalar is text.
    private func addJSON(_ value: Any, name: String, parent: Int, depth: Int) throws {
        guard depth < 128 else { return }
        if let array = value as? [Any] {
            for item in array { try addJSON(item, name: name, parent: parent, depth: depth + 1) }
            return
        }
        let node = try add(Self.localName(name), parent: parent)
        switch value {
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                let member = object[key]!
                if key == "$", let attributes = member as? [String: Any] {
                    for (a, v) in attributes.sorted(by: { $0.key < $1.key }) { if let text = Self.scalarText(v) { addAttribute(Self.localName(a), text, to: node) } }
                } else if key == "_", let text = Self.scalarText(member) {
                    appendText(text, to: node)
                } else {
                    try addJSON(member, name: key, parent: node, depth: depth + 1)
                }
            }
        default:
            if let text = Self.scalarText(value) { appendText(text, to: node) }
        }
    }

    private static func scalarText(_ value: Any) -> String? {
        value is [Any] ? nil : LooseJSON.string(value)
    }

    // MARK: - Records

    /// The elements that are the document's records, at the path they share ("Events/Event").
    func records() -> (path: String, members: [Int])? {
        guard nodes.count > 1 else { return nil }
        var paths = [String](repeating: "", count: nodes.count)
        var groups: [String: [Int]] = [:]
        for i in nodes.indices {
            let parent = nodes[i].parent
            paths[i] = parent < 0 ? nodes[i].name : paths[parent] + "/" + nodes[i].name
            if parent >= 0 { groups[paths[i], default: []].append(i) }   // the root is no record
        }
        var best: (score: Int, depth: Int, path: String, members: [Int])?
        for (path, members) in groups {
            // Distinct fields under a member, from the first few members.
            var names: Set<String> = []
            for member in members.prefix(20) { fieldNames(member, prefix: "", into: &names) }
            guard names.count >= 2 else { continue }
            let score = members.count * min(names.count, 50)
            let depth = path.split(separator: "/").count
            if best == nil || score > best!.score || (score == best!.score && depth > best!.depth) {
                best = (score, depth, path, members)
            }
        }
        guard let best else { return nil }
        return (best.path.split(separator: "/").dropFirst().joined(separator: "/"), best.members)
    }

    private func fieldNames(_ node: Int, prefix: String, into names: inout Set<String>) {
        let n = nodes[node]
        for a in n.attributes { names.insert(prefix + a.name) }
        if !n.text.trimmed.isEmpty { names.insert(prefix.isEmpty ? "text" : String(prefix.dropLast())) }
        if GMLGeometry.isGeometry(n.name) { names.insert(prefix + "geometry"); return }
        for child in n.children { fieldNames(child, prefix: prefix + nodes[child].name + ".", into: &names) }
    }

    /// A record's fields by their path below it, and the first GML geometry in it.
    func flatten(_ member: Int, into cells: inout [String: String], geometry: inout Result<[String: Any], PlacementProblem>?) {
        func visit(_ node: Int, prefix: String, srsName: String?) {
            let n = nodes[node]
            let srsName = n.attributes.first(where: { $0.name == "srsName" })?.value ?? srsName
            if GMLGeometry.isGeometry(n.name) {
                if geometry == nil { geometry = GMLGeometry.geoJSON(self, node, srsName: srsName) }
                return
            }
            for a in n.attributes where a.name != "srsName" { put(prefix + a.name, a.value) }
            let text = n.text.trimmed
            if !text.isEmpty { put(prefix.isEmpty ? "text" : String(prefix.dropLast()), text) }
            for child in n.children { visit(child, prefix: prefix + nodes[child].name + ".", srsName: srsName) }
        }
        func put(_ name: String, _ value: String) {
            if order[name] == nil { order[name] = order.count }
            if let old = cells[name] { cells[name] = old + "; " + value } else { cells[name] = value }
        }
        visit(member, prefix: "", srsName: nil)
    }
}

/// Builds a `DocumentTree` from SAX events, with the refusals of every XML reader.
final class XMLTreeBuilder: SAXHandler {
    let tree = DocumentTree()
    private var names: [String] = []
    private var numbers: [String: Int] = [:]
    private var open: [Int] = []
    var refusal = SAXRefusal()
    private(set) var tooLarge = false

    func tag(forElementName name: String) -> Int {
        if let n = numbers[name] { return n }
        names.append(name)
        numbers[name] = names.count - 1
        return names.count - 1
    }

    func startElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?, qualifiedName: String, attributes: SAXAttributes) {
        guard open.count < 128 else { return refusal.refuse(parser, "elements nested more than 128 deep") }
        do {
            let node = try tree.add(names[tag], parent: open.last ?? -1)
            for a in attributes.all { tree.addAttribute(a.name, a.value, to: node) }
            open.append(node)
        } catch {
            tooLarge = true
            parser.abort()
        }
    }

    func endElement(_ parser: SAXParser, tag: Int, namespaceURI: SAXName?) {
        _ = open.popLast()
    }

    func characters(_ parser: SAXParser, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let node = open.last else { return }
        tree.appendText(String(decoding: bytes, as: UTF8.self), to: node)
    }

    func entityDeclaration(_ parser: SAXParser, name: String, external: Bool) {
        refusal.refuseEntity(parser, name: name, external: external)
    }
}

/// A GML geometry element of a record, as a GeoJSON geometry GeoJSONGeometry places.
enum GMLGeometry {
    static let geometryNames: Set<String> = ["Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon",
                                             "MultiCurve", "MultiSurface", "Curve", "Surface"]

    static func isGeometry(_ name: String) -> Bool { geometryNames.contains(name) }

    /// The coordinate lists under `node` (each `posList`, `coordinates`, or run of `pos`), in
    /// WGS84: GML 3's `pos`/`posList` in the axis order its `srsName` implies, `coordinates`
    /// "x,y x,y"; a projected CRS (EPSG:21781, EPSG:25832, …) through PROJ, easting first.
    static func geoJSON(_ tree: DocumentTree, _ node: Int, srsName: String?) -> Result<[String: Any], PlacementProblem> {
        let projected: FeedCoordinates?
        if let code = epsgCode(srsName), code != 4326, code != 4258 {
            do {
                projected = try FeedCoordinates.make("EPSG:\(code)")
            } catch {
                return .failure(PlacementProblem("the geometry's CRS \(srsName ?? "") is not one PROJ knows: \(error)"))
            }
        } else {
            projected = nil
        }
        var lists: [[Coordinate]] = []
        var pendingPos: [String] = []
        func flushPos() {
            guard !pendingPos.isEmpty else { return }
            if case let .success(list) = convert(pendingPos.joined(separator: " "), commas: false) { lists.append(list) }
            pendingPos = []
        }
        func convert(_ text: String, commas: Bool) -> Result<[Coordinate], PlacementProblem> {
            if let projected {
                // "x,y x,y" (coordinates) or "x y x y" (pos, posList): easting first.
                let numbers = text.split(whereSeparator: { $0.isWhitespace || $0 == "," }).map { DecimalText.double(String($0)) }
                guard numbers.count >= 2, numbers.count % 2 == 0, !numbers.contains(where: { $0 == nil }) else {
                    return .failure(PlacementProblem("GML coordinates that are not pairs of numbers"))
                }
                var out: [Coordinate] = []
                for i in stride(from: 0, to: numbers.count, by: 2) {
                    do { out.append(try projected.position(x: numbers[i]!, y: numbers[i + 1]!)) } catch { return .failure(PlacementProblem(error.reason)) }
                }
                return .success(out)
            }
            return commas ? GMLPositions.readCoordinates(text) : GMLPositions.read(text, srsName: srsName, dimension: nil)
        }
        func visit(_ i: Int) {
            let n = tree.nodes[i]
            switch n.name {
            case "pos": pendingPos.append(n.text.trimmed)
            case "posList", "coordinates":
                flushPos()
                if case let .success(list) = convert(n.text.trimmed, commas: n.name == "coordinates") { lists.append(list) }
            default:
                for child in n.children { visit(child) }
            }
        }
        visit(node)
        flushPos()
        guard !lists.isEmpty else { return .failure(PlacementProblem("a GML \(tree.nodes[node].name) without coordinates that read")) }
        func positions(_ list: [Coordinate]) -> [[Double]] { list.map { [$0.longitude, $0.latitude] } }
        let name = tree.nodes[node].name
        if name.contains("Polygon") || name.contains("Surface") {
            return .success(["type": "MultiPolygon", "coordinates": lists.map { [positions($0)] }])
        }
        if name == "Point" || name == "MultiPoint" {
            return .success(["type": "MultiPoint", "coordinates": lists.flatMap(positions)])
        }
        return .success(["type": "MultiLineString", "coordinates": lists.map(positions)])
    }

    /// The EPSG code a `srsName` names: "EPSG:21781", "urn:ogc:def:crs:EPSG::25832",
    /// "http://www.opengis.net/gml/srs/epsg.xml#4326"; nil for none or CRS84.
    static func epsgCode(_ srsName: String?) -> Int? {
        guard let s = srsName?.lowercased(), s.contains("epsg"), !s.contains("crs84") else { return nil }
        let digits = s.reversed().prefix(while: \.isNumber)
        return Int(String(digits.reversed()))
    }
}
