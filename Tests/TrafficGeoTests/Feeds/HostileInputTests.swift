import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoSupport

/// Broken and hostile feeds: each is read correctly or refused with a clear error, quickly.
@Suite("Hostile and broken feed input")
struct HostileInputTests {
    static func readBytes(_ bytes: [UInt8], format: FeedFormat? = nil) throws -> (incidents: [Incident], skipped: [SkippedEntry]) {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("feed")
        try Data(bytes).write(to: url)
        return try FeedReading.readAll(FeedInput(localFile: url.path), source: "test", format: format)
    }

    /// Reads `text`, expecting a refusal whose message contains `words`, within `seconds`.
    static func expectRefused(_ text: String, saying words: String, format: FeedFormat? = nil, within seconds: Int = 3) {
        let start = ContinuousClock.now
        do {
            let read = try TestSupport.read(text, format: format)
            Issue.record("read \(read.incidents.count) incidents instead of refusing")
        } catch let error as FeedError {
            #expect("\(error)".contains(words), "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(seconds))
    }

    static func atom(_ doctype: String = "", title: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        \(doctype)
        <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>x</id><title>\(title)</title></entry></feed>
        """
    }

    @Test func externalEntitiesAreNeverLoaded() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = try TestSupport.write("TOP-SECRET-MARKER", name: "secret.txt", in: folder)
        for declaration in ["<!ENTITY xxe SYSTEM \"file://\(secret.path)\">", "<!ENTITY xxe SYSTEM \"\(secret.path)\">",
                            "<!ENTITY % xxe SYSTEM \"file://\(secret.path)\"> %xxe;"] {
            let feed = Self.atom("<!DOCTYPE feed [\(declaration)]>", title: "A1 &xxe;")
            do {
                let read = try TestSupport.read(feed)
                #expect(!read.incidents.contains { $0.title.contains("TOP-SECRET") })
            } catch {
                #expect(!"\(error)".contains("TOP-SECRET"))
                #expect("\(error)".contains("entit"), "\(error)")
            }
        }
    }

    @Test func entityExpansionBombsAreRefusedQuickly() {
        var doctype = "<!DOCTYPE feed [<!ENTITY lol0 \"lololololololololololololololololololol\">"
        for i in 1...12 { doctype += "<!ENTITY lol\(i) \"" + String(repeating: "&lol\(i - 1);", count: 10) + "\">" }
        doctype += "]>"
        Self.expectRefused(Self.atom(doctype, title: "&lol12;"), saying: "entit")
        // Quadratic blow-up: one big entity referenced many times.
        let quadratic = "<!DOCTYPE feed [<!ENTITY a \"" + String(repeating: "a", count: 50_000) + "\">]>"
        Self.expectRefused(Self.atom(quadratic, title: String(repeating: "&a;", count: 50_000)), saying: "entit", format: .atom)
    }

    @Test func absurdNestingIsRefused() {
        let deep = String(repeating: "<x>", count: 100_000) + String(repeating: "</x>", count: 100_000)
        Self.expectRefused(Self.atom(title: "A1") .replacingOccurrences(of: "<id>x</id>", with: "<id>x</id>" + deep), saying: "nested")
    }

    @Test func hugeTextIsRefused() {
        Self.expectRefused(Self.atom(title: String(repeating: "Stau ", count: 400_000)), saying: "MiB")
    }

    @Test func declaredLatin1AndWindows1252AreDecoded() throws {
        for (encoding, bytes, expected) in [("ISO-8859-1", [UInt8]([0x4B, 0xF6, 0x6C, 0x6E]), "Köln"),
                                            ("windows-1252", [0x4B, 0xF6, 0x6C, 0x6E, 0x20, 0x80], "Köln €")] {
            let head = Array("<?xml version=\"1.0\" encoding=\"\(encoding)\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><id>1</id><title>A1 : ".utf8)
            let tail = Array("</title></entry></feed>".utf8)
            let read = try Self.readBytes(head + bytes + tail)
            #expect(read.incidents.first?.title == "A1 : \(expected)", "\(encoding)")
        }
    }

    @Test func aByteOrderMarkIsFine() throws {
        let read = try Self.readBytes([0xEF, 0xBB, 0xBF] + Array(Self.atom(title: "A1 : Köln").utf8))
        #expect(read.incidents.map(\.title) == ["A1 : Köln"])
    }

    /// Declared UTF-8, written in Latin-1: refused with the line and what is wrong, not garbled.
    @Test func aWrongDeclarationIsReportedWithItsLine() throws {
        let bytes = Array("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<entry><id>1</id><title>K".utf8)
            + [0xF6] + Array("ln</title></entry></feed>".utf8)
        #expect {
            _ = try Self.readBytes(bytes)
        } throws: { error in
            "\(error)".contains("line 3") && "\(error)".contains("encoding")
        }
    }

    /// CSV exported by spreadsheets is often Windows-1252: read it as such when it is not UTF-8.
    @Test func csvInWindows1252IsDecoded() throws {
        let bytes = Array("id,title,lat,lon\n1,A1 : K".utf8) + [0xF6] + Array("ln Stra".utf8) + [0xDF, 0x65] + Array(",50.9,6.9\n2,A3 : Fu".utf8) + [0xDF] + Array(",51,7\n".utf8)
        let read = try Self.readBytes(bytes, format: .csv)
        #expect(read.incidents.map(\.title) == ["A1 : Köln Straße", "A3 : Fuß"])
    }

    @Test func csvWithInvalidUTF8AndU_FFFDDebrisKeepsTheRest() throws {
        let bytes = Array("id,title,lat,lon\n1,A1 : \u{FFFD}\u{FFFD} Köln,50.9,6.9\n".utf8)
        let read = try Self.readBytes(bytes, format: .csv)
        #expect(read.incidents.map(\.title) == ["A1 : \u{FFFD}\u{FFFD} Köln"])
    }

    @Test func impossiblePositionsAreDroppedNotTheirMessages() throws {
        let csv = """
            id,title,lat,lon
            ok,A1 : fine,50.9,6.9
            nan,A1 : x,NaN,6.9
            inf,A1 : x,50.9,inf
            big,A1 : x,1e400,6.9
            range,A1 : x,95,200
            text,A1 : x,fünfzig,6.9
            half,A1 : x,50.9,
            swapped,A1 : swapped,6.9,50.9
            certain,A1 : certain,120.5,50.9

            """
        let read = try TestSupport.read(csv, format: .csv)
        #expect(read.skipped.isEmpty)
        #expect(read.incidents.map(\.id) == ["ok", "nan", "inf", "big", "range", "text", "half", "swapped", "certain"])
        // 6.9, 50.9 is a valid point (off Somalia): nothing says it is swapped, so it is kept as given.
        let kept = read.incidents.filter { $0.position != nil }.map(\.id)
        #expect(kept == ["ok", "swapped"])
        for incident in read.incidents where incident.position == nil {
            // Kept to be geocoded, and the reason is kept with it.
            let problem = try #require(incident.properties[Incident.positionProblemProperty], "\(incident.id)")
            #expect(!problem.isEmpty)
            #expect(incident.road == "A1")
        }
        // Latitude 120.5 cannot be; longitude 50.9 could be a latitude: the report asks about a swap.
        #expect(read.incidents.last?.properties[Incident.positionProblemProperty]?.contains("swapped") == true)
    }

    @Test func emptyAndHugeFieldsAreTamed() throws {
        let csv = "id,title,lat,lon,comment\n1,,50.9,6.9,\(String(repeating: "x", count: 100_000))\n2,   ,50.9,6.9,\n"
        let read = try TestSupport.read(csv, format: .csv)
        #expect(read.incidents.map(\.title) == [Incident.unknownTitle, Incident.unknownTitle])
        #expect((read.incidents.first?.properties["comment"]?.count ?? 0) <= 4096)
    }

    @Test(arguments: [
        ("2025-05-19T04:00:00Z", 1_747_627_200.0), ("2025-05-19T04:00:00.5Z", 1_747_627_200.5),
        ("2025-05-19T06:00:00+02:00", 1_747_627_200.0), ("2025-05-19T06:00:00.123456+0200", 1_747_627_200.123456),
        ("2025-05-19 04:00:00", 1_747_627_200.0), ("Mon, 19 May 2025 04:00:00 GMT", 1_747_627_200.0),
        ("Mon, 19 May 2025 06:00:00 +0200", 1_747_627_200.0), ("19 May 2025 04:00:00 Z", 1_747_627_200.0),
    ])
    func datesInTheShapesFeedsUse(text: String, seconds: Double) throws {
        let date = try #require(TimestampParser.parse(text), "\(text)")
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.001, "\(text)")
    }

    @Test func unreadableDatesAreReportedPerEntry() throws {
        let csv = "id,title,lat,lon,updated\n1,A1,50.9,6.9,yesterday\n2,A1,50.9,6.9,2025-13-45T99:00:00Z\n3,A1,50.9,6.9,2025-05-19T04:00:00Z\n"
        let read = try TestSupport.read(csv, format: .csv)
        #expect(read.incidents.map(\.id) == ["3"])
        #expect(read.skipped.map(\.entryID) == ["1", "2"])
        #expect(read.skipped.allSatisfy { $0.reason.contains("date") })
    }
}
