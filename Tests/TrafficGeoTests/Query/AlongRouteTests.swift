import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoTestSupport

/// "What is on my way": the incidents within a buffer of a route, in the order a driver meets
/// them (`RouteCourse`, `QueryEngine.along`), checked against a brute-force scan.
@Suite("along a route: which incidents, and in which order")
struct AlongRouteTests {
    static func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// A store holding `points` as incidents `p0`, `p1`, …
    static func store(_ points: [Coordinate], in folder: URL) throws -> SQLiteIncidentStore {
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let incidents = points.enumerated().map { i, p in
            Incident(source: "s", id: "p\(i)", title: "A1 : P\(i)", updated: Date(), road: "A1", category: .accident,
                     position: p, positionSource: PositionSource(kind: .feed))
        }
        _ = try store.ingest(source: "s", now: Date()) { emit in for i in incidents { try emit(.incident(i)) } }
        return store
    }

    static func ids(_ results: [QueryResult]) -> [String] { results.map(\.incident.id) }

    @Test func aMotorwayRouteAnswersInTheOrderTheDriverMeetsThem() throws {
        // Köln → Frankfurt, roughly the A3: points beside it, given out of order, and two away from it.
        let route = [Self.c(50.94, 6.96), Self.c(50.80, 7.20), Self.c(50.43, 7.83), Self.c(50.39, 8.06), Self.c(50.05, 8.57)]
        let points = [Self.c(50.40, 8.00), Self.c(50.93, 6.98), Self.c(50.60, 7.53), Self.c(50.06, 8.55), Self.c(50.6, 7.0), Self.c(51.5, 9.0)]
        let folder = TestSupport.temporaryDirectory()
        let engine = QueryEngine(store: try Self.store(points, in: folder))
        let course = RouteCourse(route)
        let met = try engine.along(course, buffer: 2_000)
        #expect(Self.ids(met) == ["p1", "p2", "p0", "p3"])
        let along = met.compactMap(\.alongRoute)
        #expect(along == along.sorted() && along.count == 4)
        #expect(met.allSatisfy { ($0.distance ?? .infinity) <= 2_000 && $0.bearing == nil })
        // The last one is near the end: its metres along are nearly the whole route's.
        #expect(abs(along[3] - course.length) < 3_000, "\(along[3]) of \(course.length)")
        #expect(course.length > 150_000 && course.length < 170_000)
    }

    @Test func aRouteAcrossTheAntimeridianIsOneLine() throws {
        // Fiji eastwards over 180°: 178° … 180° … -178°.
        let route = [Self.c(-17, 178.0), Self.c(-17, 179.6), Self.c(-17, -179.6), Self.c(-17, -178.0)]
        let points = [Self.c(-17.005, -178.5), Self.c(-17.005, 178.5), Self.c(-16.995, -179.9), Self.c(-16.995, 179.9), Self.c(-17.5, 179.9)]
        let folder = TestSupport.temporaryDirectory()
        let engine = QueryEngine(store: try Self.store(points, in: folder))
        let met = try engine.along(RouteCourse(route), buffer: 2_000)
        #expect(Self.ids(met) == ["p1", "p3", "p2", "p0"])
        // The corridor's boxes cross the antimeridian rather than span the world.
        let boxes = RouteCourse(route).searchBoxes(buffer: 2_000)
        #expect(boxes.contains { $0.west > $0.east })
        #expect(boxes.allSatisfy { $0.longitudeSpan < 10 })
        #expect(QueryArea.corridor(route: route, buffer: 2_000).corridorBounds.map { $0.west > $0.east && $0.longitudeSpan < 5 } == true)
    }

    @Test func aRouteThatTurnsBackMeetsAPointOnTheWayOut() throws {
        // East along 50°N for ~36 km, then back west along the same road.
        let route = [Self.c(50, 7.0), Self.c(50, 7.5), Self.c(50, 7.0)]
        let course = RouteCourse(route)
        let out = try #require(course.meet(Self.c(50.001, 7.2), within: 500))
        let outLeg = Geodesic.distance(from: Self.c(50, 7.0), to: Self.c(50, 7.2))
        #expect(abs(out.along - outLeg) < 50, "met on the way out (\(out.along) m), not on the way back")
        #expect(abs(out.offset - 111) < 2)
        // Near the turn: met once, at the turn.
        let turn = try #require(course.meet(Self.c(50, 7.499), within: 500))
        #expect(abs(turn.along - course.length / 2) < 200)
        #expect(course.meet(Self.c(50.1, 7.2), within: 500) == nil)
    }

    /// A work zone is met where the route reaches its line, not only near its start: a zone whose
    /// start is 5 km off the route but whose line crosses it is on the way, at the crossing.
    @Test func aSegmentThatTheRouteCrossesIsOnTheWay() throws {
        // The route runs north along 10°E; the zone runs west to east across it at 50.05°N,
        // starting 5 km east of the road; another zone lies 3 km east, parallel, never closer.
        let route = [Self.c(50.0, 10.0), Self.c(50.1, 10.0)]
        let crossing = [Self.c(50.05, 10.07), Self.c(50.05, 9.95)]
        let parallel = [Self.c(50.02, 10.042), Self.c(50.08, 10.042)]
        let course = RouteCourse(route)
        let met = try #require(course.meet(segment: crossing, within: 500))
        #expect(met.offset == 0)
        #expect(abs(met.along - Geodesic.distance(from: route[0], to: Self.c(50.05, 10.0))) < 30, "\(met.along)")
        #expect(course.meet(Self.c(50.05, 10.07), within: 500) == nil, "its start alone is off the route")
        #expect(course.meet(segment: parallel, within: 500) == nil)
        #expect(course.meet(segment: parallel, within: 3_500) != nil)

        let folder = TestSupport.temporaryDirectory()
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let zones = [("crossing", crossing), ("parallel", parallel)].map { id, line in
            Incident(source: "s", id: id, title: "Work zone", updated: Date(), road: "B27", category: .roadworks,
                     position: line[0], segment: line, positionSource: PositionSource(kind: .feed))
        }
        _ = try store.ingest(source: "s", now: Date()) { emit in for z in zones { try emit(.incident(z)) } }
        let along = try QueryEngine(store: store).along(course, buffer: 500)
        #expect(Self.ids(along) == ["crossing"] && along.first?.distance == 0)
    }

    /// Random routes and incidents: `along` holds exactly the incidents a scan of every one finds
    /// within the buffer (`QueryArea.distance`, the corridor a watch uses), in order along.
    @Test(arguments: [UInt64(1), 2, 3])
    func alongHoldsExactlyWhatAScanFinds(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        var route = [Self.c(Double.random(in: 45...55, using: &g), Double.random(in: 5...15, using: &g))]
        for _ in 0..<40 {
            let last = route.last!
            route.append(Self.c(last.latitude + Double.random(in: -0.05...0.05, using: &g), last.longitude + Double.random(in: -0.02...0.08, using: &g)))
        }
        let lats = route.map(\.latitude), lons = route.map(\.longitude)
        let points = (0..<3_000).map { _ in
            Self.c(Double.random(in: (lats.min()! - 0.1)...(lats.max()! + 0.1), using: &g), Double.random(in: (lons.min()! - 0.1)...(lons.max()! + 0.1), using: &g))
        }
        let folder = TestSupport.temporaryDirectory()
        let engine = QueryEngine(store: try Self.store(points, in: folder))
        let buffer = 3_000.0
        let met = try engine.along(RouteCourse(route), buffer: buffer)
        let scanned = Set(points.indices.filter { QueryArea.distance(from: points[$0], toRoute: route) <= buffer }.map { "p\($0)" })
        #expect(!scanned.isEmpty && Set(Self.ids(met)) == scanned && met.count == scanned.count)
        let along = met.compactMap(\.alongRoute)
        #expect(along == along.sorted())
    }

    @Test func routesAreReadFromGPXAndWKTAsFromGeoJSON() throws {
        let gpx = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
              <wpt lat="1" lon="1"><name>a place, not the line</name></wpt>
              <trk><name>A3</name><trkseg><trkpt lat="50.94" lon="6.96"><ele>50</ele></trkpt><trkpt lat="50.80" lon="7.20"/></trkseg>
              <trkseg><trkpt lat="50.43" lon="7.83"/></trkseg></trk>
            </gpx>
            """
        #expect(try GPXRoute.positions(in: Data(gpx.utf8)) == [Self.c(50.94, 6.96), Self.c(50.80, 7.20), Self.c(50.43, 7.83)])
        let planned = #"<gpx version="1.1"><rte><rtept lat="1.5" lon="2"/><rtept lat="3" lon="-4.25"/></rte></gpx>"#
        #expect(try GPXRoute.positions(in: Data(planned.utf8)) == [Self.c(1.5, 2), Self.c(3, -4.25)])
        #expect(try RouteLine.read(text: "LINESTRING (6.96 50.94, 7.2 50.8)", what: "route") == [Self.c(50.94, 6.96), Self.c(50.8, 7.2)])
        #expect(try RouteLine.read(text: "MULTILINESTRING ((1 2, 3 4), (5 6, 7 8))", what: "route").count == 4)
        #expect(try RouteLine.read(text: #"{"type":"LineString","coordinates":[[1,2],[3,4]]}"#, what: "route") == [Self.c(2, 1), Self.c(4, 3)])

        let folder = TestSupport.temporaryDirectory()
        let file = try TestSupport.write(gpx, name: "a3.gpx", in: folder)
        #expect(try RouteLine.read(path: file.path).count == 3)

        // What is refused, and said so.
        let hostile: [(String, String)] = [
            (#"<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY x SYSTEM "file:///etc/passwd">]><gpx><trk><trkseg><trkpt lat="1" lon="&x;"/></trkseg></trk></gpx>"#, "entity"),
            (#"<gpx><trk><trkseg><trkpt lat="91" lon="0"/><trkpt lat="0" lon="0"/></trkseg></trk></gpx>"#, "lat and lon"),
            (#"<gpx><trk><trkseg><trkpt lat="1" lon="0"/></trkseg></trk></gpx>"#, "at least two"),
            (#"<kml><trk/></kml>"#, "not a GPX"),
            (#"<gpx><trk><trkseg><trkpt lat="1" lon="0"/>"#, "GPX"),
        ]
        for (text, words) in hostile {
            #expect(throws: GPXRoute.Problem.self) { try GPXRoute.positions(in: Data(text.utf8)) }
            do { _ = try GPXRoute.positions(in: Data(text.utf8)) } catch { #expect("\(error)".contains(words), "\(error)") }
        }
        #expect(throws: RouteLine.Problem.self) { try RouteLine.read(text: "LINESTRING (1 2)", what: "route") }
        #expect(throws: RouteLine.Problem.self) { try RouteLine.read(text: "LINESTRING (1 200, 3 4)", what: "route") }
        #expect(throws: RouteLine.Problem.self) { try RouteLine.read(text: "POINT (1 2)", what: "route") }
    }
}
