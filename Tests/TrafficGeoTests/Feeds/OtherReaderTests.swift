import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoOutput
@testable import TrafficGeoQuery
@testable import TrafficGeoSupport

@Suite("RSS, Autobahn JSON, GeoJSON and CSV feeds")
struct OtherReaderTests {
    /// The same message names the same road and kind in every format (issue 15, point 8).
    @Test func roadAndCategoryFromTheTextWhenTheTitleHasNone() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id><title>Baustelle</title>
            <summary>A1: km 441.67 --&gt; km 440.1 Wanderbaustelle</summary></entry></feed>
            """
        let fromAtom = try #require(try TestSupport.read(atom, format: .atom).incidents.first)
        #expect(fromAtom.road == "A1" && fromAtom.category == .roadworks)
        let json = #"{"warning":[{"identifier":"1","title":"Baustelle","description":["A1: km 441.67 --> km 440.1 Wanderbaustelle"]}]}"#
        let fromJSON = try #require(try TestSupport.read(json, format: .autobahn).incidents.first)
        #expect(fromJSON.road == fromAtom.road && fromJSON.category == fromAtom.category)
    }

    @Test func rssWithGeoRSSAndW3CGeo() throws {
        let feed = """
            <?xml version="1.0"?>
            <rss version="2.0" xmlns:georss="http://www.georss.org/georss" xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#">
            <channel><title>Channel</title><link>http://channel/</link>
              <item><title>A3 : Koeln - Frankfurt</title><link>http://x/1</link><guid>g1</guid>
                <description>&lt;b&gt;Unfall&lt;/b&gt; zwischen AK Koeln-Ost und AS Koeln-Dellbrueck</description>
                <pubDate>Sat, 18 Apr 2009 21:58:35 +0200</pubDate><georss:point>50.966 7.051</georss:point></item>
              <item><title>B54 : Siegen</title><guid>g2</guid><geo:lat>50.87</geo:lat><geo:long>8.02</geo:long>
                <pubDate>Sun, 19 Apr 2009 08:00:00 GMT</pubDate></item>
              <item><title>A1</title><guid>g3</guid><geo:Point><geo:lat>51.1</geo:lat><geo:long>7.1</geo:long></geo:Point></item>
              <item><title>bad</title><guid>g4</guid><georss:point>fifty seven</georss:point></item>
            </channel></rss>
            """
        let (incidents, skipped) = try TestSupport.read(feed)
        // An unreadable point loses the position, not the message (it is geocoded instead).
        #expect(incidents.map(\.id) == ["g1", "g2", "g3", "g4"])
        #expect(skipped.isEmpty)
        #expect(incidents[3].position == nil && incidents[3].properties[Incident.positionProblemProperty] != nil)
        #expect(incidents[0].position == Coordinate(latitude: 50.966, longitude: 7.051))
        #expect(incidents[0].summary == "Unfall zwischen AK Koeln-Ost und AS Koeln-Dellbrueck")
        #expect(incidents[0].category == .accident)
        #expect(incidents[0].updated == TimestampParser.parse("2009-04-18T19:58:35Z"))
        #expect(incidents[0].weblink == "http://x/1")
        #expect(incidents[1].position == Coordinate(latitude: 50.87, longitude: 8.02))
        #expect(incidents[1].road == "B54")
        #expect(incidents[2].position == Coordinate(latitude: 51.1, longitude: 7.1))
    }

    /// Atom and RSS are both XML: the one asked for on the other read nothing and said nothing
    /// (and a snapshot of it ended every incident of the source). Now refused, by its root; so
    /// is an XML feed read as DATEX II, in the same words.
    @Test func atomAskedForOnRSSAndTheOtherWayRoundIsRefused() throws {
        let rss = #"<?xml version="1.0"?><rss version="2.0"><channel><item><title>A1</title><guid>g1</guid></item></channel></rss>"#
        let datex = #"<d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0"><payloadPublication/></d2LogicalModel>"#
        for (text, format, words) in [(rss, FeedFormat.atom, "root is <rss>, not <feed>"),
                                      (AtomReaderTests.seedFeed, .rss, "root is <feed>, not <rss>"),
                                      (datex, .atom, "root is <d2LogicalModel>, not <feed>"),
                                      // (An Atom link's type="text/html" was taken for a DATEX II publication type.)
                                      (AtomReaderTests.seedFeed, .datex2, "root is <feed>, not a DATEX II one")] {
            let error = try #require(throws: FeedError.self) { try TestSupport.read(text, format: format) }
            #expect(error.code == .malformed && error.entriesRead == 0 && "\(error)".contains(words), "\(error)")
        }
        // Each read as itself, and their empty forms are feeds with nothing on.
        #expect(try TestSupport.read(rss, format: .rss).incidents.count == 1)
        #expect(try TestSupport.read(AtomReaderTests.seedFeed, format: .atom).incidents.count == 1)
        #expect(try TestSupport.read(#"<feed xmlns="http://www.w3.org/2005/Atom"><title>quiet</title></feed>"#, format: .atom).incidents.isEmpty)
        #expect(try TestSupport.read(#"<rss version="2.0"><channel><title>quiet</title></channel></rss>"#, format: .rss).incidents.isEmpty)
        let rdf = #"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel/></rdf:RDF>"#
        #expect(try TestSupport.read(rdf, format: .rss).incidents.isEmpty)
    }

    /// The Autobahn API or GeoJSON asked for on another JSON document read nothing, exited 0,
    /// and a snapshot of it ended every incident of the source: refused, naming its members.
    @Test func autobahnOrGeoJSONAskedForOnAnotherJSONDocumentIsRefused() throws {
        let open511 = #"{"events":[{"id":"x","event_type":"INCIDENT"}],"meta":{}}"#
        let wzdx = #"{"feed_info":{"version":"4.2"},"type":"FeatureCollection","features":[]}"#
        for (text, format, words) in [(open511, FeedFormat.autobahn, "members are events, meta"), (wzdx, .autobahn, "members are features, feed_info, type"),
                                      (#"{"foo":1}"#, .autobahn, "no service's array"),
                                      (open511, .geojson, "no features array"), (#"{"foo":1}"#, .geojson, "members are foo")] {
            let error = try #require(throws: FeedError.self) { try TestSupport.read(text, format: format) }
            #expect(error.code == .malformed && error.entriesRead == 0 && "\(error)".contains(words), "\(error)")
        }
        // Answers with nothing on are not refused.
        for (text, format) in [(#"{"warning":[]}"#, FeedFormat.autobahn), ("[]", .autobahn), (wzdx, .geojson),
                               (#"{"type":"FeatureCollection","features":[]}"#, .geojson)] {
            #expect(try TestSupport.read(text, format: format).incidents.isEmpty)
        }
    }

    @Test func autobahnJSONIsDecodedLeniently() throws {
        let feed = """
            {"warning":[
              {"identifier":"w1","title":"A15 | Forst - Forst","subtitle":"Breslau -> Cottbus",
               "description":["Beginn: 19.05.25","A15: Breslau -> Cottbus, zwischen 0.1 km hinter Forst und 10.0 km vor AS Forst  Stockender Verkehr"],
               "coordinate":{"lat":"51.6668549980441","long":"14.7520434016589"},
               "extent":"51.666854998044066,14.752043401658948,51.66670911284121,14.733385613471697",
               "startTimestamp":"2025-05-19T04:06:00+02:00","abnormalTrafficType":"QUEUING_TRAFFIC","isBlocked":"false"},
              {"identifier":"w2","title":"A1 | X","coordinate":{"lat":50.5,"long":7.5},"extent":"7.5,50.5,7.6,50.6","description":"Unfall"},
              {"identifier":"w3","title":"A1 | Y","coordinate":{"lat":"north","long":7}},
              "not an object",
              {"identifier":"w5","title":"A2 | Z","point":"52.1,9.9"}
            ],
            "roadworks":[{"identifier":"r1","title":"A4 | Olpe","coordinate":{"lat":50.98,"long":7.86}}],
            "closure":[]}
            """
        let (incidents, skipped) = try TestSupport.read(feed)
        #expect(incidents.map(\.id) == ["w1", "w2", "w3", "w5", "r1"])
        #expect(skipped.map(\.index) == [4])
        #expect(incidents[2].position == nil && incidents[2].properties[Incident.positionProblemProperty] != nil)
        let w1 = incidents[0]
        #expect(w1.position == Coordinate(latitude: 51.6668549980441, longitude: 14.7520434016589))
        #expect(w1.segment?.count == 2)
        #expect(w1.segment?.last == Coordinate(latitude: 51.66670911284121, longitude: 14.733385613471697))
        #expect(w1.road == "A15")
        #expect(w1.category == .slowTraffic)  // the words say "Stockender Verkehr"
        #expect(w1.summary?.hasPrefix("Breslau -> Cottbus – Beginn") == true)
        #expect(w1.updated == TimestampParser.parse("2025-05-19T02:06:00Z"))
        // extent in lon,lat order is recognised from the coordinate.
        #expect(incidents[1].segment?.first == Coordinate(latitude: 50.5, longitude: 7.5))
        #expect(incidents[1].category == .accident)
        #expect(incidents[3].position == Coordinate(latitude: 52.1, longitude: 9.9))
        #expect(incidents[4].category == .roadworks)
        #expect(incidents[4].properties["service"] == "roadworks")
    }

    @Test func geoJSONPointsLinesAndBrokenFeatures() throws {
        let feed = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","id":"p1","geometry":{"type":"Point","coordinates":[6.96,50.94]},
               "properties":{"title":"A4 : Koeln - Olpe","description":"Falschfahrer","updated":"2025-01-01T10:00:00Z","lanes":2}},
              {"type":"Feature","geometry":{"type":"LineString","coordinates":[[7.0,51.0],[7.1,51.1]]},"properties":{"id":"l1","name":"A3"}},
              {"type":"Feature","id":"bad","geometry":{"type":"Point","coordinates":[200,50]},"properties":{}},
              {"type":"Feature","id":"poly","geometry":{"type":"Polygon","coordinates":[]},"properties":{}},
              {"type":"Feature","id":"nogeom","geometry":null,"properties":{"title":"somewhere"}}
            ]}
            """
        let (incidents, skipped) = try TestSupport.read(feed)
        // A polygon without coordinates places nothing: kept, with the reason, for the geocoder.
        #expect(incidents.map(\.id) == ["p1", "l1", "bad", "poly", "nogeom"])
        #expect(skipped.isEmpty)
        #expect(incidents[2].position == nil && incidents[2].properties[Incident.positionProblemProperty] != nil)
        #expect(incidents[3].position == nil && incidents[3].properties[Incident.positionProblemProperty] != nil)
        #expect(incidents[0].position == Coordinate(latitude: 50.94, longitude: 6.96))
        #expect(incidents[0].category == .wrongWayDriver)
        #expect(incidents[0].properties["lanes"] == "2")
        #expect(incidents[1].position == Coordinate(latitude: 51.0, longitude: 7.0))
        #expect(incidents[1].segment?.count == 2)
        #expect(incidents[4].position == nil)
    }

    @Test func csvWithHeaderQuotesAndSemicolons() throws {
        let csv = "id;title;summary;lat;lon;updated;extra\r\n1;A1 : X - Y;\"Stau; 3 km\";50.1;7.2;2025-05-19T04:06:00Z;e\r\n2;;;;;;\r\n3;A2;x;91;7;;\r\n4;A3;\"two\nlines\";50;8;;\r\n"
        let (incidents, skipped) = try TestSupport.read(csv)
        #expect(incidents.map(\.id) == ["1", "2", "3", "4"])
        #expect(skipped.isEmpty)
        #expect(incidents[2].position == nil)
        #expect(incidents[0].summary == "Stau; 3 km")
        #expect(incidents[0].position == Coordinate(latitude: 50.1, longitude: 7.2))
        #expect(incidents[0].properties["extra"] == "e")
        #expect(incidents[0].category == .queue)
        #expect(incidents[1].title == Incident.unknownTitle)
        #expect(incidents[3].summary == "two lines")
    }

    @Test func csvRowWithWrongFieldCountIsSkipped() throws {
        let (incidents, skipped) = try TestSupport.read("title,lat,lon\nA1,50,7\nA2,50\n")
        #expect(incidents.count == 1)
        #expect(skipped.count == 1)
        #expect(skipped[0].reason.contains("fields"))
    }

    @Test(arguments: [
        ("<?xml version=\"1.0\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">", FeedFormat.atom),
        ("\u{FEFF}<rss version=\"2.0\">", .rss),
        ("{\"warning\": []}", .autobahn),
        ("  {\"type\": \"FeatureCollection\", \"features\": []}", .geojson),
        ("title,lat,lon\n", .csv),
    ])
    func detectsTheFormat(head: String, expected: FeedFormat) {
        #expect(FeedFormat.detect(Data(head.utf8)) == expected)
    }

    @Test func unknownContentIsRefusedWithAHint() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write("just some words", name: "x", in: folder)
        #expect(throws: FeedError.self) { try FeedReading.format(of: FeedInput(localFile: url.path)) }
    }

    @Test func truncatedJSONIsReportedAfterTheGoodElements() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write("{\"warning\":[{\"identifier\":\"a\",\"title\":\"A1\"},{\"identifier\":\"b\",", name: "x.json", in: folder)
        var ids: [String] = []
        do {
            try FeedReading.reader(for: .autobahn).read(FeedInput(localFile: url.path), source: "t") { event in
                if case let .incident(i) = event { ids.append(i.id) }
            }
            Issue.record("expected a malformed-feed error")
        } catch let error as FeedError where error.code == .malformed {
            #expect(error.entriesRead == 1)
            #expect(error.reason?.contains("truncated") == true)
        }
        #expect(ids == ["a"])
    }
}
