import Foundation
import GRDB
import Testing
@testable import TrafficGeoSQLite

@Suite("A killed ingest leaves the database as it was", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct CrashSafetyTests {
    /// What must survive a crash: every row's identity and content hash (reports and the rows of
    /// events they make), and the index size; `reports`: the rows the feeds gave.
    static func fingerprint(_ path: String) throws -> (rows: Int, hashSum: Int64, indexEntries: Int, reports: Int) {
        let store = try SQLiteIncidentStore(path: path, readOnly: true)
        return try store.read { db in
            let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents") ?? 0
            let sum = try Int64.fetchOne(db, sql: "SELECT total(content_hash % 1000003) FROM incidents") ?? 0
            let index = try Int.fetchOne(db, sql: "SELECT count(*) FROM incident_blocks") ?? 0
            let reports = try Int.fetchOne(db, sql: "SELECT count(*) FROM incidents WHERE role <> 2") ?? 0
            return (rows, sum, index, reports)
        }
    }

    @Test(arguments: [10_000, 30_000])
    func sigkillMidTransaction(killAfterEntries: Int) throws {
        let cli = try #require(TestSupport.cliExecutable)
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let small = try TestSupport.write(SyntheticFeeds.atom(count: 200, seed: 3, idPrefix: "before"), name: "small.xml", in: folder)
        let big = try TestSupport.write(SyntheticFeeds.atom(count: 60_000, seed: 4), name: "big.xml", in: folder)
        let first = try TestSupport.run(cli.path, ["ingest", "--db", db, small.path])
        try #require(first.status == 0, Comment(rawValue: first.stderr))
        let before = try Self.fingerprint(db)
        #expect(before.rows == 200)

        // Start the big ingest and kill it once it reports progress: mid-transaction by construction.
        let process = Process()
        process.executableURL = cli
        process.arguments = ["ingest", "--verbose", "--db", db, big.path]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var seen = ""
        var killed = false
        while process.isRunning {
            let data = stderr.fileHandleForReading.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
            if seen.contains("… \(killAfterEntries) entries read") {
                kill(process.processIdentifier, SIGKILL)
                killed = true
                break
            }
        }
        process.waitUntilExit()
        try #require(killed, "the ingest finished before it could be killed; stderr: \(seen.suffix(300))")
        #expect(process.terminationReason == .uncaughtSignal)

        let store = try SQLiteIncidentStore(path: db)
        #expect(try store.checkIntegrity().isEmpty)
        let after = try Self.fingerprint(db)
        #expect(after.rows == before.rows && after.hashSum == before.hashSum && after.indexEntries == before.indexEntries)

        // Running it again completes, with the same result as an uninterrupted ingest.
        let again = try TestSupport.run(cli.path, ["ingest", "--db", db, big.path])
        #expect(again.status == 0, Comment(rawValue: again.stderr))
        #expect(again.stderr.contains("60000 read, 60000 new"))
        #expect(try Self.fingerprint(db).reports == 60_200)
        #expect(try store.checkIntegrity().isEmpty)
    }
}
