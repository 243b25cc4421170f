import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoRoadTitles
@testable import TrafficGeoSupport

@Suite("Traffic message parser")
struct TrafficMessageParserTests {
    struct Case: Sendable, CustomStringConvertible {
        var title: String
        var text: String
        var road: String
        var route: [String]
        var from: (String, JunctionMention.Kind, Double?, JunctionMention.Relation)?
        var to: (String, JunctionMention.Kind, Double?, JunctionMention.Relation)?
        var comingFrom: String? = nil
        var both = false
        var description: String { title }
    }

    /// The title forms of docs/architecture.md (road titles), field by field.
    static let cases: [Case] = [
        Case(title: "A4 : Koeln - Olpe", text: "Zwischen AS Wenden und AS Krombach in beiden Richtungen Achtung, Ihnen kommt ein Falschfahrer entgegen!",
             road: "A4", route: ["Koeln", "Olpe"], from: ("Wenden", .exit, nil, .after), to: ("Krombach", .exit, nil, .before), both: true),
        Case(title: "A4 | Krombach - Wenden",
             text: "A4: Olpe -> Köln, zwischen 0.2 km hinter AS Krombach und 0.5 km vor AS Wenden  Stockender Verkehr",
             road: "A4", route: ["Olpe", "Köln"], from: ("Krombach", .exit, 0.2, .after), to: ("Wenden", .exit, 0.5, .before)),
        Case(title: "A3 | Ratingen-Ost - Stindertal / Stinderhof",
             text: "A3: Oberhausen -> Köln, zwischen 0.5 km hinter AK Ratingen-Ost und 2.4 km vor Stindertal / Stinderhof Gefahr durch ein defektes Fahrzeug",
             road: "A3", route: ["Oberhausen", "Köln"], from: ("Ratingen-Ost", .interchange, 0.5, .after),
             to: ("Stindertal / Stinderhof", .unspecified, 2.4, .before)),
        Case(title: "A2 | Oberhausen-Königshardt - Oberhausen-Königshardt",
             text: "A2: Oberhausen -> Dortmund, 1.8 km vor AS Oberhausen-Königshardt, aus Richtung Oberhausen Langsamer Verkehr",
             road: "A2", route: ["Oberhausen", "Dortmund"], from: ("Oberhausen-Königshardt", .exit, 1.8, .before), to: nil,
             comingFrom: "Oberhausen"),
        Case(title: "A8 : Stuttgart - Muenchen", text: "A8: Stuttgart -> München, zwischen 0.9 km hinter Im Rübholz und 1.2 km vor AS Kirchheim (Teck)-Ost Im Stillstand",
             road: "A8", route: ["Stuttgart", "München"], from: ("Im Rübholz", .unspecified, 0.9, .after),
             to: ("Kirchheim (Teck)-Ost", .exit, 1.2, .before)),
        Case(title: "BAB 7 : Kassel - Hannover", text: "zwischen Dreieck Drammetal und Kreuz Hannover-Ost Baustelle",
             road: "A7", route: ["Kassel", "Hannover"], from: ("Drammetal", .triangle, nil, .after), to: ("Hannover-Ost", .interchange, nil, .before)),
    ]

    @Test(arguments: cases)
    func readsTheFields(c: Case) {
        let m = TrafficMessageParser.parse(title: c.title, text: c.text)
        #expect(m.road == c.road)
        #expect(m.routeEnds == c.route)
        #expect(m.bothDirections == c.both)
        #expect(m.comingFrom == c.comingFrom)
        func check(_ got: JunctionMention?, _ want: (String, JunctionMention.Kind, Double?, JunctionMention.Relation)?) {
            guard let want else { #expect(got == nil); return }
            #expect(got?.name == want.0 && got?.kind == want.1 && got?.offsetKm == want.2 && got?.relation == want.3, "\(String(describing: got))")
        }
        check(m.from, c.from)
        check(m.to, c.to)
    }

    @Test func kilometrePostsAndOSMNames() {
        let m = TrafficMessageParser.parse(title: "Baustelle", text: "A215: km 9.14 --> km 0.43 Gefahr durch eine ungesicherte Unfallstelle")
        #expect(m.kilometrePosts == [9.14, 0.43] && m.road == "A215" && m.routeEnds.isEmpty)
        #expect(JunctionMention(name: "Heidelberg", kind: .interchange).osmStyleName == "Kreuz Heidelberg")
        #expect(JunctionMention(name: "Bayreuth / Kulmbach", kind: .triangle).osmStyleName == "Dreieck Bayreuth / Kulmbach")
    }

    @Test(arguments: [
        ("2.0 km hinter AS X", 2.0, "hinter", "AS X"), ("0,5 KM vor  Y", 0.5, "vor", "Y"), ("12 km nördlich Z", 12.0, "nördlich", "Z"),
        ("3.0km nach A", 3.0, "nach", "A"),
    ])
    func leadingOffsets(text: String, km: Double, word: String, rest: String) throws {
        let (k, w, r) = try #require(TrafficMessageParser.leadingOffset(text[...]))
        #expect(k == km && w == word && String(r) == rest)
    }

    @Test(arguments: ["AS X", "2.0 km", "2.0 km hinter", "2. km hinter X", "km hinter X", "2 kmhinter X", "2 km über X"])
    func notOffsets(text: String) {
        #expect(TrafficMessageParser.leadingOffset(text[...]) == nil)
    }

    /// Over real messages of ../shared/data/autobahn: the fields a resolver needs are found.
    @Test(.enabled(if: TestSupport.sharedFolder != nil && TestSupport.which("python3") != nil, "needs ../shared/data/autobahn and python3"))
    func realMessagesFromTheSharedData() throws {
        let shared = try #require(TestSupport.sharedFolder), python = try #require(TestSupport.which("python3"))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let atom = folder.appendingPathComponent("feed.xml").path, truth = folder.appendingPathComponent("truth.csv").path
        let run = try TestSupport.run(python, [shared.appendingPathComponent("tools/autobahn2atom.py").path,
                                               shared.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path,
                                               "--atom", atom, "--truth", truth, "--limit", "2000", "--seed", "7"])
        try #require(run.status == 0, Comment(rawValue: run.stderr))
        let incidents = try FeedReading.readAll(FeedInput(localFile: atom)).incidents
        var roadByID: [String: String] = [:]
        let reader = CSVRecordReader(stream: InputStream(fileAtPath: truth)!)
        _ = try reader.next()
        while let r = try reader.next() { roadByID[r.fields[0]] = r.fields[8] }
        #expect(roadByID.count >= 1900)
        var roadRight = 0, between = 0, betweenBoth = 0, offsets = 0, offsetsRead = 0
        for i in incidents {
            let m = TrafficMessageParser.parse(title: i.title, text: i.summary)
            // The learning parse reads the same road and junctions, only faster.
            let quick = TrafficMessageParser.parseJunctions(title: i.title, text: i.summary)
            #expect(quick.road == m.road && quick.from == m.from && quick.to == m.to, "\(i.title) / \(i.summary ?? "")")
            if m.road == roadByID[i.id] { roadRight += 1 }
            let text = i.summary ?? ""
            if text.contains("zwischen ") {
                between += 1
                if m.from != nil && m.to != nil { betweenBoth += 1 }
            }
            if text.contains(" km hinter ") || text.contains(" km vor ") {
                offsets += 1
                if m.from?.offsetKm != nil || m.to?.offsetKm != nil { offsetsRead += 1 }
            }
        }
        let n = Double(incidents.count)
        #expect(Double(roadRight) / n > 0.97, "road right for \(roadRight) of \(incidents.count)")
        #expect(Double(betweenBoth) / Double(max(between, 1)) > 0.98, "both junctions for \(betweenBoth) of \(between)")
        #expect(Double(offsetsRead) / Double(max(offsets, 1)) > 0.98, "offset read for \(offsetsRead) of \(offsets)")
    }
}
