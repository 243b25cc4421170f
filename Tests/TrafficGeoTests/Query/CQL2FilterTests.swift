import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoStore
import TrafficGeoSupport

/// CQL2 text (`filter`, OGC API – Features Part 3): the grammar, its refusals, and its
/// translation into the query model: what the store is asked and what is checked on each incident.
@Suite("CQL2 filters: read, refused, translated into the query model")
struct CQL2FilterTests {
    private func parse(_ text: String) throws -> CQL2Expression { try CQL2Expression(text: text) }

    @Test func theGrammarOfClientsIsRead() throws {
        let road: (String) -> CQL2Expression = { .comparison(property: "road", .equal, .string($0)) }
        // AND binds tighter than OR; keywords in any case.
        #expect(try parse("road = 'A1' or road = 'A3' AnD road = 'A4'") == .or([road("A1"), .and([road("A3"), road("A4")])]))
        #expect(try parse("(road = 'A1' OR road = 'A3') AND road = 'A4'") == .and([.or([road("A1"), road("A3")]), road("A4")]))
        #expect(try parse("NOT road = 'A1'") == .not(road("A1")))
        #expect(try parse("'A1' = road") == road("A1"), "a literal first is the comparison turned round")
        #expect(try parse("0.5 < confidence") == .comparison(property: "confidence", .greater, .number(0.5)))
        #expect(try parse("title LIKE 'O''Hare%'") == .like(property: "title", pattern: "O'Hare%"))
        #expect(try parse("title NOT LIKE 'x%'") == .not(.like(property: "title", pattern: "x%")))
        #expect(try parse("\"road\" IN ('A1', 'A3')") == .isIn(property: "road", [.string("A1"), .string("A3")]))
        #expect(try parse("road NOT IN ('A1')") == .not(.isIn(property: "road", [.string("A1")])))
        #expect(try parse("road IS NOT NULL") == .not(.isNull(property: "road")))
        #expect(try parse("confidence BETWEEN 0.2 AND 0.8")
                == .and([.comparison(property: "confidence", .greaterOrEqual, .number(0.2)), .comparison(property: "confidence", .lessOrEqual, .number(0.8))]))
        #expect(try parse("updated >= TIMESTAMP('2025-05-19T04:06:00Z')") == .comparison(property: "updated", .greaterOrEqual, .time("2025-05-19T04:06:00Z")))
        #expect(try parse("S_INTERSECTS(geometry, BBOX(170, -20, -170, -10))")
                == .intersects(property: "geometry", .box(LonLatBox(west: 170, south: -20, east: -170, north: -10))))
        #expect(try parse("s_intersects(geometry,BBOX(1,2,0,3,4,9))") == .intersects(property: "geometry", .box(LonLatBox(west: 1, south: 2, east: 3, north: 4))))
        let square = [(6.0, 50.0), (8, 50), (8, 51), (6, 51), (6, 50)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        #expect(try parse("S_INTERSECTS(geometry, POLYGON((6 50, 8 50, 8 51, 6 51, 6 50)))") == .intersects(property: "geometry", .polygons([[square]])))
        #expect(try parse("TRUE AND NOT FALSE") == .and([.constant(true), .not(.constant(false))]))
        // 32 levels, as docs/serve.md allows.
        _ = try parse(String(repeating: "(", count: 32) + "road = 'A1'" + String(repeating: ")", count: 32))
    }

    @Test func mistakesAreRefusedWithWhereAndWhat() {
        let refusals: [(String, String)] = [
            ("road = 'A1", "a string is not closed (at character 8)"),
            ("(road = 'A1'", "expected ')' to close the '('"),
            ("road == 'A1'", "expected a value"),
            ("road = 'A1' road = 'A3'", "expected AND, OR or the end of the filter (at character 13)"),
            ("S_CROSSES(geometry, BBOX(0,0,1,1))", "S_CROSSES is not one of the functions served"),
            ("S_INTERSECTS(geometry, BBOX(0,1,1,0))", "is not west, south, east, north"),
            ("S_INTERSECTS(geometry, POINT(50 200))", "is not a longitude and a latitude"),
            ("S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1)))", "a ring needs at least four positions"),
            ("road = 'A1' AND", "expected a property's name"),
            ("road ; 'A1'", "';' has no meaning here"),
            (String(repeating: "(", count: 40) + "road = 'A1'" + String(repeating: ")", count: 40), "nests deeper than 32 levels"),
            (String(repeating: "(", count: 33) + "road = 'A1'" + String(repeating: ")", count: 33), "nests deeper than 32 levels"),
            (String(repeating: "NOT ", count: 40) + "road = 'A1'", "nests deeper than 32 levels"),
            ("road = '" + String(repeating: "x", count: 20_000) + "'", "at most 16384"),
        ]
        for (text, words) in refusals {
            #expect(throws: CQL2SyntaxError.self, "\(text.prefix(60))") { try parse(text) }
            do { _ = try parse(text) } catch { #expect("\(error)".contains(words), "\(text.prefix(60)): \(error)") }
        }
    }

    @Test func likePatternsMatchWithoutBacktracking() {
        #expect(CQL2LikePattern("A%").matches("A3 | Köln"))
        #expect(!CQL2LikePattern("A%").matches("B3"))
        #expect(CQL2LikePattern("A_").matches("A3") && !CQL2LikePattern("A_").matches("A33"))
        #expect(CQL2LikePattern("%Köln%").matches("A3 | Köln-Mülheim"))
        #expect(!CQL2LikePattern("%köln%").matches("A3 | Köln-Mülheim"), "case counts, as CQL2's LIKE")
        #expect(CQL2LikePattern("100\\%").matches("100%") && !CQL2LikePattern("100\\%").matches("1000"))
        #expect(CQL2LikePattern("").matches("") && !CQL2LikePattern("").matches("x"))
        // A pattern that backtracking would take exponential time on.
        let text = String(repeating: "a", count: 2_000)
        let start = ContinuousClock.now
        #expect(!CQL2LikePattern(String(repeating: "%a", count: 60) + "%b").matches(text))
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    private func translate(_ text: String, asked: QueryText = QueryText(), hasBox: Bool = false) throws -> CQL2Question {
        try CQL2Question(CQL2Expression(text: text), asked: asked, base: try asked.filter(), hasBox: hasBox)
    }

    @Test func whatTheStoreCanAnswerIsAskedOfIt() throws {
        let q = try translate("road = 'A3' AND category IN ('roadworks','accident') AND severity >= 'high' AND source = 'nrw' "
                              + "AND updated >= TIMESTAMP('2025-05-19T04:06:00Z') AND S_INTERSECTS(geometry, BBOX(6,50,8,51))")
        #expect(q.remainder == nil)
        #expect(q.box == LonLatBox(west: 6, south: 50, east: 8, north: 51))
        let filter = try q.asked.filter()
        #expect(filter.roads == ["A3"] && filter.categories == [.roadworks, .accident] && filter.minSeverity == .high && filter.source == "nrw")
        #expect(filter.since == TimestampParser.parse("2025-05-19T04:06:00Z"))
        // A number is the field's text without an exponent (the model's numbers refuse them).
        #expect(try translate("confidence >= 0.00001").asked.single(.minConfidence) == "0.00001")
        // One field's alternatives are its list, asked of the store.
        let either = try translate("road = 'A1' OR road = 'M25' OR road IN ('I-25')")
        #expect(either.remainder == nil && either.asked.list(.road) == ["A1", "M25", "I-25"])
        // What the store cannot answer is checked on each incident: a second condition on one
        // field, OR across fields, NOT, LIKE, a polygon (its bounds are asked).
        let rest = try translate("road = 'A1' AND road = 'A3' AND (category = 'accident' OR severity >= 'high') AND NOT source = 'x' AND title LIKE 'A%' "
                                 + "AND S_INTERSECTS(geometry, POLYGON((6 50, 8 50, 7 51, 6 50)))")
        #expect(rest.asked.list(.road) == ["A1"])
        #expect(rest.box == LonLatBox(west: 6, south: 50, east: 8, north: 51))
        guard case let .all(parts)? = rest.remainder else { Issue.record("\(String(describing: rest.remainder))"); return }
        #expect(parts.count == 5)
        // A field the question already asks is checked, not asked twice; so is a second box.
        let asked = try translate("road = 'A3' AND S_INTERSECTS(geometry, BBOX(6,50,8,51))", asked: { var t = QueryText(); t.add(.road, "A1"); return t }(), hasBox: true)
        #expect(asked.asked.list(.road) == ["A1"] && asked.box == nil)
        guard case let .all(both)? = asked.remainder else { Issue.record("\(String(describing: asked.remainder))"); return }
        #expect(both.count == 2)
    }

    @Test func meaningsAreTheModelsAndMistakesAreNamed() {
        let refusals: [(String, String)] = [
            ("colour = 'red'", "'colour' is not a queryable property: one of geometry, road"),
            ("road < 'A3'", "road does not take <"),
            ("road = 'Haupt;straße'", "road 'Haupt;straße' is not a road reference"),
            ("category = 'flood'", "category 'flood' is not one of"),
            ("severity >= 'huge'", "severity 'huge' is not one of lowest, low, medium, high, highest"),
            ("confidence > 2", "confidence is compared with a number from 0 to 1"),
            ("confidence > 'high'", "confidence is compared with a number"),
            ("updated > TIMESTAMP('yesterday')", "'yesterday' is not an RFC 3339 time"),
            ("updated LIKE '2025%'", "updated does not take LIKE"),
            ("S_INTERSECTS(road, BBOX(0,0,1,1))", "S_INTERSECTS takes geometry, not road"),
            ("road IN (" + (1...70).map { "'A\($0)'" }.joined(separator: ",") + ")", "at most 64"),
        ]
        for (text, words) in refusals {
            do {
                _ = try translate(text)
                Issue.record("\(text) was taken")
            } catch {
                #expect("\(error)".contains(words), "\(text): \(error)")
            }
        }
    }

    private func stored(_ id: String, road: String?, category: IncidentCategory? = nil, severity: String? = nil, title: String = "t",
                        at p: Coordinate? = Coordinate(latitude: 50.5, longitude: 7), confidence: Double? = nil) -> StoredIncident {
        let source = confidence.map { PositionSource(kind: .geocoder, geocoder: "test", confidence: $0) }
        let incident = Incident(source: "s", id: id, title: title, updated: Date(timeIntervalSince1970: 1_750_000_000), road: road, category: category,
                                position: p, positionSource: source, properties: severity.map { ["severity": $0] } ?? [:])
        return StoredIncident(storeID: 1, incident: incident, firstSeen: Date(), lastChanged: Date())
    }

    @Test func theRemainderMeansWhatTheFieldsMean() throws {
        func passes(_ text: String, _ s: StoredIncident) throws -> Bool {
            let q = try translate(text)
            let asked = try q.asked.filter()
            return asked.matches(s) && (q.box.map { b in s.incident.position.map(b.contains) ?? false } ?? true) && (q.remainder?.matches(s) ?? true)
        }
        let a3 = stored("1", road: "A3", category: .roadworks, severity: "major", title: "A3 | Köln-Mülheim")
        let m25 = stored("2", road: "M25", category: .accident, severity: "minor", at: Coordinate(latitude: 51.5, longitude: -0.1))
        let geocoded = stored("3", road: nil, confidence: 0.4)
        #expect(try passes("road = 'a 3'", a3) && !passes("road = 'a 3'", m25), "a road reference in any spelling, as --road")
        #expect(try passes("NOT road = 'A3'", m25) && !passes("NOT road = 'A3'", a3))
        #expect(try passes("road = 'A3' OR category = 'accident'", m25) && passes("road = 'A3' OR category = 'accident'", a3))
        #expect(try !passes("road = 'A3' OR category = 'accident'", geocoded))
        #expect(try passes("severity > 'medium'", a3) && !passes("severity > 'medium'", m25))
        #expect(try passes("severity < 'medium'", m25) && !passes("severity < 'medium'", a3))
        #expect(try !passes("severity < 'medium'", geocoded), "no severity: no comparison holds")
        #expect(try passes("severity = 'high'", a3) && !passes("severity = 'highest'", a3))
        #expect(try passes("confidence < 0.5", geocoded) && !passes("confidence >= 0.5", geocoded))
        #expect(try passes("confidence >= 0.5", a3), "a feed's position counts as sure, as --min-confidence")
        #expect(try passes("title LIKE '%Köln%'", a3) && !passes("title LIKE '%Köln%'", m25))
        #expect(try passes("road IS NULL", geocoded) && !passes("road IS NULL", a3))
        #expect(try passes("updated = TIMESTAMP('2025-06-15T15:06:40Z')", a3) && !passes("updated > TIMESTAMP('2025-06-15T15:06:40Z')", a3))
        #expect(try passes("updated <= TIMESTAMP('2025-06-15T15:06:40Z')", a3) && !passes("updated < TIMESTAMP('2025-06-15T15:06:40Z')", a3))
        #expect(try passes("id IN ('1','2')", a3) && !passes("id <> '1'", a3))
        // A triangle: its box holds both points, only one is inside it.
        let triangle = "S_INTERSECTS(geometry, POLYGON((6 50, 8 50, 6 52, 6 50)))"
        let outside = stored("4", road: "A3", at: Coordinate(latitude: 51.8, longitude: 7.8))
        #expect(try passes(triangle, a3) && !passes(triangle, outside))
        let withHole = "S_INTERSECTS(geometry, POLYGON((6 50, 8 50, 8 51, 6 51, 6 50), (6.9 50.4, 7.1 50.4, 7.1 50.6, 6.9 50.6, 6.9 50.4)))"
        #expect(try !passes(withHole, a3), "inside the hole is outside")
        #expect(try passes("S_INTERSECTS(geometry, BBOX(-1,51,0,52))", m25) && !passes("S_INTERSECTS(geometry, BBOX(-1,51,0,52))", a3))
        // The boundary belongs to a polygon as to a box, on every side; 180° is -180°.
        let corner = stored("5", road: "A3", at: Coordinate(latitude: 51, longitude: 7))
        for polygon in ["POLYGON((6 50, 7 50, 7 51, 6 51, 6 50))", "POLYGON((7 51, 8 51, 8 52, 7 52, 7 51))", "POLYGON((6 50, 8 50, 8 51, 6 51, 6 50))"] {
            #expect(try passes("S_INTERSECTS(geometry, \(polygon))", corner), "\(polygon)")
        }
        let dateLine = stored("6", road: nil, at: Coordinate(latitude: -17, longitude: 180))
        #expect(try passes("S_INTERSECTS(geometry, POLYGON((-180 -18, -179 -18, -179 -16, -180 -16, -180 -18)))", dateLine))
        #expect(try passes("S_INTERSECTS(geometry, POINT(-180 -17))", dateLine))
        // confidence > 0: a geocode of any confidence; nothing below 0.
        #expect(try passes("confidence > 0", geocoded) && !passes("confidence < 0", geocoded))
        // An event's feed and id are its reports' too, for LIKE as for =.
        var event = stored("7", road: "A1")
        event.role = .event
        event.memberReports = [ReportReference(storeID: 9, source: "nrw-feed", id: "r-9", updated: nil, positionSource: nil)]
        #expect(try passes("source LIKE 'nrw%'", event) && passes("source = 'nrw-feed'", event) && passes("id = 'r-9'", event))
    }

    /// A new-user trial found `delay <> 5` and `NOT category = 'roadworks'` passing incidents
    /// without a delay or a category, and `confidence = 1` passing every feed position that
    /// `confidence IS NULL` passed too. A comparison with what the incident lacks is unknown,
    /// and so is its negation, as in SQL; a feed's position is above every confidence, equal to none.
    @Test func aMissingValueIsUnknownAsInSQL() throws {
        func passes(_ text: String, _ s: StoredIncident) throws -> Bool {
            let q = try translate(text)
            return try q.asked.filter().matches(s) && (q.remainder?.matches(s) ?? true)
        }
        let bare = stored("1", road: nil)                       // a feed's position, nothing else
        let unplaced = stored("2", road: nil, at: nil)
        let roadworks = stored("3", road: "A3", category: .roadworks, severity: "major")
        let geocoded = stored("4", road: "A1", confidence: 1)
        for filter in ["category <> 'roadworks'", "NOT category = 'roadworks'", "road <> 'A3'", "NOT road = 'A3'",
                       "severity <> 'high'", "NOT severity >= 'high'", "NOT road LIKE 'A%'", "NOT title = 'x' AND NOT road = 'A3'"] {
            #expect(try !passes(filter, bare), "\(filter): no such property, so unknown")
        }
        var delayed = stored("5", road: "A3")
        delayed.incident.properties["delay_minutes"] = "15"
        #expect(try !passes("delay <> 5", bare) && !passes("NOT delay = 5", bare) && passes("delay IS NULL OR delay <> 5", bare))
        #expect(try passes("delay <> 5", delayed) && !passes("NOT delay = 15", delayed) && passes("NOT delay < 10", delayed))
        #expect(try passes("category IS NULL OR category <> 'roadworks'", bare))
        #expect(try passes("NOT (road = 'A3' AND title = 'x')", bare), "false AND unknown is false: its NOT is true")
        #expect(try !passes("NOT (road = 'A3' OR title = 't')", bare), "unknown OR true is true")
        #expect(try passes("category <> 'accident'", roadworks) && !passes("NOT category = 'roadworks'", roadworks))
        #expect(try !passes("NOT S_INTERSECTS(geometry, BBOX(0,0,1,1))", unplaced) && passes("NOT S_INTERSECTS(geometry, BBOX(0,0,1,1))", bare))
        // Confidence: a feed's position passes >, >=, <> and IS NULL; = 1 is a geocode's.
        #expect(try passes("confidence IS NULL", bare) && !passes("confidence IS NULL", geocoded))
        #expect(try !passes("confidence = 1", bare) && passes("confidence = 1", geocoded))
        #expect(try !passes("confidence <= 1", bare) && passes("confidence <= 1", geocoded))
        #expect(try passes("confidence <> 1", bare) && !passes("confidence <> 1", geocoded))
        #expect(try passes("confidence > 0.9", bare) && passes("NOT confidence < 0.5", bare))
        #expect(try passes("confidence IS NULL", unplaced) && !passes("confidence = 1", unplaced), "no position: no geocoder's confidence")
        // A feed's severity word off the scale is none: < and NOT >= agree, and IS NULL says so.
        let offScale = stored("6", road: "A3", severity: "unknown")
        for filter in ["severity < 'high'", "NOT severity >= 'high'", "severity <> 'medium'", "NOT severity = 'medium'", "severity >= 'lowest'",
                       "severity IS NOT NULL"] {
            #expect(try !passes(filter, offScale), "\(filter)")
        }
        #expect(try passes("severity IS NULL", offScale) && passes("severity IS NULL OR severity < 'high'", offScale))
        #expect(try passes("severity < 'high'", stored("7", road: "A3", severity: "minor")))
    }
}
