import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSQLite
@testable import TrafficGeoSupport

@Suite("Atom feeds (freiefahrt.info shape)")
struct AtomReaderTests {
    /// The reference freiefahrt.info entry (docs/architecture.md, feed fields), verbatim in its feed.
    static let seedFeed = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <updated>2009-04-18T22:00:07.168Z</updated>
          <link href="http://www.freiefahrt.info/lmst.de_DE.xml" rel="self"/>
          <title>Aktuelle Verkehrslage fuer Deutschland</title>
          <entry>
            <updated>2009-04-18T21:58:35Z</updated>
            <expires>2009-04-18T23:58:00Z</expires>
            <title>A4 : Koeln - Olpe</title>
            <id>http://www.freiefahrt.info/?id=83FBBF15-B187-452a-B66E-E3B4FCC408D2</id>
            <link type="text/html" rel="alternate" href="http://www.freiefahrt.info/?id=83FBBF15-B187-452a-B66E-E3B4FCC408D2"/>
            <summary>Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen! Nicht ueberholen! Fahren
              Sie bitte aeusserst rechts!</summary>
            <rights>(c) OneStepAhead</rights>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><div><img src="http://www.freiefahrt.info/images/icons/falschfahrer.png"/></div>
              A4: Koeln - Olpe<br/>Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen!</div></content>
          </entry>
        </feed>
        """

    @Test func readsTheSeedEntry() throws {
        let (incidents, skipped) = try TestSupport.read(Self.seedFeed)
        #expect(skipped.isEmpty)
        try #require(incidents.count == 1)
        let i = incidents[0]
        #expect(i.id == "http://www.freiefahrt.info/?id=83FBBF15-B187-452a-B66E-E3B4FCC408D2")
        #expect(i.title == "A4 : Koeln - Olpe")
        #expect(i.summary == "Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen! Nicht ueberholen! Fahren Sie bitte aeusserst rechts!")
        #expect(i.weblink == "http://www.freiefahrt.info/?id=83FBBF15-B187-452a-B66E-E3B4FCC408D2")
        #expect(i.iconURL == "http://www.freiefahrt.info/images/icons/falschfahrer.png")
        #expect(i.updated == TimestampParser.parse("2009-04-18T21:58:35Z"))
        #expect(i.expires == TimestampParser.parse("2009-04-18T23:58:00Z"))
        #expect(i.road == "A4")
        #expect(i.category == .wrongWayDriver)
        #expect(i.pinColor == .red)
        #expect(i.position == nil)
        #expect(i.properties["rights"] == "(c) OneStepAhead")
    }

    @Test func feedLevelTitleAndLinkDoNotLeakIntoEntries() throws {
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Feed title</title><link href="http://feed/self" rel="self"/>
            <link href="http://feed/alt"/>
            <entry><id>e1</id><updated>2009-04-18T21:58:35.5+02:00</updated></entry></feed>
            """
        let (incidents, _) = try TestSupport.read(feed)
        try #require(incidents.count == 1)
        #expect(incidents[0].title == Incident.unknownTitle)
        #expect(incidents[0].weblink == nil)
        #expect(incidents[0].updated == Date(timeIntervalSince1970: 1240084715.5))
    }

    @Test func linkWithoutRelIsAlternateAndCarriesCoordinates() throws {
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>a</id><title>A1 : X - Y</title><link rel="self" href="http://x/self"/><link href="http://x/?id=1&amp;lat=50.5&amp;lon=7.25"/></entry>
            </feed>
            """
        let (incidents, _) = try TestSupport.read(feed)
        try #require(incidents.count == 1)
        #expect(incidents[0].weblink == "http://x/?id=1&lat=50.5&lon=7.25")
        #expect(incidents[0].position == Coordinate(latitude: 50.5, longitude: 7.25))
        #expect(incidents[0].positionSource == .weblink)
    }

    @Test func brokenEntriesAreReportedAndSkipped() throws {
        let feed = """
            <feed xmlns="http://www.w3.org/2005/Atom">
            <entry><id>good1</id><title>A1 : X - Y</title></entry>
            <entry><id>bad-date</id><updated>yesterday-ish</updated></entry>
            <entry><id>bad-lat</id><link href="http://x/?lat=95&amp;lon=7"/></entry>
            <entry><id>good2</id><title>A2 : X - Y</title></entry>
            </feed>
            """
        let (incidents, skipped) = try TestSupport.read(feed)
        // An impossible position loses the position, not the message (it is geocoded instead).
        #expect(incidents.map(\.id) == ["good1", "bad-lat", "good2"])
        #expect(incidents[1].position == nil)
        #expect(incidents[1].properties[Incident.positionProblemProperty]?.contains("latitude 95") == true)
        #expect(skipped.map(\.index) == [2])
        #expect(skipped.map(\.entryID) == ["bad-date"])
        #expect(skipped[0].reason.contains("unreadable date"))
    }

    @Test func truncatedFeedKeepsTheEntriesBeforeTheBreak() throws {
        let feed = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><id>1</id></entry><entry><id>2</id><title>oops"
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(feed, name: "f.xml", in: folder)
        var seen: [String] = []
        #expect(throws: FeedError.self) {
            try FeedReading.reader(for: .atom).read(FeedInput(localFile: url.path), source: "t") { event in
                if case let .incident(i) = event { seen.append(i.id) }
            }
        }
        #expect(seen == ["1"])
    }

    /// The same through a whole ingest, where the reading runs on its own thread and hands over
    /// batches (`ReadAhead`): every entry before the break is stored, in a partly filled batch
    /// too. (The batch read before a reader error used to be dropped.)
    @Test(arguments: [3, ReadAhead.batchSize + 188])
    func truncatedFeedIngestStoresTheEntriesBeforeTheBreak(entries: Int) throws {
        let whole = SyntheticFeeds.atom(count: entries)
        let cut = try #require(whole.range(of: "</entry>", options: .backwards)).upperBound
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestSupport.write(String(whole[..<cut]) + "\n<entry><id>cut</id><title>oops", name: "f.xml", in: folder)
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let summary = try FeedIngestor(store: store).ingest(FeedInput(localFile: url.path))
        #expect(summary.feedError?.contains("truncated") == true, "\(summary.feedError ?? "no error")")
        #expect(summary.new == entries && summary.read == entries)
        #expect(try store.statistics().total == entries)
    }

    @Test func entriesWithoutIdGetAStableOne() throws {
        let feed = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><title>B54 : Siegen</title><summary>Stau</summary></entry></feed>"
        let a = try TestSupport.read(feed).incidents
        let b = try TestSupport.read(feed).incidents
        #expect(a.count == 1)
        #expect(a[0].id.hasPrefix("urn:trafficgeo:"))
        #expect(a[0].id == b[0].id)
        #expect(a[0].road == "B54")
    }

    @Test(.enabled(if: TestSupport.sharedFolder != nil && TestSupport.which("python3") != nil, "needs ../shared/data/autobahn and python3"))
    func readsFeedsMadeFromTheSharedAutobahnData() throws {
        let shared = try #require(TestSupport.sharedFolder), python = try #require(TestSupport.which("python3"))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let atom = folder.appendingPathComponent("feed.xml").path
        let json = folder.appendingPathComponent("warnings.json").path
        let truth = folder.appendingPathComponent("truth.csv").path
        let result = try TestSupport.run(python, [
            shared.appendingPathComponent("tools/autobahn2atom.py").path,
            shared.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path,
            "--atom", atom, "--autobahn-json", json, "--truth", truth, "--limit", "500", "--with-weblink-coords",
        ])
        try #require(result.status == 0, "autobahn2atom.py failed: \(result.stderr)")
        let fromAtom = try FeedReading.readAll(FeedInput(localFile: atom), source: "atom")
        #expect(fromAtom.incidents.count + fromAtom.skipped.count == 500)
        #expect(fromAtom.skipped.isEmpty, "\(fromAtom.skipped.prefix(3))")
        #expect(fromAtom.incidents.allSatisfy { $0.position != nil && $0.positionSource == .weblink })
        #expect(fromAtom.incidents.filter { $0.road != nil }.count >= 480)
        let fromJSON = try FeedReading.readAll(FeedInput(localFile: json), source: "json")
        #expect(try FeedReading.format(of: FeedInput(localFile: json)) == .autobahn)
        #expect(fromJSON.incidents.count == 500)
        // Both shapes describe the same warnings at the same places.
        let atomByID = Dictionary(fromAtom.incidents.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var compared = 0
        for incident in fromJSON.incidents {
            guard let other = atomByID[incident.id], let p = incident.position, let q = other.position else { continue }
            #expect(Geodesic.distance(from: p, to: q) < 1, "\(incident.id)")
            compared += 1
        }
        #expect(compared >= 450)
    }
}
