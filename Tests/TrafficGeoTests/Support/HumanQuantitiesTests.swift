import Foundation
import Testing
import TrafficGeoSupport

/// Lengths of time and distances follow one rule: the unit is required, and a bare number is
/// told which unit it lacks (issue: `--every 5` was seconds while `--radius 5` was refused).
@Suite struct HumanQuantitiesTests {
    @Test(arguments: [("90s", 90.0), ("2m", 120), ("12h", 43_200), ("7d", 604_800), ("2w", 1_209_600), ("500ms", 0.5),
                      (" 1.5 h ", 5400), ("0s", 0), ("10S", 10)])
    func durationsWithTheirUnit(text: String, seconds: Double) {
        #expect(DurationExpression.parse(text) == seconds)
    }

    @Test(arguments: ["5", "0", "1.5", "", "s", "-5s", "5x", "0x10s", "nans", "infm", "1e3s", "5 minutes"])
    func notALengthOfTime(text: String) {
        #expect(DurationExpression.parse(text) == nil)
    }

    @Test func aBareNumberIsToldItsUnit() {
        #expect(DurationExpression.explain("5") == "a length of time needs its unit: 5s or 5m")
        #expect(DistanceExpression.explain("5") == "a distance needs its unit: 5m or 5km")
        #expect(DurationExpression.explain("soon") == DurationExpression.accepted)
    }
}
