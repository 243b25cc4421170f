import Testing
@testable import TrafficGeoFeeds

/// A comment's delay sentence is read with the same units as a delay's detail
/// (`IncidentMeasure.minutes(per:)`): one table, several languages.
@Suite("Comment lines: the delay's sentence")
struct StructuredCommentTests {
    @Test(arguments: [
        ("30 minutes", 30), ("1 hour 15 mins", 75), ("up to 45 min", 45), ("2h", 120), ("2 hrs 5 min", 125),
        ("90 seconds", 2), ("1 Std. 15 Min.", 75), ("ongeveer 1 uur", 60), ("Moderate", nil), ("15 km", nil),
    ] as [(String, Int?)])
    func delaysInASentence(_ text: String, _ minutes: Int?) {
        #expect(StructuredComment.minutes(text) == minutes)
    }

    @Test func theDelayLineFillsTheDetail() throws {
        let comment = try #require(StructuredComment("Event Location : The M1 southbound\nDelay : 1 Std. 30 Min."))
        #expect(comment.details["delay_minutes"] == "90")
    }
}
