import Foundation
import GRDB
import Testing
import TrafficGeoFeeds
import TrafficGeoModel
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore

/// The store threads in GRDB's shape: cancelling the task that awaits a store call stops the
/// call (`QueryStop`), and work cancelled before a thread took it up never begins.
@Suite("Store threads: cancellation")
struct StoreThreadsTests {
    /// A statement that would run for ever, on a real SQLite file, ends with an error soon after
    /// its task is cancelled: the store's progress handler sees the stop.
    @Test(.timeLimit(.minutes(1))) func cancellingTheTaskInterruptsARunningStatement() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("t.sqlite").path)
        let began = AsyncStream.makeStream(of: Void.self)
        let endless = Task {
            try await store.perform { store in
                try store.read { db in
                    began.continuation.yield()
                    return try Int.fetchOne(db, sql: "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n")
                }
            }
        }
        for await _ in began.stream { break }
        let cancelled = ContinuousClock.now
        endless.cancel()
        let outcome = await endless.result
        #expect(throws: (any Error).self) { try outcome.get() }
        #expect(ContinuousClock.now - cancelled < .seconds(10))
        // The connection left the interrupted read: the store answers the next question.
        #expect(try await store.count(filter: IncidentFilter(), locatedOnly: false) == 0)
    }

    /// A write is not stopped once begun: an ingest whose task is cancelled halfway finishes its
    /// transaction with every entry (FeedLoop's promise: writes in progress finish).
    @Test(.timeLimit(.minutes(1))) func anIngestCancelledHalfwayFinishesItsTransaction() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("t.sqlite").path)
        let halfway = AsyncStream.makeStream(of: Void.self)
        let cancelled = LockedFlag()
        let ingest = Task {
            try await store.ingest(source: "s") { emit in
                for n in 0..<2000 {
                    if n == 1000 {
                        halfway.continuation.yield()
                        while !cancelled.isSet { usleep(1000) }
                    }
                    try emit(.incident(Incident(source: "s", id: "e\(n)", title: "A1 : works \(n)",
                                                position: Coordinate(latitude: 50 + Double(n) / 10_000, longitude: 7))))
                }
            }
        }
        for await _ in halfway.stream { break }
        ingest.cancel()
        cancelled.set()
        let summary = try await ingest.value
        #expect(summary.new == 2000)
        #expect(try await store.count(filter: IncidentFilter(), locatedOnly: false) == 2000)
    }

    /// Work whose task is cancelled before it runs does not run.
    @Test func workCancelledBeforeItBeginsDoesNotBegin() async throws {
        let ran = LockedFlag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await StoreThreads.run { ran.set() }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isSet)
    }

    /// A write that must land (a watch's saved place) runs in a cancelled task too, unstopped.
    @Test func runToEndRunsInACancelledTask() async throws {
        let ran = LockedFlag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await BlockingThreads.runToEnd { () -> Bool in
                ran.set()
                return QueryStop.currentIsStopped
            }
        }
        #expect(try await task.value == false)
        #expect(ran.isSet)
    }

    /// Work outside any cancelled task runs to its end, and sees no stop.
    @Test func workNotCancelledIsNotStopped() async throws {
        let stopped = try await StoreThreads.run { QueryStop.currentIsStopped }
        #expect(!stopped)
    }
}

private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
