import Testing
@testable import TrafficGeoFeeds
import Foundation
import TrafficGeoModel

/// Waze's Closure and Incident Feed Specification (`WazeCIFSReader`), JSON and XML, CIFS 1's
/// flat fields and CIFS 2's `location` object.
@Suite("Waze CIFS feeds")
struct WazeCIFSReaderTests {
    static let json = """
    {"incidents": [
      {"id": "C-1", "type": "ROAD_CLOSED", "subtype": "ROAD_CLOSED_CONSTRUCTION", "description": "Full closure for resurfacing",
       "location": {"street": "Main Street", "polyline": "40.7128 -74.0060 40.7138 -74.0050", "direction": "BOTH_DIRECTIONS"},
       "starttime": "2026-03-01T08:00:00-05:00", "endtime": "2026-03-09T18:00:00-05:00", "updatetime": "2026-02-20T10:00:00-05:00"},
      {"id": "C-1", "type": "ROAD_CLOSED", "subtype": "ROAD_CLOSED_CONSTRUCTION",
       "location": {"street": "Elm Street", "polyline": "40.7140 -74.0048 40.7150 -74.0040", "direction": "BOTH_DIRECTIONS"},
       "starttime": "2026-03-01T08:00:00-05:00", "endtime": "2026-03-09T18:00:00-05:00"},
      {"id": "A-7", "type": "ACCIDENT", "street": "US-9", "polyline": "40.80 -73.95 40.80 -73.95", "direction": "ONE_DIRECTION",
       "starttime": "2026-03-02T07:15:00Z", "subtype": "unknown"},
      {"type": "HAZARD", "polyline": "40.8 -73.9 40.81 -73.91"}
    ]}
    """

    @Test func jsonIncidentsOneByIdWithTheirStreets() throws {
        let (incidents, skipped) = try TestSupport.read(Self.json, name: "cifs.json")
        #expect(skipped.count == 1, "the incident without an id")
        #expect(incidents.map(\.id) == ["C-1", "A-7"])
        let closure = incidents[0]
        #expect(closure.title == "Road closed (construction) on Main Street")
        #expect(closure.category == .closure)
        #expect(closure.position == Coordinate(latitude: 40.7128, longitude: -74.0060))
        #expect(closure.segment?.count == 2)
        #expect(closure.road == "Main Street")
        #expect(closure.otherRoads == ["Elm Street"])
        #expect(closure.properties["direction"] == "both directions")
        #expect(closure.expires == TimestampParserForTests.date("2026-03-09T23:00:00Z"))
        let crash = incidents[1]
        #expect(crash.title == "Accident on US-9")
        #expect(crash.road == "US-9")
        #expect(crash.segment == nil, "a point written twice is a point")
        #expect(crash.category == .accident)
    }

    @Test func xmlIncidents() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <incidents xmlns="http://www.waze.com/cifs">
          <incident id="X-1">
            <type>CONSTRUCTION</type>
            <description>Lane closed</description>
            <location><street>Route 9A</street><polyline>41.0 -73.8 41.01 -73.81</polyline><direction>ONE_DIRECTION</direction></location>
            <starttime>2026-04-01T06:00:00Z</starttime>
          </incident>
        </incidents>
        """
        let incidents = try TestSupport.read(xml, name: "cifs.xml").incidents
        #expect(incidents.count == 1)
        #expect(incidents.first?.id == "X-1")
        #expect(incidents.first?.category == .roadworks)
        #expect(incidents.first?.position == Coordinate(latitude: 41.0, longitude: -73.8))
    }

    @Test func detectedFromContent() {
        #expect(FeedFormat.detect(Data(Self.json.utf8)) == .waze)
        #expect(FeedFormat.detect(Data("<incidents><incident id=\"1\"/></incidents>".utf8)) == .waze)
    }

    /// A document trafficgeo cannot read is refused with what it is, and what it reads; a
    /// GIS document (KML) is one GDAL reads.
    @Test func anUnknownDocumentIsNamedInTheRefusal() {
        let kml = "<?xml version=\"1.0\"?><kml xmlns=\"http://www.opengis.net/kml/2.2\"><Document/></kml>"
        #expect(FeedFormat.detect(Data(kml.utf8)) == .gis)
        let other = "<?xml version=\"1.0\"?><evts><evt id=\"1\"/></evts>"
        #expect(FeedFormat.detect(Data(other.utf8)) == .records, "any other XML is tried for records")
        #expect { try TestSupport.read(other) } throws: { ($0 as? FeedError)?.code == .unknownFormat && "\($0)".contains("no repeated records") }
        #expect(FeedFormat.describeContent(Data(other.utf8)) == "an XML document whose root is <evts>")
        #expect(FeedFormat.describeContent(Data(#"{"response": {"events": 3}, "status": "ok"}"#.utf8)) == "JSON whose top-level members are `response`, `status`")
        let error = FeedError.unknownFormat("f.xml", seen: FeedFormat.describeContent(Data(other.utf8)))
        #expect(error.description.contains("<evts>") && error.description.contains("Waze CIFS") && error.description.contains("gis"), "\(error)")
    }
}

enum TimestampParserForTests {
    static func date(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }
}
