import Testing
@testable import TrafficGeoFeeds
import Foundation
import TrafficGeoModel

/// Any GeoJSON geometry places its feature (`GeoJSONGeometry`): lines by their first point,
/// areas by a point on their surface with their outline kept; nothing is skipped for its shape.
@Suite("Feature geometry: every GeoJSON type places its incident")
struct FeatureGeometryTests {
    static func feature(_ geometry: String, id: String = "f") -> String {
        #"{"type": "Feature", "id": "\#(id)", "geometry": \#(geometry), "properties": {"title": "Roadworks on the A4"}}"#
    }

    static func read(_ geometries: [String]) throws -> [Incident] {
        let features = geometries.enumerated().map { feature($1, id: "f\($0)") }.joined(separator: ",")
        return try TestSupport.read(#"{"type": "FeatureCollection", "features": [\#(features)]}"#, name: "g.geojson").incidents
    }

    @Test func aMultiLineStringStartsAtItsFirstPointAndIsTheSegment() throws {
        let i = try Self.read([#"{"type": "MultiLineString", "coordinates": [[[24.47, 60.97], [24.46, 60.98]], [[24.46, 60.98], [24.45, 60.99]]]}"#])[0]
        #expect(i.position == Coordinate(latitude: 60.97, longitude: 24.47))
        #expect(i.segment?.count == 4)
        #expect(i.segment?.last == Coordinate(latitude: 60.99, longitude: 24.45))
    }

    /// A C-shaped works area: its centroid lies outside it, in the gap; the point on the surface
    /// lies inside, and the outline is the outer ring.
    @Test func aPolygonIsPlacedOnItsSurfaceWithItsOutline() throws {
        // Away from (0, 0), which feeds write for "no position".
        let ring = "[[10,10],[13,10],[13,11],[11,11],[11,12],[13,12],[13,13],[10,13],[10,10]]"
        let i = try Self.read([#"{"type": "Polygon", "coordinates": [\#(ring)]}"#])[0]
        let p = try #require(i.position)
        let points = [(10.0, 10.0), (13, 10), (13, 11), (11, 11), (11, 12), (13, 12), (13, 13), (10, 13), (10, 10)].map { (x: $0.0, y: $0.1) }
        #expect(GeoJSONGeometry.contains(points, (p.longitude, p.latitude)), "\(p) is not inside the C")
        #expect(i.segment?.count == 9)
        #expect(i.positionSource?.kind == .feed)
    }

    @Test func aMultiPolygonIsPlacedOnItsLargestPart() throws {
        let small = "[[[10,10],[10.1,10],[10.1,10.1],[10,10.1],[10,10]]]"
        let large = "[[[20,20],[22,20],[22,22],[20,22],[20,20]]]"
        let i = try Self.read([#"{"type": "MultiPolygon", "coordinates": [\#(small), \#(large)]}"#])[0]
        let p = try #require(i.position)
        #expect((20...22).contains(p.longitude) && (20...22).contains(p.latitude))
        #expect(i.segment?.first == Coordinate(latitude: 20, longitude: 20))
    }

    /// Across the antimeridian the ring is one shape, not one that spans the globe.
    @Test func aPolygonAcrossTheAntimeridian() throws {
        let i = try Self.read([#"{"type": "Polygon", "coordinates": [[[179,-17],[-179,-17],[-179,-16],[179,-16],[179,-17]]]}"#])[0]
        let p = try #require(i.position)
        #expect(abs(p.longitude) > 178.9 && (-17 ... -16).contains(p.latitude), "\(p)")
    }

    @Test func aGeometryCollectionByItsFirstMemberThatPlaces() throws {
        let i = try Self.read([#"{"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": "x"}, {"type": "Point", "coordinates": [7, 50]}]}"#])[0]
        #expect(i.position == Coordinate(latitude: 50, longitude: 7))
    }

    /// A geometry that places nothing keeps the feature, with the reason, for the geocoder.
    @Test func anUnplaceableGeometryKeepsTheFeature() throws {
        let incidents = try Self.read([#"{"type": "Circle", "coordinates": [7, 50]}"#, #"{"type": "Point", "coordinates": [7, 95]}"#])
        #expect(incidents.count == 2)
        #expect(incidents.allSatisfy { $0.position == nil && $0.properties[Incident.positionProblemProperty] != nil })
    }

    /// WZDx is GeoJSON: its readers share the rule.
    @Test func aWZDxPolygonIsPlacedOnItsSurface() throws {
        let feed = """
        {"feed_info": {"version": "4.1"}, "type": "FeatureCollection", "features": [{"type": "Feature", "id": "w1",
          "geometry": {"type": "Polygon", "coordinates": [[[0,0],[3,0],[3,1],[1,1],[1,2],[3,2],[3,3],[0,3],[0,0]]]},
          "properties": {"core_details": {"event_type": "work-zone", "data_source_id": "d", "road_names": ["I-87 Northway"], "direction": "unknown"}}}]}
        """
        let i = try #require(try TestSupport.read(feed, name: "w.geojson").incidents.first)
        let p = try #require(i.position)
        #expect(p != Coordinate(latitude: 0, longitude: 0))
        #expect(i.road == "I-87")
        #expect(i.title == "Work zone on I-87 Northway")
    }
}
