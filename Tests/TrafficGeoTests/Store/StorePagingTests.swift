import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore

/// `count` and the paged `all` (what `serve` pages the whole collection with) agree with `all`.
@Suite struct StorePagingTests {
    @Test func countAndPagesAgreeWithStreamingAll() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("p.sqlite").path)
        _ = try store.ingest(source: "feed", now: Date()) { emit in
            for i in 0..<57 {
                try emit(.incident(Incident(source: "feed", id: "i\(i)", title: "A\(i % 3 + 1) : Köln \(i)", road: "A\(i % 3 + 1)",
                                            position: i % 10 == 0 ? nil : Coordinate(latitude: 50 + Double(i) / 100, longitude: 7))))
            }
        }
        for (filter, located) in [(IncidentFilter(), false), (IncidentFilter(), true), (IncidentFilter(road: "A2"), false), (IncidentFilter(search: "koeln 1"), true)] {
            var streamed: [Int64] = []
            try store.all(filter: filter, locatedOnly: located) { streamed.append($0.stored.storeID) }
            #expect(try store.count(filter: filter, locatedOnly: located) == streamed.count)
            var paged: [Int64] = []
            var offset = 0
            while true {
                let page = try store.all(filter: filter, locatedOnly: located, offset: offset, limit: 7)
                if page.isEmpty { break }
                paged += page.map(\.stored.storeID)
                offset += 7
            }
            #expect(paged == streamed, "\(filter) located: \(located)")
        }
    }
}
