import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoOutput
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoTestSupport

@Suite("Nearest and within-radius against a brute-force geodesic scan")
struct QueryEngineTests {
    /// A store of `count` random incidents: a third anywhere on Earth, a third near the
    /// antimeridian, a third near the poles, as GeoJSON points.
    static func makeStore(count: Int, seed: UInt64, in folder: URL) throws -> (SQLiteIncidentStore, [Coordinate]) {
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        return (store, try fill(store, count: count, seed: seed, in: folder))
    }

    /// Ingests the random incidents into `store`; returns their positions (incident `pN` at index N).
    static func fill(_ store: any IncidentStore, count: Int, seed: UInt64, in folder: URL) throws -> [Coordinate] {
        var generator = SplitMix64(seed: seed)
        var points: [Coordinate] = []
        var features: [String] = []
        for i in 0..<count {
            let p: Coordinate
            switch i % 3 {
            case 0: p = Coordinate(latitude: asin(Double.random(in: -1...1, using: &generator)) * 180 / .pi,
                                   longitude: Double.random(in: -180...180, using: &generator))
            case 1:
                var lon = Double.random(in: 178...182, using: &generator)
                if lon > 180 { lon -= 360 }
                p = Coordinate(latitude: Double.random(in: -60...60, using: &generator), longitude: lon)
            default: p = Coordinate(latitude: (Bool.random(using: &generator) ? 1 : -1) * Double.random(in: 87...90, using: &generator),
                                    longitude: Double.random(in: -180...180, using: &generator))
            }
            points.append(p)
            features.append("{\"type\":\"Feature\",\"id\":\"p\(i)\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(p.longitude),\(p.latitude)]},\"properties\":{\"title\":\"A\(i % 9 + 1) : P\(i)\",\"category\":\"\(i % 2 == 0 ? "accident" : "roadworks")\"}}")
        }
        let url = try TestSupport.write("{\"type\":\"FeatureCollection\",\"features\":[\n" + features.joined(separator: ",\n") + "]}", name: "points.geojson", in: folder)
        let summary = try FeedIngestor(store: store, sourceName: "points").ingest(FeedInput(localFile: url.path))
        #expect(summary.new == count && summary.skipped.isEmpty)
        return points
    }

    /// The boxes of `boundingBoxesEqualAScanOfEveryPoint`: across the antimeridian, at the poles,
    /// random sizes, and one with a point on its corner.
    static func testBoxes(seed: UInt64, corner: Coordinate) -> [LonLatBox] {
        var generator = SplitMix64(seed: seed)
        var boxes = [LonLatBox(west: 175, south: -10, east: -175, north: 10),      // across the antimeridian
                     LonLatBox(west: -180, south: 85, east: 180, north: 90),       // a polar cap (scanned)
                     LonLatBox(west: 10, south: 80, east: 40, north: 88.9),        // near a pole, wide
                     LonLatBox(west: 179, south: 0, east: 180, north: 1)]
        for _ in 0..<60 {
            let south = Double.random(in: -89...85, using: &generator), west = Double.random(in: -180...180, using: &generator)
            let size = [0.5, 3, 12, 29, 45][Int.random(in: 0..<5, using: &generator)]
            var east = west + size * Double.random(in: 0.2...1, using: &generator)
            if east > 180 { east -= 360 }
            boxes.append(LonLatBox(west: west, south: south, east: east, north: min(90, south + size * Double.random(in: 0.2...1, using: &generator))))
        }
        // Points on a box's edges are inside it.
        boxes.append(LonLatBox(west: corner.longitude, south: corner.latitude, east: min(180, corner.longitude + 1), north: min(90, corner.latitude + 1)))
        return boxes
    }

    static func queryPoints(seed: UInt64) -> [Coordinate] {
        var generator = SplitMix64(seed: seed)
        var result = [Coordinate(latitude: 0, longitude: 180), Coordinate(latitude: 0, longitude: -180),
                      Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: -90, longitude: 0),
                      Coordinate(latitude: 89.9, longitude: 179.99), Coordinate(latitude: 10, longitude: -179.999)]
        for _ in 0..<40 {
            result.append(Coordinate(latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator)))
        }
        return result
    }

    @Test func nearestEqualsBruteForce() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, points) = try Self.makeStore(count: 3000, seed: 11, in: folder)
        let engine = QueryEngine(store: store)
        for q in Self.queryPoints(seed: 12) {
            for k in [1, 10, 25] {
                let got = try engine.nearest(to: q, limit: k)
                let truth = points.enumerated()
                    .map { (id: "p\($0.offset)", d: Geodesic.distance(from: q, to: $0.element)) }
                    .sorted { $0.d != $1.d ? $0.d < $1.d : $0.id < $1.id }
                    .prefix(k)
                #expect(got.count == k)
                // Same distances in the same order (ids may swap only between exact ties).
                for (g, t) in zip(got, truth) {
                    #expect(abs(g.distance! - t.d) < 1e-6, "query \(q) k=\(k)")
                }
                #expect(Set(got.map(\.incident.id)) == Set(truth.map(\.id)) || zip(got, truth).allSatisfy { abs($0.distance! - $1.d) < 1e-6 })
            }
        }
    }

    @Test func withinEqualsBruteForceIncludingTheBoundary() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, points) = try Self.makeStore(count: 3000, seed: 21, in: folder)
        let engine = QueryEngine(store: store)
        for q in Self.queryPoints(seed: 22) {
            for radius in [50_000.0, 500_000, 2_000_000] {
                let got = try engine.within(radius: radius, of: q)
                let truth = Set(points.enumerated().filter { Geodesic.distance(from: q, to: $0.element) <= radius }.map { "p\($0.offset)" })
                #expect(Set(got.map(\.incident.id)) == truth, "query \(q) radius \(radius)")
                #expect(got.map(\.distance!) == got.map(\.distance!).sorted())
                // The lean path of batch queries gives the same answers.
                let lean = try engine.withinNeighbours(radius: radius, of: q)
                #expect(lean.map(\.id) == got.map(\.incident.id) && lean.map(\.distance) == got.map(\.distance!))
            }
            // The radius equal to the distance of a point includes it; a millimetre less excludes it.
            let nearest = try engine.nearest(to: q, limit: 5)
            let edge = nearest[4]
            #expect(try engine.within(radius: edge.distance!, of: q).contains { $0.incident.id == edge.incident.id })
            #expect(!(try engine.within(radius: edge.distance! - 0.001, of: q).contains { $0.incident.id == edge.incident.id }))
        }
    }

    @Test func boundingBoxesEqualAScanOfEveryPoint() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, points) = try Self.makeStore(count: 3000, seed: 31, in: folder)
        let engine = QueryEngine(store: store)
        let boxes = Self.testBoxes(seed: 32, corner: points[0])
        for box in boxes {
            var got: [String] = []
            try engine.inBoundingBox(west: box.west, south: box.south, east: box.east, north: box.north) { got.append($0.incident.id) }
            let truth = points.enumerated().filter { box.contains($0.element) }.map { "p\($0.offset)" }
            #expect(Set(got) == Set(truth), "\(box)")
            #expect(got.count == Set(got).count)
        }
    }

    @Test func maxDistanceAndFiltersNarrowTheNearest() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, points) = try Self.makeStore(count: 900, seed: 31, in: folder)
        let engine = QueryEngine(store: store)
        let q = Coordinate(latitude: 0, longitude: 179.5)
        let limited = try engine.nearest(to: q, limit: 50, maxDistance: 300_000)
        let truth = points.filter { Geodesic.distance(from: q, to: $0) <= 300_000 }.count
        #expect(limited.count == min(50, truth))
        #expect(limited.allSatisfy { $0.distance! <= 300_000 })
        let accidents = try engine.nearest(to: q, limit: 10, filter: IncidentFilter(categories: [.accident]))
        #expect(accidents.count == 10 && accidents.allSatisfy { $0.incident.category == .accident })
        let onA3 = try engine.nearest(to: q, limit: 5, filter: IncidentFilter(road: "A 3"))
        #expect(onA3.allSatisfy { $0.incident.road == "A3" } && onA3.count == 5)
    }
}
