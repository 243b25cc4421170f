import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
@testable import TrafficGeoSupport

/// A guard against regressions in placing real messages (the full measure on unseen roads is
/// scripts/geocode-folds.py; docs/geocoding.md). Needs ../shared/data/autobahn and python3.
@Suite("Geocoding accuracy on real Autobahn messages",
       .enabled(if: TestSupport.sharedFolder != nil && TestSupport.which("python3") != nil,
                "needs ../shared/data/autobahn and python3"))
struct GeocodingAccuracyTests {
    struct Truth { var coordinate: Coordinate }

    /// Runs ../shared/tools/autobahn2atom.py with `arguments`; returns the truth rows by id.
    static func convert(_ arguments: [String], truth: String?) throws -> [String: Coordinate] {
        let shared = try #require(TestSupport.sharedFolder)
        let python = try #require(TestSupport.which("python3"))
        let run = try TestSupport.run(python, [shared.appendingPathComponent("tools/autobahn2atom.py").path,
                                               shared.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path] + arguments)
        try #require(run.status == 0, Comment(rawValue: run.stderr))
        guard let truth else { return [:] }
        var out: [String: Coordinate] = [:]
        let reader = CSVRecordReader(stream: try #require(InputStream(fileAtPath: truth)))
        _ = try reader.next()
        while let r = try reader.next() {
            if let lat = Double(r.fields[1]), let lon = Double(r.fields[2]) { out[r.fields[0]] = Coordinate(latitude: lat, longitude: lon) }
        }
        return out
    }

    /// (share of truth rows within `km`, share of the placed more than 25 km off).
    static func score(_ store: SQLiteIncidentStore, _ truth: [String: Coordinate], within km: Double) throws -> (Double, Double) {
        var within = 0, placed = 0, gross = 0
        for stored in try store.allIncidents() {
            guard let t = truth[stored.incident.id], let p = stored.incident.position else { continue }
            let d = Geodesic.distance(from: t, to: p)
            placed += 1
            if d <= km * 1000 { within += 1 }
            if d > 25_000 { gross += 1 }
        }
        return (Double(within) / Double(max(truth.count, 1)), Double(gross) / Double(max(placed, 1)))
    }

    @Test func offlineTitlesOfTwoRoadsArePlacedWithoutGrossErrors() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let feed = folder.appendingPathComponent("titles.xml").path, truthPath = folder.appendingPathComponent("truth.csv").path
        let truth = try Self.convert(["--roads", "A61,A30", "--unique-titles", "--limit", "400", "--atom", feed, "--truth", truthPath], truth: truthPath)
        #expect(truth.count >= 300)
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        _ = try await FeedIngestor(store: store, sourceName: "titles").ingest(feed)
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())], cache: store)
        _ = try await PendingGeocoder(store: store, locator: IncidentLocator(service: service)).run()
        let (within10, gross) = try Self.score(store, truth, within: 10)
        #expect(within10 >= 0.75, "within 10 km: \(within10)")
        #expect(gross <= 0.03, "placed more than 25 km off: \(gross)")
    }

    @Test func aPositionedHistoryPlacesLaterTitlesAtTheirJunctions() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let history = folder.appendingPathComponent("history.json").path
        _ = try Self.convert(["--roads", "A61", "--autobahn-json", history], truth: nil)
        let feed = folder.appendingPathComponent("titles.xml").path, truthPath = folder.appendingPathComponent("truth.csv").path
        let truth = try Self.convert(["--roads", "A61", "--unique-titles", "--limit", "300", "--seed", "3", "--atom", feed, "--truth", truthPath],
                                     truth: truthPath)
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let learned = try await FeedIngestor(store: store, sourceName: "api").ingest(history)
        #expect(learned.junctionObservations > 1000)
        // Titles only, filed under another source (the same warnings, without positions).
        _ = try await FeedIngestor(store: store, sourceName: "titles").ingest(feed)
        let service = GeocodingService(providers: [GazetteerProvider(gazetteer: try Gazetteer.shared())], cache: store)
        let run = try await PendingGeocoder(store: store, locator: IncidentLocator(service: service)).run(source: "titles")
        #expect(run.total == truth.count)
        var within2 = 0
        // The reports as placed (most are one event with the positioned message of the same warning).
        var titles = IncidentFilter(source: "titles")
        titles.reports = true
        let placed = try await store.perform { [titles] s in
            var found: [StoredIncident] = []
            try s.all(filter: titles, locatedOnly: false) { found.append($0.stored) }
            return found
        }
        for stored in placed {
            if let t = truth[stored.incident.id], let p = stored.incident.position, Geodesic.distance(from: t, to: p) <= 2000 { within2 += 1 }
        }
        #expect(Double(within2) / Double(truth.count) >= 0.9, "within 2 km: \(within2) of \(truth.count)")
    }
}
