import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoTestSupport

/// `trafficgeo copy`: an SQLite file to PostGIS and back again loses nothing.
@Suite("Copying a store between SQLite and PostGIS",
       .enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason),
       .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct StoreCopyTests {
    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["TRAFFICGEO_DB"] = nil
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, environment: environment)
    }

    /// Every record a store hands over.
    static func records(_ store: any TransferableStore) throws -> [StoreRecord] {
        var all: [StoreRecord] = []
        try store.exportRecords { all.append($0) }
        return all
    }

    @Test func aFileGoesToPostGISAndBackLosingNothing() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        // A file with a bit of everything: several sources, ended and geocoded incidents, feed
        // health, a change feed with its first events pruned, cached answers, junction knowledge.
        let path = folder.appendingPathComponent("a.sqlite").path
        do {
            let file = try SQLiteIncidentStore(path: path)
            _ = try await FeedIngestor(store: file).ingest(TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path)
            var list = (1...40).map { StoreContract.incident("i\($0)", lat: $0 % 7 == 0 ? nil : 50 + Double($0) / 50, lon: 7 + Double($0) / 30) }
            for k in 0..<3 {
                list[k].summary = "zwischen AS Wenden und AS Krombach"
                list[k].segment = [list[k].position!, Coordinate(latitude: 50.97, longitude: 7.95)]
                list[k].positionSource = PositionSource(kind: .feed)
                list[k].properties = ["Straße": "Köln", "n": "\(k)"]
            }
            try StoreContract.ingest(file, list, snapshot: .wholeSource, now: Date(timeIntervalSince1970: 1_750_000_000))
            try StoreContract.ingest(file, Array(list.dropFirst(5)), snapshot: .wholeSource, now: Date(timeIntervalSince1970: 1_750_000_600))
            // Events: a second feed reports five of the same incidents (four placed: i14 has no position).
            let second = (10...14).map { k -> Incident in
                var i = list[k]
                i.source = "second"
                i.id = "s\(k)"
                return i
            }
            let merged = try StoreContract.ingest(file, second, source: "second", now: Date(timeIntervalSince1970: 1_750_000_700))
            #expect(merged.merged == 4)
            let pending = try await file.pendingGeocodes()
            try await file.recordGeocode(storeID: pending[0].storeID, result: .success(nil), geocoder: "g")
            try await file.recordGeocode(storeID: pending[1].storeID, result: .failure(.timeout(provider: "g", seconds: 10)), geocoder: "g")
            try await file.recordFetch(FetchReport(source: "feed", at: Date(timeIntervalSince1970: 1_750_000_000), entries: 40))
            try await file.storeAnswer(GeocodeAnswer(provider: "p", candidates: []), for: "p|nowhere")
            try await file.recordJunctionObservations([JunctionObservation(road: "A45", name: "AS Olpe", kind: .exit,
                                                                     coordinate: Coordinate(latitude: 51.03, longitude: 7.85), origin: "import:x")],
                                                observer: "import:x", replacing: true)
            _ = try await file.pruneChanges(before: Date(timeIntervalSince1970: 1_750_000_001))
        }
        let there = try cli(["copy", "--from", path, "--to", url])
        #expect(there.status == 0, Comment(rawValue: there.stderr))
        #expect(there.stderr.contains("incidents") && !there.stderr.contains("password"), Comment(rawValue: there.stderr))
        let back = folder.appendingPathComponent("b.sqlite").path
        let again = try cli(["copy", "--from", url, "--to", back])
        #expect(again.status == 0, Comment(rawValue: again.stderr))

        let original = try Self.records(try SQLiteIncidentStore(path: path, readOnly: true))
        let onServer = try Self.records(try await StoreOpening.open(url, readOnly: true) as! any TransferableStore)
        let returned = try Self.records(try SQLiteIncidentStore(path: back, readOnly: true))
        #expect(original.count > 60)
        #expect(original.filter { if case let .incident(r) = $0 { r.stored.role == .event } else { false } }.count == 4, "events of two reports go too")
        #expect(onServer == original)
        #expect(returned == original)
        // The copies answer alike and go on where the original stopped.
        let server = try await StoreOpening.open(url), copy = try SQLiteIncidentStore(path: back)
        let serverProblems = try await server.checkIntegrity(), copyProblems = try await copy.checkIntegrity()
        #expect(serverProblems.isEmpty && copyProblems.isEmpty)
        let q = Coordinate(latitude: 50.5, longitude: 7.3)
        let a = try await SQLiteIncidentStore(path: path).nearest(to: q, limit: 10, maxDistance: nil, filter: IncidentFilter())
        let fromServer = try await server.nearest(to: q, limit: 10, maxDistance: nil, filter: IncidentFilter())
        let fromCopy = try await copy.nearest(to: q, limit: 10, maxDistance: nil, filter: IncidentFilter())
        #expect(fromServer == a)
        #expect(fromCopy == a)
        let bounds = try await server.changeFeedBounds()
        let next = try StoreContract.ingest(server, [StoreContract.incident("later")])
        #expect(next.changes == (bounds.latest + 1)...(bounds.latest + 1))
        await #expect(try server.allIncidents().first { $0.incident.id == "later" }!.storeID > a.map(\.stored.storeID).max()!)

        // Into a store that holds something: refused, nothing changed. A failed copy to a new
        // file leaves no file behind.
        let refused = try cli(["copy", "--from", path, "--to", url])
        #expect(refused.status != 0 && refused.stderr.contains("empty"), Comment(rawValue: refused.stderr))
        let missing = folder.appendingPathComponent("nothing.sqlite").path
        let failed = try cli(["copy", "--from", "postgresql://postgres@/no_such_database_here?host=/nonexistent&port=1", "--to", missing])
        #expect(failed.status != 0 && !FileManager.default.fileExists(atPath: missing), Comment(rawValue: failed.stderr))
    }

    /// An ingest killed at any moment leaves the PostGIS store as it was (one transaction, which
    /// PostgreSQL rolls back when the client goes), with its indexes, and the next ingest works.
    @Test func aKilledIngestLeavesTheDatabaseAsItWas() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        let sample = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path
        #expect(try cli(["ingest", "--db", url, sample]).status == 0)
        var rows = "id,title,lat,lon\n"
        for n in 0..<80_000 { rows += "r\(n),A\(n % 9 + 1) : P\(n),\(47 + Double(n % 1000) / 125),\(6 + Double(n / 1000) / 17)\n" }
        let big = try TestSupport.write(rows, name: "big.csv", in: folder)
        let before = try Self.records(try PostGISIncidentStore(url: url, readOnly: true))
        var killed = 0
        for delay in [0.2, 0.6, 1.2] {
            let ingest = try TestSupport.launch(TestSupport.cliExecutable!, ["ingest", "--db", url, "--no-geocode", big.path])
            Thread.sleep(forTimeInterval: delay)
            let finished = !ingest.isRunning
            TestSupport.stop(ingest)
            guard !finished else { continue }
            killed += 1
            let after = try Self.records(try PostGISIncidentStore(url: url, readOnly: true))
            #expect(after == before, "killed after \(delay) s")
        }
        #expect(killed > 0, "every ingest finished before it was killed: the test proved nothing")
        let store = try PostGISIncidentStore(url: url)
        #expect(try store.checkIntegrity().isEmpty)
        // The next ingest takes the writer lock the killed one held, and the indexes are all there.
        let done = try cli(["ingest", "--db", url, "--no-geocode", big.path])
        #expect(done.status == 0, Comment(rawValue: done.stderr))
        #expect(try store.count(filter: IncidentFilter(), locatedOnly: false) == 80_012)
        #expect(try store.checkIntegrity().isEmpty)
    }
}
