import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Reads DATEX II situation publications: v1.0, v2.x (`d2LogicalModel`), v3.x (`d2:payload`,
/// `mc:messageContainer`), national profiles in their own namespaces, a SOAP envelope around any
/// of them (elements are matched by local name, record types by the local part of `xsi:type`),
/// and the v3 JSON encoding. XML is streamed one situation at a time; JSON is read whole.
///
/// One incident per situation (docs/feeds.md): its records (the accident, the lane closure it
/// causes, the speed limit, the diversion) are its parts. The incident's id is the situation's, so a new
/// version of the situation replaces the old one; it ends when every record is cancelled or
/// ended, suspended, or past its end time (`Incident.endedAt`).
struct DatexReader: FeedReader {
    /// ALERT-C locations become positions through this table, when the user gives one.
    var locationTable: AlertCLocationTable?

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        if FeedFormat.contentFamily(try input.head(4096)) == "JSON" {
            return try readJSON(input, source: source, handle: handle)
        }
        let names = RecordNames(known: [])
        let interpreter = DatexInterpreter(names: names, locationTable: locationTable)
        var index = 0
        let outcome = try XMLRecordReading.read(input, format: .datex2, names: names, recordNames: ["situation"],
                                                headerNames: ["publicationTime", "country"]) { tree, header, line in
            index += 1
            var event = interpreter.event(tree, situation: 0, source: source, index: index, line: line)
            // The publication's country (the v2 exchange's supplier, or v3's publication creator:
            // the first `country` outside the situations) tells its A7 from another country's.
            if case var .incident(incident) = event, let country = Self.countryCode(header["country"]) {
                incident.properties[Incident.countryProperty] = country
                event = .incident(incident)
            }
            try handle(event)
        }
        try Self.checkOutcome(outcome, input: input, skipped: outcome.oversized, handle: handle, startIndex: index)
    }

    /// An ISO 3166 alpha-2 code as DATEX II's `CountryEnum` writes it ("fr", "gb"), lower case;
    /// nil for "other" or anything else.
    static func countryCode(_ text: String?) -> String? {
        guard let t = text?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased(), t.count == 2,
              t.unicodeScalars.allSatisfy({ $0.value >= 0x61 && $0.value <= 0x7A }) else { return nil }
        return t
    }

    /// A document without situations is an empty publication when it is a DATEX II document,
    /// and not a DATEX II document at all otherwise.
    private static func checkOutcome(_ outcome: XMLRecordReading.Outcome, input: FeedInput, skipped: Int,
                                     handle: (FeedEvent) throws -> Void, startIndex: Int) throws {
        for n in 0..<skipped {
            try handle(.skipped(SkippedEntry(index: startIndex + n + 1, reason: "a situation larger than trafficgeo reads (\(RecordTreeCollector.maxRecordNodes) elements or \(RecordTreeCollector.maxRecordTextBytes >> 20) MiB of text)")))
        }
        guard outcome.records == 0 else { return }
        let root = outcome.rootName ?? ""
        // The root first: another kind of document's `type` attributes (an Atom link's
        // "text/html") are no DATEX II publication type.
        guard DatexNames.roots.contains(root) else {
            throw FeedError.malformed(input.location, format: .datex2,
                                      reason: "the document's root is <\(root.prefix(60))>, not a DATEX II one (d2LogicalModel, messageContainer, payload, a SOAP Envelope)",
                                      entriesRead: 0)
        }
        let publication = outcome.header["type"].map { RecordNames.localPart($0) }
        if let publication, publication != "SituationPublication" {
            throw FeedError.malformed(input.location, format: .datex2,
                                      reason: "a DATEX II \(publication.prefix(60)) holds no situations; trafficgeo reads SituationPublication",
                                      entriesRead: 0)
        }
    }

    private func readJSON(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        let document: Any
        do {
            document = try JSONSerialization.jsonObject(with: Data(contentsOf: input.fileURL), options: [.fragmentsAllowed])
        } catch {
            throw FeedError.malformed(input.location, format: .datex2, reason: "not valid JSON (\(error.localizedDescription))", entriesRead: 0)
        }
        let names = RecordNames(known: [])
        let interpreter = DatexInterpreter(names: names, locationTable: locationTable)
        let tree = RecordTree(names: names)
        var situations: [Any] = []
        var sawDatex = false
        Self.collect(document, into: &situations, sawDatex: &sawDatex)
        if situations.isEmpty && !sawDatex {
            throw FeedError.malformed(input.location, format: .datex2, reason: "no DATEX II situations in the JSON document (no \"situation\" member)", entriesRead: 0)
        }
        for (n, situation) in situations.enumerated() {
            tree.reset()
            guard situation is [String: Any] else {
                try handle(.skipped(SkippedEntry(index: n + 1, reason: "a situation that is not a JSON object")))
                continue
            }
            tree.add(json: situation, name: "situation")
            try handle(interpreter.event(tree, situation: 0, source: source, index: n + 1, line: nil))
        }
    }

    /// Every value of a `situation` member, wherever it sits (a message container, a payload, a
    /// bare publication), arrays flattened.
    private static func collect(_ value: Any, into out: inout [Any], sawDatex: inout Bool, depth: Int = 0) {
        guard depth < 32 else { return }
        if let object = value as? [String: Any] {
            for (key, member) in object {
                if key == "situation" {
                    if let list = member as? [Any] { out.append(contentsOf: list) } else { out.append(member) }
                    sawDatex = true
                } else {
                    if key.hasSuffix("SituationPublication") || key == "payload" || key == "messageContainer" || key == "d2LogicalModel" { sawDatex = true }
                    collect(member, into: &out, sawDatex: &sawDatex, depth: depth + 1)
                }
            }
        } else if let list = value as? [Any] {
            for item in list { collect(item, into: &out, sawDatex: &sawDatex, depth: depth + 1) }
        }
    }
}

/// The root elements of DATEX II documents (local names, any version, SOAP).
enum DatexNames {
    static let roots: Set<String> = ["d2LogicalModel", "messageContainer", "payload", "Envelope", "Body", "payloadPublication", "situationPublication"]
}

/// Turns one situation (`RecordTree` rooted at a `situation` element) into an incident.
struct DatexInterpreter {
    let names: RecordNames
    let locationTable: AlertCLocationTable?
    /// The element names it looks for, as numbers (read by its extensions too).
    let n: Numbers
    private let phrases = PhraseCache()

    /// Type and subtype names in words, made once each (a feed repeats a few dozen).
    private final class PhraseCache {
        var known: [String: String] = [:]

        func phrase(_ name: String, category: IncidentCategory) -> String {
            // An untyped record is named by its category, which varies.
            if name == "SituationRecord" { return DatexInterpreter.phrase(name, category: category) }
            if let p = known[name] { return p }
            let p = DatexInterpreter.phrase(name.prefix(1).uppercased() + name.dropFirst(), category: category)
            if known.count < 1024 { known[name] = p }
            return p
        }
    }

    init(names: RecordNames, locationTable: AlertCLocationTable?) {
        self.names = names
        self.locationTable = locationTable
        n = Numbers(names)
    }

    /// The name numbers, resolved once.
    struct Numbers {
        let situationRecord, overallSeverity, severity, probability, validity, validityStatus, overallStartTime, overallEndTime: Int32
        let situationVersionTime, recordVersionTime, recordCreationTime, generalPublicComment, nonGeneralPublicComment, comment, value: Int32
        let pointCoordinates, latitude, longitude, locationForDisplay, coordinatesForDisplay, linearStart, linearEnd, posList: Int32
        let openlrCoordinates, openlrLast: Int32
        let from, to, roadNumber, roadName, lifeCycleManagement, cancel, end, delayTimeValue, lanesRestricted: Int32
        let tpegDescriptorType, alertCTable, specificLocation, offsetDistance, trafficConstrictionType: Int32
        let m2Primary, m2Secondary, m4Primary, m4Secondary: Int32
        let directions: [Int32]
        let causeType, vehicleObstructionType, abnormalTrafficType, laneManagementType, alertCDirectionCoded: Int32
        let subtypes: [Int32]

        init(_ names: RecordNames) {
            func k(_ s: String) -> Int32 { names.number(s) }
            situationRecord = k("situationRecord"); overallSeverity = k("overallSeverity"); severity = k("severity")
            probability = k("probabilityOfOccurrence"); validity = k("validity"); validityStatus = k("validityStatus")
            overallStartTime = k("overallStartTime"); overallEndTime = k("overallEndTime"); situationVersionTime = k("situationVersionTime")
            recordVersionTime = k("situationRecordVersionTime"); recordCreationTime = k("situationRecordCreationTime")
            generalPublicComment = k("generalPublicComment"); nonGeneralPublicComment = k("nonGeneralPublicComment")
            comment = k("comment"); value = k("value")
            pointCoordinates = k("pointCoordinates"); latitude = k("latitude"); longitude = k("longitude")
            locationForDisplay = k("locationForDisplay"); coordinatesForDisplay = k("coordinatesForDisplay")
            linearStart = k("linearCoordinatesStartPoint"); linearEnd = k("linearCoordinatesEndPoint"); posList = k("posList")
            openlrCoordinates = k("openlrCoordinates"); openlrLast = k("openlrLastLocationReferencePoint")
            from = k("from"); to = k("to"); roadNumber = k("roadNumber"); roadName = k("roadName")
            lifeCycleManagement = k("lifeCycleManagement"); cancel = k("cancel"); end = k("end")
            delayTimeValue = k("delayTimeValue"); lanesRestricted = k("numberOfLanesRestricted")
            tpegDescriptorType = k("tpegOtherPointDescriptorType"); alertCTable = k("alertCLocationTableNumber")
            specificLocation = k("specificLocation"); offsetDistance = k("offsetDistance"); trafficConstrictionType = k("trafficConstrictionType")
            m2Primary = k("alertCMethod2PrimaryPointLocation"); m2Secondary = k("alertCMethod2SecondaryPointLocation")
            m4Primary = k("alertCMethod4PrimaryPointLocation"); m4Secondary = k("alertCMethod4SecondaryPointLocation")
            directions = ["directionBoundOnLinearSection", "directionBound", "tpegDirection", "alertCDirectionCoded", "directionRelative"].map(k)
            causeType = k("causeType"); vehicleObstructionType = k("vehicleObstructionType"); abnormalTrafficType = k("abnormalTrafficType")
            laneManagementType = k("roadOrCarriagewayOrLaneManagementType"); alertCDirectionCoded = k("alertCDirectionCoded")
            subtypes = DatexInterpreter.subtypeElements.map(k)
        }
    }

    /// One record's facts.
    private struct Record {
        var id: String?
        var type: String
        var category: IncidentCategory
        var ended = false
        var suspended = false
        var start: Date?
        var end: Date?
        var versionTime: Date?
        var location: Location
        var alertC: AlertCReference?
    }

    struct Location {
        var position: Coordinate?
        var line: [Coordinate]?
        var problem: String?
    }

    func event(_ tree: RecordTree, situation: Int32, source: String, index: Int, line: Int?) -> FeedEvent {
        let situationID = tree.attribute(situation, "id")?.trimmed.nilIfEmpty
        var records: [Record] = []
        let recordNodes = tree.all(n.situationRecord, in: situation)
        for node in recordNodes {
            records.append(record(tree, node))
        }
        guard let id = situationID ?? records.first?.id else {
            return .skipped(SkippedEntry(index: index, line: line, reason: "a situation without an id (and no record with one)"))
        }
        if records.isEmpty {
            return .skipped(SkippedEntry(index: index, entryID: id, line: line, reason: "a situation without records"))
        }
        let now = Date()
        var properties = [String: String](minimumCapacity: 24)
        // Location: the first record that has one; a record without one is placed at the situation's.
        var location = records.first(where: { $0.location.position != nil || $0.location.line != nil })?.location
        var positionSource: PositionSource?
        var problem = records.compactMap(\.location.problem).first
        if location == nil, let table = locationTable {
            for record in records {
                guard let reference = record.alertC else { continue }
                switch table.resolve(reference) {
                case let .success(found):
                    location = Location(position: found.position, line: found.line)
                    positionSource = PositionSource(kind: .feed, geocoder: "alert-c")
                case let .failure(reason):
                    problem = problem ?? reason.reason
                }
                if location != nil { break }
            }
        }
        if let reference = records.compactMap(\.alertC).first { properties[AlertCReference.property] = reference.description }

        // What a user calls the incident: the cause among its records; when all are measures
        // (a closure, a speed limit, a diversion), the cause they name (`causeType`).
        let mainIndex = records.indices.min { Self.rank(records[$0].category) < Self.rank(records[$1].category) }!
        let main = records[mainIndex]
        var category = main.category
        let cause = tree.firstText(n.causeType, in: situation)
        if Self.rank(category) >= Self.rank(.closure), let cause, let caused = Self.category(cause: cause) { category = caused }
        if let cause { properties["cause"] = cause }
        var types: [String] = []
        for r in records where !types.contains(r.type) { types.append(r.type) }
        properties["record_types"] = types.joined(separator: ", ")
        properties["records"] = String(records.count)
        if let severity = tree.firstText(n.overallSeverity, in: situation) ?? recordNodes.lazy.compactMap({ tree.firstText(n.severity, in: $0) }).first {
            properties["severity"] = severity
        }
        if let probability = recordNodes.lazy.compactMap({ tree.firstText(n.probability, in: $0) }).first { properties["probability"] = probability }
        if let version = tree.attribute(situation, "version") { properties["situation_version"] = version }
        let starts = records.compactMap(\.start)
        if let start = starts.min() { properties["valid_from"] = TimestampParser.format(start) }
        let statuses = Set(recordNodes.compactMap { tree.firstText(n.validityStatus, in: $0) })
        if !statuses.isEmpty { properties["validity_status"] = statuses.sorted().joined(separator: ", ") }
        // The end of validity: the latest record's, none when any record runs open-ended.
        let expires: Date? = records.contains(where: { $0.end == nil }) ? nil : records.compactMap(\.end).max()

        let road = tree.firstText(n.roadNumber, in: situation) ?? linkName(tree, situation)
        if let road { properties["road_number"] = road }
        if let roadName = tree.firstText(n.roadName, in: situation) { properties["road_name"] = roadName }
        if let direction = n.directions.lazy.compactMap({ tree.firstText($0, in: situation) }).first { properties["direction"] = direction }
        if let delay = tree.firstText(n.delayTimeValue, in: situation), let seconds = DecimalText.double(delay) {
            properties["delay_minutes"] = String(Int((seconds / 60).rounded()))
        }
        if let lanes = tree.firstText(n.lanesRestricted, in: situation) { properties["lanes_restricted"] = lanes }
        if let constriction = tree.firstText(n.trafficConstrictionType, in: situation) { properties["traffic_constriction"] = constriction }
        if let problem, location?.position == nil { properties[Incident.positionProblemProperty] = problem }

        let (comments, firstHeadline, structured) = publicComments(tree, situation)
        // National Highways' `key : value` comment: its fields are details, its location the headline.
        if let structured {
            for (key, value) in structured.details where properties[key] == nil { properties[key] = value }
        }
        // The place the TPEG location names ("M25 clockwise between J9 and J10") heads a title
        // whose comment gives none.
        let linkHeadline = PlaceholderText.meaningful(linkName(tree, situation))
        let headline = structured?.place ?? firstHeadline ?? linkHeadline
        if properties["direction"] == nil, let place = structured?.place, let direction = Self.directionWord(in: place) {
            properties["direction"] = direction
        }
        let updated = records.compactMap(\.versionTime).max()
            ?? tree.firstText(n.situationVersionTime, in: situation).flatMap(TimestampParser.parse)
        // Over when every record is: cancelled or ended by its supplier, suspended, or past its end.
        let allOver = records.allSatisfy { $0.ended || $0.suspended || ($0.end.map { $0 <= now } ?? false) }
        var endedAt: Date?
        if allOver {
            let ends = records.map { r -> Date in
                if let end = r.end, end <= now { return end }
                return r.versionTime.map { min($0, now) } ?? now
            }
            endedAt = ends.max()
        }

        // The kind in words: the main record's subtype when it gives one ("laneClosures"), else its type.
        let subtype = n.subtypes.lazy.compactMap { tree.firstText($0, in: recordNodes[mainIndex]) }
            .first { !["other", "unknown", "undefined", "notspecified"].contains($0.lowercased()) && !$0.lowercased().hasPrefix("unspecified") }
        // A record that says no more than its type ("unspecified abnormal traffic") is named by
        // the reason its comment gives ("Congestion").
        var title = subtype == nil ? structured?.reason ?? phrases.phrase(main.type, category: category) : phrases.phrase(subtype!, category: category)
        if let headline, !headline.isEmpty {
            title += " – " + headline
        } else if let road {
            title += " on " + road
        }
        // The road the location names, else one the words name ("A3 Köln Richtung Frankfurt").
        let namedRoad: String? = road.flatMap { RoadReference.field($0) } ?? PlaceholderText.meaningful(road)?.normalizedWhitespace.nilIfEmpty
        let placeRoad: String? = structured?.place.flatMap(RoadReference.firstOfAnyScheme(inPlace:))
        let commentRoad: String? = comments.lazy.compactMap { RoadReference.first(in: $0) }.first
        var incident = Incident(
            source: source, id: id, title: title, summary: comments.isEmpty ? nil : comments.joined(separator: "\n"),
            updated: updated, expires: expires,
            road: namedRoad ?? placeRoad ?? commentRoad,
            category: category, position: location?.position, segment: location?.line,
            positionSource: location?.position == nil ? nil : (positionSource ?? .feed), properties: properties, endedAt: endedAt)
        if incident.position == nil, let line = incident.segment, let first = line.first {
            incident.position = first
            incident.positionSource = positionSource ?? .feed
        }
        return .incident(incident)
    }

    private func record(_ tree: RecordTree, _ node: Int32) -> Record {
        let type = tree.typeText(node) ?? "SituationRecord"
        var record = Record(id: tree.attribute(node, "id"), type: type, category: category(type, tree: tree, node: node),
                            location: location(tree, node))
        if let validity = tree.first(n.validity, in: node) {
            let status = tree.firstText(n.validityStatus, in: validity)?.lowercased()
            record.suspended = status == "suspended"
            record.start = tree.firstText(n.overallStartTime, in: validity).flatMap(TimestampParser.parse)
            record.end = tree.firstText(n.overallEndTime, in: validity).flatMap(TimestampParser.parse)
        }
        if let management = tree.first(n.lifeCycleManagement, in: node) {
            record.ended = tree.firstText(n.cancel, in: management)?.lowercased() == "true" || tree.firstText(n.end, in: management)?.lowercased() == "true"
        }
        record.versionTime = (tree.firstText(n.recordVersionTime, in: node) ?? tree.firstText(n.recordCreationTime, in: node)).flatMap(TimestampParser.parse)
        record.alertC = alertC(tree, node)
        return record
    }

    // MARK: Locations

    /// The coordinates a record gives: a point (pointByCoordinates, a TPEG point), the start of a
    /// line (linear coordinates, a TPEG linear location's `from`, a `gml:posList`), else the
    /// display point (`locationForDisplay`, `coordinatesForDisplay`). A line is kept as the
    /// incident's segment: a `gml:posList`, else start to end.
    private func location(_ tree: RecordTree, _ node: Int32) -> Location {
        var point: Coordinate?, start: Coordinate?, end: Coordinate?, display: Coordinate?, line: [Coordinate]?
        var problem: String?
        for i in tree.descendants(of: node) {
            let name = tree.name(i)
            if name == n.openlrCoordinates {
                // OpenLR: the first location reference point is where a line starts, the last where it ends.
                guard let lat = tree.firstText(n.latitude, in: i), let lon = tree.firstText(n.longitude, in: i),
                      let c = try? Coordinate(parsingLatitude: lat, longitude: lon), !c.isNullIsland else { continue }
                if tree.hasAncestor(i, named: n.openlrLast, stop: node) { end = end ?? c } else { start = start ?? c }
            } else if name == n.pointCoordinates || name == n.locationForDisplay || name == n.coordinatesForDisplay {
                guard let lat = tree.firstText(n.latitude, in: i), let lon = tree.firstText(n.longitude, in: i) else { continue }
                let c: Coordinate
                do { c = try Coordinate(parsingLatitude: lat, longitude: lon) } catch {
                    problem = problem ?? "\(error)"
                    continue
                }
                if c.isNullIsland { continue }
                if name != n.pointCoordinates {
                    display = display ?? c
                } else if tree.hasAncestor(i, named: n.linearStart, stop: node) || tree.hasAncestor(i, named: n.from, stop: node) {
                    start = start ?? c
                } else if tree.hasAncestor(i, named: n.linearEnd, stop: node) || tree.hasAncestor(i, named: n.to, stop: node) {
                    end = end ?? c
                } else {
                    point = point ?? c
                }
            } else if name == n.posList, line == nil, let text = tree.text(i) {
                switch GMLPositions.read(text, srsName: tree.inheritedAttribute(i, "srsName"),
                                         dimension: tree.inheritedAttribute(i, "srsDimension").flatMap { Int($0) }) {
                case let .success(list): if list.count >= 2 { line = list } else if let only = list.first { point = point ?? only }
                case let .failure(reason): problem = problem ?? reason.reason
                }
            }
        }
        if line == nil, let start, let end { line = [start, end] }
        return Location(position: point ?? start ?? line?.first ?? display, line: line, problem: problem)
    }

    private func alertC(_ tree: RecordTree, _ node: Int32) -> AlertCReference? {
        guard let table = tree.firstText(n.alertCTable, in: node) else { return nil }
        func point(_ element: Int32) -> (Int, Double?)? {
            guard let e = tree.first(element, in: node), let code = tree.firstText(n.specificLocation, in: e).flatMap({ Int($0) }) else { return nil }
            return (code, tree.firstText(n.offsetDistance, in: e).flatMap { DecimalText.double($0) })
        }
        var primary = point(n.m4Primary) ?? point(n.m2Primary)
        let secondary = point(n.m4Secondary) ?? point(n.m2Secondary)
        if primary == nil, let code = tree.firstText(n.specificLocation, in: node).flatMap({ Int($0) }) { primary = (code, nil) }
        guard let primary else { return nil }
        let direction = tree.firstText(n.alertCDirectionCoded, in: node)
        return AlertCReference(table: table, primary: primary.0, primaryOffset: primary.1, secondary: secondary?.0,
                               secondaryOffset: secondary?.1, direction: direction)
    }

    /// A comment's text in the first language it is given in: several `<value>`s of that
    /// language are lines of one text (National Highways writes each `key : value` line as a
    /// value of its own); a comment with no `<value>` is its own text.
    private func commentText(_ tree: RecordTree, _ holder: Int32) -> String? {
        let values = tree.all(n.value, in: holder)
        guard let first = values.first(where: { tree.text($0) != nil }) else { return tree.text(holder) }
        let language = tree.attribute(first, "lang")
        let lines = values.filter { tree.attribute($0, "lang") == language }.compactMap { tree.text($0) }
        return lines.joined(separator: "\n")
    }

    /// The road a TPEG point names (`tpegOtherPointDescriptorType` linkName).
    /// "southbound" in "The M1 southbound between J29A and J30", as a word.
    static func directionWord(in place: String) -> String? {
        let words = place.lowercased().split(whereSeparator: { !$0.isLetter })
        return words.lazy.map(String.init).first { ["northbound", "southbound", "eastbound", "westbound", "clockwise", "anticlockwise"].contains($0) }
    }

    private func linkName(_ tree: RecordTree, _ node: Int32) -> String? {
        for i in tree.all(n.tpegDescriptorType, in: node) where tree.text(i) == "linkName" {
            let parent = tree.parent(i)
            if parent >= 0, let name = tree.firstText(n.value, in: parent) { return name }
        }
        return nil
    }

    /// Each general public comment once, in order: the first language given of each, its white
    /// space normalised. Where a situation has none, its non-general comments (DATEX II v1.0
    /// publishers such as the Highways Agency wrote their whole description there, for the
    /// traffic operators and publishers their feed was for).
    /// And the first comment written as `key : value` lines (`StructuredComment`).
    private func publicComments(_ tree: RecordTree, _ node: Int32) -> (all: [String], headline: String?, structured: StructuredComment?) {
        var out: [String] = []
        var headline: String?
        var structured: StructuredComment?
        var holders = tree.all(n.generalPublicComment, in: node)
        if holders.isEmpty { holders = tree.all(n.nonGeneralPublicComment, in: node) }
        for c in holders {
            let holder = tree.first(n.comment, in: c) ?? c
            // One line each: comments are written for signs and radio, their line breaks are layout.
            if let raw = commentText(tree, holder), case let text = raw.normalizedWhitespace, !out.contains(text) {
                // The headline: the first line of the first comment, as its writer broke it.
                if headline == nil { headline = Self.firstLine(raw) }
                // Only a comment of several lines with a colon can be one (on the bytes:
                // `String.contains` of a string went through NSString, a tenth of a DATEX ingest).
                if structured == nil, raw.utf8.contains(UInt8(ascii: ":")), raw.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
                    structured = StructuredComment(raw)
                }
                out.append(text.utf8.count > 4096 ? String(text.prefix(4096)) : text)
            }
            if out.count >= 16 { break }
        }
        return (out, headline, structured)
    }
}
