import Foundation
import Testing
@testable import TrafficGeoModel
import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore

/// Several processes on one database file, and files that cannot be written.
@Suite("Concurrent use and unwritable databases", .serialized, .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct ConcurrencyTests {
    /// Whether a file can be made unwritable: root writes anything but an immutable (chattr +i) file.
    static let canMakeAFileReadOnly: Bool = {
        guard getuid() == 0 else { return true }
        let probe = TestSupport.temporaryDirectory().appendingPathComponent("probe")
        defer { try? FileManager.default.removeItem(at: probe.deletingLastPathComponent()) }
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()), let chattr = TestSupport.which("chattr"),
              (try? TestSupport.run(chattr, ["+i", probe.path]).status) == 0 else { return false }
        _ = try? TestSupport.run(chattr, ["-i", probe.path])
        return true
    }()

    /// Whether a tmpfs can be mounted (root with mount permission), to fill a small disk.
    static let canMountATmpfs: Bool = {
        guard getuid() == 0, let mount = TestSupport.which("mount"), let umount = TestSupport.which("umount") else { return false }
        let point = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: point) }
        guard (try? TestSupport.run(mount, ["-t", "tmpfs", "-o", "size=1m", "tmpfs", point.path]).status) == 0 else { return false }
        _ = try? TestSupport.run(umount, [point.path])
        return true
    }()

    static func cli() throws -> URL {
        try #require(TestSupport.cliExecutable, "the trafficgeo executable is not built")
    }

    /// Queries keep answering (from the last committed state) while another process ingests.
    @Test func queriesRunWhileAnotherProcessIngests() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let small = try TestSupport.write(SyntheticFeeds.atom(count: 200, seed: 1, idPrefix: "a"), name: "small.xml", in: folder)
        let big = try TestSupport.write(SyntheticFeeds.atom(count: 15_000, seed: 2, idPrefix: "b"), name: "big.xml", in: folder)
        #expect(try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--db", db, small.path]).status == 0)

        let engine = QueryEngine(store: try SQLiteIncidentStore(path: db, readOnly: true))
        var rounds = 0
        for _ in 0..<2 {
            let ingest = try TestSupport.launch(Self.cli(), ["ingest", "-q", "--no-geocode", "--source-name", "big\(rounds)", "--db", db, big.path])
            // The queries on one store thread for as long as the ingest runs.
            let (queries, failures) = try await StoreThreads.run { () -> (Int, [String]) in
                var queries = 0, failures: [String] = []
                while ingest.isRunning {
                    do {
                        let found = try engine.nearest(to: Coordinate(latitude: 50.9, longitude: 7.0), limit: 5)
                        if found.count != 5 { failures.append("\(found.count) results") }
                    } catch {
                        failures.append("\(error)")
                    }
                    queries += 1
                }
                return (queries, failures)
            }
            ingest.waitUntilExit()
            #expect(ingest.terminationStatus == 0)
            #expect(failures.isEmpty, "\(failures.prefix(3))")
            #expect(queries > 10, "only \(queries) queries ran during the ingest")
            rounds += 1
        }
        await #expect(try engine.store.checkIntegrity().isEmpty)
    }

    /// A batch's sessions on several threads (`withNeighbourSearches`) see one committed state,
    /// while another connection commits one incident at a time as fast as it can; with nothing
    /// being written, every session asked for opens.
    @Test(.timeLimit(.minutes(3))) func parallelSessionsSeeOneStateWhileAnotherConnectionCommits() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let writer = try SQLiteIncidentStore(path: db)
        try StoreContract.ingest(writer, [StoreContract.incident("seed")], source: "seed")
        let reader = try SQLiteIncidentStore(path: db, readOnly: true)
        let world = LonLatBox(west: -180, south: -90, east: 180, north: 90)
        func counts() async throws -> [Int] {
            try await reader.withNeighbourSearches(upTo: 3) { _, search in try search.boxNeighbours(world, filter: IncidentFilter()).count }
        }

        let commits = 400
        let writing = Task { try await TestSupport.onThread {
            for n in 1...commits {
                try StoreContract.ingest(writer, [StoreContract.incident("w\(n)", lat: 50 + Double(n % 100) / 1000)], source: "w\(n)")
            }
        } }
        var calls = 0, parallel = 0, last = 0
        repeat {
            let seen = try await counts()
            #expect(Set(seen).count == 1, "sessions of one batch saw different states: \(seen)")
            #expect(seen[0] >= last, "a later batch saw fewer incidents: \(seen[0]) after \(last)")
            last = seen[0]
            calls += 1
            if seen.count > 1 { parallel += 1 }
        } while last < commits + 1 && calls < 20_000   // (a writer that failed ends the loop too)
        try await writing.value
        #expect(calls > 5 && parallel > 0, "\(calls) batches, \(parallel) of them on several sessions")
        #expect(try await counts() == [commits + 1, commits + 1, commits + 1])
    }

    /// Two ingests at once: the second waits for the first (busy timeout) and both land.
    @Test func twoIngestsAtOnceSerialise() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let a = try TestSupport.write(SyntheticFeeds.atom(count: 8_000, seed: 3, idPrefix: "a"), name: "a.xml", in: folder)
        let b = try TestSupport.write(SyntheticFeeds.atom(count: 8_000, seed: 4, idPrefix: "b"), name: "b.xml", in: folder)
        for round in 0..<2 {
            // Both at once, their messages kept for the report.
            async let first = Task.detached { try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--source-name", "a", "--db", db, a.path]) }.value
            async let second = Task.detached { try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--source-name", "b", "--db", db, b.path]) }.value
            let (one, two) = try await (first, second)
            #expect((one.status, two.status) == (0, 0), "round \(round): \(one.stderr) \(two.stderr)")
        }
        let store = try SQLiteIncidentStore(path: db, readOnly: true)
        let stats = try await store.statistics()
        #expect(stats.reports == 16_000 && stats.located == stats.total, "every report landed (\(stats.total) events)")
        await #expect(try store.checkIntegrity().isEmpty)
    }

    /// Two ingests into one new database, 20 times: both land every time (issue 15, point 4: the
    /// second process's schema migration raced the first's and failed about half the time).
    @Test func twoIngestsIntoANewDatabaseBothLand() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let a = try TestSupport.write(SyntheticFeeds.atom(count: 20, seed: 5, idPrefix: "a"), name: "a.xml", in: folder)
        let b = try TestSupport.write(SyntheticFeeds.atom(count: 30, seed: 6, idPrefix: "b"), name: "b.xml", in: folder)
        for round in 0..<20 {
            let db = folder.appendingPathComponent("new-\(round).sqlite").path
            async let first = Task.detached { try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--source-name", "a", "--db", db, a.path]) }.value
            async let second = Task.detached { try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--source-name", "b", "--db", db, b.path]) }.value
            let (one, two) = try await (first, second)
            #expect((one.status, two.status) == (0, 0), "round \(round): \(one.stderr) \(two.stderr)")
            await #expect(try SQLiteIncidentStore(path: db, readOnly: true).statistics().total == 50, "round \(round)")
        }
    }

    /// An immutable file (even root cannot write it): a clear error, exit 1 (a database failure), nothing changed.
    @Test(.enabled(if: Self.canMakeAFileReadOnly, "running as root and chattr +i does not work here, so no file is read-only"))
    func aReadOnlyDatabaseSaysSo() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let feed = try TestSupport.write(SyntheticFeeds.atom(count: 50, seed: 5), name: "f.xml", in: folder)
        #expect(try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--db", db, feed.path]).status == 0)
        let readOnly: Bool
        if getuid() == 0 {
            readOnly = try TestSupport.run(try #require(TestSupport.which("chattr")), ["+i", db]).status == 0
        } else {
            readOnly = chmod(db, 0o444) == 0
        }
        defer { if getuid() == 0 { _ = try? TestSupport.run(TestSupport.which("chattr") ?? "/usr/bin/chattr", ["-i", db]) } }
        #expect(readOnly)
        let other = try TestSupport.write(SyntheticFeeds.atom(count: 50, seed: 6, idPrefix: "x"), name: "g.xml", in: folder)
        let result = try TestSupport.run(Self.cli().path, ["ingest", "--no-geocode", "--db", db, other.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("read-only"), "\(result.stderr)")
        // Queries still work on it.
        #expect(try TestSupport.run(Self.cli().path, ["near", "--db", db, "--lat", "50", "--lon", "7"]).status == 0)
    }

    /// A full disk (a 1 MiB tmpfs): a clear error, and the database stays as it was.
    @Test(.enabled(if: Self.canMountATmpfs, "cannot mount a small tmpfs here (needs root and mount permission) to fill a disk"))
    func aFullDiskSaysSoAndLosesNothing() throws {
        let mountPoint = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: mountPoint) }
        let mount = try #require(TestSupport.which("mount"))
        try #require(try TestSupport.run(mount, ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path]).status == 0)
        defer { _ = try? TestSupport.run(TestSupport.which("umount") ?? "/bin/umount", [mountPoint.path]) }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = mountPoint.appendingPathComponent("db.sqlite").path
        let small = try TestSupport.write(SyntheticFeeds.atom(count: 100, seed: 7), name: "small.xml", in: folder)
        let big = try TestSupport.write(SyntheticFeeds.atom(count: 20_000, seed: 8, idPrefix: "big"), name: "big.xml", in: folder)
        #expect(try TestSupport.run(Self.cli().path, ["ingest", "-q", "--no-geocode", "--db", db, small.path]).status == 0)
        let result = try TestSupport.run(Self.cli().path, ["ingest", "--no-geocode", "--db", db, big.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("disk is full"), "\(result.stderr)")
        let store = try SQLiteIncidentStore(path: db, readOnly: true)
        #expect(try store.statistics().total == 100)
        #expect(try store.checkIntegrity().isEmpty)
    }
}
