import Foundation
import Testing
@testable import TrafficGeoSupport

@Suite("Timestamps")
struct TimestampParserTests {
    @Test(arguments: [
        ("2009-04-18T21:58:35Z", 1240091915.0),
        ("2009-04-18T21:58:35.168Z", 1240091915.168),
        ("2009-04-18T23:58:35+02:00", 1240091915.0),
        ("2009-04-18T23:58:35+0200", 1240091915.0),
        ("2009-04-18 21:58:35", 1240091915.0),
        ("2009-04-18T21:58Z", 1240091880.0),
        ("2009-04-18", 1240012800.0),
        ("Sat, 18 Apr 2009 21:58:35 GMT", 1240091915.0),
        ("Sat, 18 Apr 2009 23:58:35 +0200", 1240091915.0),
        ("18 Apr 2009 23:58:35 CEST", 1240091915.0),
        ("2024-02-29T00:00:00Z", 1709164800.0),
        ("1969-12-31T23:59:59Z", -1.0),
    ])
    func parses(text: String, seconds: Double) throws {
        let date = try #require(TimestampParser.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6)
    }

    @Test(arguments: ["", "yesterday", "2009-13-01T00:00:00Z", "2023-02-29", "2009-04-18T25:00:00Z", "2009-04-18T21:58:35Q",
                      "Sat, 18 Foo 2009 21:58:35 GMT", "2009-04-18T21:58:35.Z"])
    func refuses(text: String) {
        #expect(TimestampParser.parse(text) == nil)
    }

    @Test func formatsRoundTrip() {
        for seconds in [0.0, 1240091915.168, -86400.5, 4102444800] {
            let text = TimestampParser.format(Date(timeIntervalSince1970: seconds))
            #expect(TimestampParser.parse(text)!.timeIntervalSince1970 == seconds)
        }
        #expect(TimestampParser.format(Date(timeIntervalSince1970: 1240091915)) == "2009-04-18T21:58:35Z")
        #expect(TimestampParser.format(Date(timeIntervalSince1970: 1240091915.007)) == "2009-04-18T21:58:35.007Z")
        #expect(TimestampParser.format(Date(timeIntervalSince1970: 1240091915.9996)) == "2009-04-18T21:58:36Z")
        #expect(TimestampParser.format(Date(timeIntervalSince1970: -62135596800)) == "0001-01-01T00:00:00Z")
        #expect(TimestampParser.format(Date(timeIntervalSince1970: 253402300800)) == "10000-01-01T00:00:00Z")
    }
}
