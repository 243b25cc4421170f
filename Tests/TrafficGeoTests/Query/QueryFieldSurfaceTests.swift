import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoServe
@testable import TrafficGeoQuery
@testable import TrafficGeoStore
@testable import TrafficGeoWatch
import TrafficGeoSupport
import TrafficGeoTestSupport

/// Every query field on every surface: each surface takes exactly the fields
/// `QueryField.surfaces` declares — the query commands' options, serve's items and event
/// parameters (as read and as the OpenAPI document lists them), the map page's passed
/// conditions, a watches file's keys — and every filter field is answered alike by the model's
/// in-memory check, the SQLite store and PostGIS. A field added to the model but missed by a
/// surface, or declared for one that ignores it, fails here (docs/architecture.md, "Adding a
/// query field").
@Suite("Query fields on every surface")
struct QueryFieldSurfaceTests {
    /// A field's sample text and the fields it needs beside it (radius needs a centre).
    struct Sample: Sendable {
        var value: String
        var needs: [QueryField: String] = [:]
    }

    static let route = "LINESTRING(6.90 50.90, 7.00 51.00)"

    /// One sample per field: a field without one fails `everyFieldHasASample`. A measure's
    /// field is sampled by its declaration's example (`measureValues` gives the fixture's).
    static let samples: [QueryField: Sample] = Dictionary(uniqueKeysWithValues: QueryField.measureFields.map { ($0, Sample(value: $0.measure!.example)) })
        .merging(givenSamples) { $1 }

    static let givenSamples: [QueryField: Sample] = [
        .lat: Sample(value: "50.94", needs: [.lon: "6.96"]),
        .lon: Sample(value: "6.96", needs: [.lat: "50.94"]),
        .radius: Sample(value: "5km", needs: [.lat: "50.94", .lon: "6.96"]),
        .bbox: Sample(value: "6.8,50.8,7.2,51.1"),
        .route: Sample(value: route),
        .buffer: Sample(value: "1km", needs: [.route: route]),
        .activeAt: Sample(value: "now"),
        .since: Sample(value: "-1h"),
        .until: Sample(value: "-1h"),
        .road: Sample(value: "A4"),
        .category: Sample(value: "accident"),
        .search: Sample(value: "stau"),
        .source: Sample(value: "autobahn"),
        .minConfidence: Sample(value: "0.5"),
        .precision: Sample(value: "town"),
        .minSeverity: Sample(value: "high"),
        .unconfirmedAfter: Sample(value: "30d", needs: [.activeAt: "now"]),
        .reports: Sample(value: "true"),
        .sort: Sample(value: "updated"),
    ]

    @Test func everyFieldHasASample() {
        for field in QueryField.allCases { #expect(Self.samples[field] != nil, "a sample for \(field): add one to QueryFieldSurfaceTests.samples") }
    }

    /// `name=value&…` for a request: the field's needs, and the field itself unless `without`
    /// (given empty when `empty`).
    static func parameters(_ field: QueryField, without: Bool = false, empty: Bool = false) -> QueryParameters {
        let sample = samples[field]!
        var pairs = sample.needs.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key, $0.value) }
        if !without { pairs.append((field, empty ? "" : sample.value)) }
        let query = pairs.map { "\($0.0.name(on: .parameter))=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }.joined(separator: "&")
        return try! QueryParameters(query)
    }

    // MARK: - The command line

    @Test(.enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
    func theQueryCommandsTakeTheirFields() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = Set<String>()
        for command in ["near", "within", "bbox", "along", "export"] {
            let help = try await TestSupport.runCLI([command, "--help"], folder: folder)
            #expect(help.status == 0)
            let text = help.stdout + help.stderr
            let pattern = try NSRegularExpression(pattern: "--[a-z][a-z-]*")
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) { options.insert(String(text[Range(match.range, in: text)!])) }
        }
        for field in QueryField.allCases {
            #expect(options.contains(field.name(on: .commandLine)) == field.surfaces.contains(.commandLine),
                    "\(field.name(on: .commandLine)): declared \(field.surfaces.contains(.commandLine) ? "" : "not ")on the command line")
        }
    }

    // MARK: - serve

    @Test(arguments: QueryField.allCases)
    func serveReadsItsFieldsAndTheOpenAPIDocumentListsThem(_ field: QueryField) throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json(base: "http://x").utf8)) as? [String: Any])
        func parameters(_ path: String) -> [[String: Any]] {
            let operation = ((document["paths"] as? [String: Any])?[path] as? [String: Any])?["get"] as? [String: Any]
            return operation?["parameters"] as? [[String: Any]] ?? []
        }
        func listed(_ path: String) -> Set<String> { Set(parameters(path).compactMap { $0["name"] as? String }) }
        let name = field.name(on: .parameter)
        for (surface, path, allowed) in [(QueryField.Surfaces.items, "/collections/incidents/items", ItemsQuery.itemsParameters),
                                         (.eventStream, "/collections/incidents/events", ItemsQuery.eventParameters)] {
            let declared = field.surfaces.contains(surface)
            #expect(listed(path).contains(name) == declared, "\(name) in the OpenAPI document's \(path): declared \(declared)")
            // Without the field: its needs alone, or nothing where they need it back (lat, lon).
            let base = (try? ItemsQuery(Self.parameters(field, without: true), allowed: allowed)) ?? ItemsQuery()
            do {
                let asked = try ItemsQuery(Self.parameters(field), allowed: allowed)
                #expect(declared, "\(path) took \(name), which is not declared for it")
                #expect(asked != base, "\(path) took \(name)=\(Self.samples[field]!.value) but its question did not change")
            } catch {
                #expect(!declared, "\(path) refused \(name): \(error)")
            }
            // A filter field's empty value is no condition, and the document admits it
            // (allowEmptyValue) for those fields only: schemathesis holds serve to the document.
            guard declared else { continue }
            let entry = parameters(path).first { $0["name"] as? String == name }
            let isFilter = QueryField.filterFields.contains(field)
            #expect((entry?["allowEmptyValue"] as? Bool ?? false) == isFilter, "\(name)'s allowEmptyValue in \(path): a filter field \(isFilter)")
            if isFilter {
                let now = Date()
                let without = try? ItemsQuery(Self.parameters(field, without: true), allowed: allowed, now: now)
                #expect((try? ItemsQuery(Self.parameters(field, empty: true), allowed: allowed, now: now)) == without, "\(path): \(name)= is not the question without it")
            }
        }
    }

    @Test(arguments: QueryField.allCases)
    func theMapPagePassesItsFieldsOn(_ field: QueryField) throws {
        let parameters = Self.parameters(field)
        guard let query = try? ItemsQuery(parameters) else {
            #expect(!field.surfaces.contains(.items), "items refused \(field)")
            return
        }
        let html = MapPage.html(configuration: ServeConfiguration(), parameters: parameters, query: query)
        // The page's configuration: "query":{…} holds what it passes on.
        let start = try #require(html.range(of: "\"query\":{"))
        let passedObject = html[start.upperBound...].prefix { $0 != "}" }
        let passed = "\(JSONObjectText.string(field.name(on: .parameter))):\(JSONObjectText.string(Self.samples[field]!.value))"
        #expect(passedObject.contains(passed) == field.surfaces.contains(.mapPage), "\(passed) on the map page (\(passedObject)): declared \(field.surfaces.contains(.mapPage))")
    }

    // MARK: - A watches file

    @Test(arguments: QueryField.allCases)
    func aWatchesFileTakesItsFields(_ field: QueryField) throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A watch's route is a file beside the watches file.
        _ = try TestSupport.write(#"{"type":"LineString","coordinates":[[6.9,50.9],[7.0,51.0]]}"#, name: "route.geojson", in: folder)
        func watchText(_ text: String) -> String { text == Self.route ? "route.geojson" : text }
        let sample = Self.samples[field]!
        let areaFields: Set<QueryField> = [.lat, .lon, .radius, .bbox, .route, .buffer]
        var object: [String: Any] = [:]
        if !areaFields.contains(field) { object["lat"] = "50.94"; object["lon"] = "6.96"; object["radius"] = "5km" }
        for (need, value) in sample.needs { object[need.name(on: .watchesFile)] = watchText(value) }
        object[field.name(on: .watchesFile)] = watchText(sample.value)
        do {
            _ = try WatchDefinitions.standingQuery(object, defaultName: "w", folder: folder.path)
            #expect(field.surfaces.contains(.watchesFile), "a watch took \(field.name(on: .watchesFile)), which is not declared for it")
        } catch {
            #expect(!field.surfaces.contains(.watchesFile), "a watch refused \(field.name(on: .watchesFile)): \(error)")
            #expect("\(error)".contains("is not a key of a watch"), "\(error)")
        }
    }

    /// A null (YAML's `min_delay:` with nothing after it) is no condition, as serve's empty
    /// parameter; a value of the wrong kind is named in the file's words, not Swift's.
    @Test func aWatchesFileNullIsNoConditionAndAWrongKindIsNamed() throws {
        let area: [String: Any] = ["lat": "50.94", "lon": "6.96", "radius": "5km"]
        let plain = try WatchDefinitions.standingQuery(area, defaultName: "w", folder: "/")
        let withNull = try WatchDefinitions.standingQuery(area.merging(["min_delay": NSNull(), "road": NSNull()]) { $1 }, defaultName: "w", folder: "/")
        #expect(withNull.filter == plain.filter)
        do {
            _ = try WatchDefinitions.standingQuery(area.merging(["min_delay": ["10m"]]) { $1 }, defaultName: "w", folder: "/")
            Issue.record("a list for min_delay was taken")
        } catch {
            #expect("\(error)" == "watch 'w': min_delay is a list; it takes a text or a number, as --min-delay takes it", "\(error)")
        }
    }

    // MARK: - The stores

    /// Reports that differ in every filter field: two sources (one report of the same accident
    /// each, which make one event), severities, geocoded precisions and confidences, times.
    static func incidents(now: Date) -> [(source: String, incident: Incident)] {
        func hours(_ h: Double) -> Date { now.addingTimeInterval(h * 3600) }
        let feed = PositionSource(kind: .feed)
        var out: [(String, Incident)] = []
        let roads = ["A1", "A3", "A4", "A57"]
        let categories: [IncidentCategory] = [.accident, .roadworks, .queue, .closure, .weather]
        let severities = ["low", "medium", "high", "highest", nil]
        for i in 0..<30 {
            let position = Coordinate(latitude: 50.80 + Double(i % 6) * 0.05, longitude: 6.80 + Double(i / 6) * 0.08)
            var incident = Incident(source: "desk", id: "d\(i)", title: "\(roads[i % 4]) : Köln \(i)", summary: i % 3 == 0 ? "Stau auf \(i) km" : "Gefahr \(i)",
                                    updated: hours(-Double(i) * 0.2), expires: i % 5 == 4 ? hours(-1) : (i % 7 == 3 ? nil : hours(5)),
                                    road: roads[i % 4], category: categories[i % 5], position: position,
                                    positionSource: i % 4 == 1 ? PositionSource(kind: .geocoder, geocoder: "test", query: "Köln \(i)",
                                                                                precision: [.junction, .town, .road][i % 3], confidence: [0.3, 0.6, 0.9][i % 3]) : feed)
            if let severity = severities[i % 5] { incident.properties["severity"] = severity }
            // Each measure as feeds write it: a range (its upper end counts), numbers, a unit, words.
            for (k, measure) in IncidentMeasure.allCases.enumerated() {
                if let value = Self.measureValues[(i + k) % Self.measureValues.count] { incident.properties[measure.property] = value }
            }
            out.append(("desk", incident))
        }
        // Read ten days ago and not since, no end: in effect now only for an unconfirmed-after
        // over 10 days (`fill` ingests it then).
        out.append(("archive", Incident(source: "archive", id: "quiet", title: "A4 : Köln - Aachen", updated: hours(-240), road: "A4", category: .roadworks,
                                     position: Coordinate(latitude: 50.9, longitude: 6.9), positionSource: feed)))
        // One accident, two feeds: one event of two reports.
        for source in ["autobahn", "desk"] {
            out.append((source, Incident(source: source, id: "\(source)-crash", title: "A3 : Köln-Mülheim - Leverkusen", updated: hours(-0.1), expires: hours(2),
                                         road: "A3", category: .accident, position: Coordinate(latitude: 51.0, longitude: 7.02), positionSource: feed)))
        }
        return out
    }

    static let measureValues: [String?] = ["15-20", "5", "30 min", nil, "about 10", "2"]

    static func fill(_ store: any IncidentStore, now: Date) async throws {
        let all = incidents(now: now)
        for source in ["archive", "desk", "autobahn"] {
            let read = source == "archive" ? now.addingTimeInterval(-240 * 3600) : now
            _ = try await store.ingest(source: source, snapshot: .wholeSource, now: read) { emit in
                for (s, incident) in all where s == source { try emit(.incident(incident)) }
            }
        }
    }

    /// What a filter field's sample asks of each store, against the model's own check.
    @Test(.enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
    func everyFilterFieldIsAnsweredAlikeInMemoryAndByBothStores() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let now = Date()
        let sqlite = try await StoreOpening.open(folder.appendingPathComponent("fields.sqlite").path)
        let postgis = try await StoreOpening.open(url)
        try await Self.fill(sqlite, now: now)
        try await Self.fill(postgis, now: now)
        let world = LonLatBox(west: -180, south: -90, east: 180, north: 90)
        let all = try await sqlite.inBoundingBox(world, filter: IncidentFilter())
        for field in QueryField.filterFields {
            let sample = Self.samples[field]!
            var text = QueryText(), base = QueryText()
            for (need, value) in sample.needs { text.add(need, value); base.add(need, value) }
            text.add(field, sample.value)
            let filter = try text.filter(now: now), unfiltered = try base.filter(now: now)
            func ids(_ results: [QueryResult]) -> [String] { results.map { "\($0.incident.source)/\($0.incident.id)" }.sorted() }
            let fromFile = ids(try await sqlite.inBoundingBox(world, filter: filter))
            let fromServer = ids(try await postgis.inBoundingBox(world, filter: filter))
            let everything = try await sqlite.inBoundingBox(world, filter: unfiltered)
            #expect(fromFile == fromServer, "\(field) = \(sample.value): SQLite \(fromFile), PostGIS \(fromServer)")
            #expect(fromFile != ids(everything), "\(field) = \(sample.value) changes nothing in the fixture: \(fromFile)")
            #expect(!fromFile.isEmpty, "\(field) = \(sample.value) picks nothing in the fixture: \(fromFile)")
            if field != .reports {
                // The model's in-memory check (what a watch and a CQL2 remainder use) agrees.
                let inMemory = ids(all.filter { filter.matches($0.stored) })
                #expect(fromFile == inMemory, "\(field) = \(sample.value): the stores \(fromFile), the in-memory check \(inMemory)")
            }
        }
    }

    // MARK: - What a declaration makes: CQL2, the map page's control, serve --help

    /// Every measure's field is a CQL2 queryable, and `q >= n` asks what the field asks.
    @Test(arguments: QueryField.measureFields)
    func aMeasuresFieldIsACQL2Queryable(_ field: QueryField) throws {
        let measure = try #require(field.measure)
        let queryable = try #require(Queryable(rawValue: measure.queryable), "\(measure.queryable) is no queryable")
        #expect(queryable.field == field && queryable.type == .number && !queryable.description.isEmpty)
        // Its schema in the queryables document: a number from 0 with no top (confidence's 0 … 1 is
        // a share's; given to a delay it told clients that an hour was out of range).
        let document = try #require(try JSONSerialization.jsonObject(with: Data(FeatureDocuments.queryables(base: "http://x").utf8)) as? [String: Any])
        let schema = try #require((document["properties"] as? [String: Any])?[measure.queryable] as? [String: Any])
        #expect(schema["type"] as? String == "number" && schema["minimum"] as? Int == 0 && schema["maximum"] == nil, "\(schema)")
        var asField = QueryText()
        asField.add(field, measure.example)
        let least = try asField.filter().minimums[measure.measure]
        let number = try #require(least)
        let question = try CQL2Question(CQL2Expression(text: "\(measure.queryable) >= \(PlainNumber.text(number))"), asked: QueryText(), base: IncidentFilter(), hasBox: false)
        #expect(question.remainder == nil, "asked of the store whole")
        #expect(try question.asked.filter() == asField.filter())
        let now = Date()
        let all = Self.incidents(now: now).map { StoredIncident(storeID: 0, incident: $0.incident, firstSeen: now, lastChanged: now) }
        for op in [">=", ">", "<", "<=", "=", "<>"] {
            let q = try CQL2Question(CQL2Expression(text: "\(measure.queryable) \(op) 20"), asked: QueryText(), base: IncidentFilter(), hasBox: false)
            let filter = try q.asked.filter()
            let kept = all.filter { filter.matches($0) && (q.remainder?.matches($0) ?? true) }.map(\.incident.id)
            let expected = all.filter { stored in
                // As SQL's NULL: an incident that gives none is not <, <=, =, >, >= nor <> anything.
                guard let value = measure.measure.value(of: stored.incident) else { return false }
                switch op {
                case ">=": return value >= 20
                case ">": return value > 20
                case "<": return value < 20
                case "<=": return value <= 20
                case "=": return value == 20
                default: return value != 20
                }
            }.map(\.incident.id)
            #expect(kept == expected, "\(measure.queryable) \(op) 20: \(kept), expected \(expected)")
        }
    }

    /// The map page makes a control for every measure's field it takes.
    @Test func theMapPageHasAControlForEveryMeasuresField() throws {
        let html = MapPage.html(configuration: ServeConfiguration(), parameters: try QueryParameters(""), query: ItemsQuery())
        for field in QueryField.measureFields {
            #expect(html.contains("\"parameter\":\"\(field.name(on: .parameter))\"") == field.surfaces.contains(.mapPage), "the map page's control for \(field)")
        }
    }

    /// `serve --help` names every parameter the items and the event stream take.
    @Test(.enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
    func serveHelpNamesEveryParameter() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let help = try await TestSupport.runCLI(["serve", "--help"], folder: folder)
        let words = Set((help.stdout + help.stderr).split(whereSeparator: { !$0.isLetter && $0 != "-" }).map(String.init))
        for field in QueryField.taken(on: .items) + QueryField.taken(on: .eventStream) {
            #expect(words.contains(field.name(on: .parameter)), "serve --help does not name \(field.name(on: .parameter))")
        }
    }
}
