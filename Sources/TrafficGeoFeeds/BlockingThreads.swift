import Foundation
import NIOCore
import NIOPosix

/// The threads blocking work runs on when it is asked from async code: a store's calls, and a
/// feed's own blocking steps (inflating a gzip file, spooling standard input, reading an
/// Open511 page for its next one). The one way the package runs blocking work off Swift's
/// cooperative pool (docs/architecture.md, "Waiting and locking").
///
/// A store blocks its caller: SQLite in its C calls, PostGIS in waiting for its event loop's
/// answer. Swift's cooperative pool has one thread per core and must never block (two cores:
/// two blocked ingests stop every task of the process). So the store API is async
/// (`IncidentStore`'s async overloads, `perform`): each call hops to one of these threads, does
/// the synchronous work there, and resumes the task with the answer. The synchronous API is kept
/// for synchronous callers (a thread of one's own, a test) and marked `noasync`, so the compiler
/// refuses it in async code. `serve`'s QueryRunner is the same rule with a time limit and lanes
/// of its own. (The store modules call these threads `StoreThreads`.)
public enum BlockingThreads {
    /// Sixteen threads, or four per core if that is more. Store work waits — on the disk, on
    /// a busy database, on the database server — more than it computes, and a waiting thread
    /// costs little; too few, and one long ingest keeps a short read of the same process
    /// waiting for a thread (a test process runs many at once).
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(16, 4 * System.coreCount))
        pool.start()
        return pool
    }()

    /// Runs `body` on one of these threads and returns its answer, in GRDB's shape
    /// (`SerializedDatabase.execute`): the work and its answer are `Sendable`, as they cross
    /// threads, and the work can be stopped. When the awaiting task is cancelled, `body`'s
    /// `QueryStop` is stopped: a store checks it where it works long (SQLite interrupts its
    /// statement), so a cancelled request or watch frees its thread instead of running on.
    /// Work cancelled before it began does not begin (`CancellationError`).
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(on: pool, stop: QueryStop(), body)
    }

    /// `run` for a small write that must land even when the task is cancelled (a watch's saved
    /// place, the metrics file, a fetch's record in feed health, as a loop stops): begun in a
    /// cancelled task too, and never stopped.
    public static func runToEnd<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(on: pool, stop: QueryStop(), body) { continuation.resume(with: $0) }
        }
    }

    /// `run` on another pool of threads (serve's lanes) under a stop the caller keeps.
    package static func run<T: Sendable>(on pool: NIOThreadPool, stop: QueryStop,
                                         _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                submit(on: pool, stop: stop, body) { continuation.resume(with: $0) }
            }
        } onCancel: {
            stop.stop()
        }
    }

    /// Runs `body` on a thread of `pool` under `stop`, and hands its outcome to `finish` (on that
    /// thread): `run`'s hop, for a caller that may answer before the work ends (serve's time
    /// limit). Work stopped before it began does not begin (`CancellationError`); a pool that
    /// has shut down answers `whenPoolStopped`.
    package static func submit<T: Sendable>(on pool: NIOThreadPool, stop: QueryStop,
                                            whenPoolStopped: @escaping @Sendable () -> any Error = { BlockingThreadsStopped() },
                                            _ body: @escaping @Sendable () throws -> T,
                                            then finish: @escaping @Sendable (Result<T, any Error>) -> Void) {
        pool.submit { state in
            guard case .active = state else { return finish(.failure(whenPoolStopped())) }
            guard !stop.isStopped else { return finish(.failure(CancellationError())) }
            finish(Result { try stop.run(body) })
        }
    }
}

/// The threads were shut down (the process is ending).
public struct BlockingThreadsStopped: Error, CustomStringConvertible {
    public var description: String { "the threads for blocking work have stopped" }
}

/// Work a blocking thread shares out to `BlockingThreads`' threads and then waits for: jobs are
/// offered, at most `helpers` pool threads work through them in order, and when the offering
/// thread needs the answers (`finish`) it runs every job no pool thread has taken yet itself,
/// then waits only for the jobs already under way. So it never waits for a thread that may not
/// come: a pool whose every thread is such an offering thread still ends. (Junction learning's
/// parsing during an ingest; a feed's reader beside its store, `ReadAhead`.)
package final class SharedWork: @unchecked Sendable {
    private let condition = NSCondition()
    private let maxHelpers: Int
    // Guarded by `condition`.
    private var offered: [(id: Int, job: @Sendable () -> Void)] = []
    private var nextID = 0
    private var helpers = 0
    private var running = 0

    /// `helpers`: pool threads at most at once (one per core: the work computes, and more
    /// threads than cores would only take turns and hold more memory).
    package init(helpers: Int = System.coreCount) { maxHelpers = max(1, helpers) }

    /// Hands `job` to the pool (or to `finish`, whichever takes it first); returns its number
    /// for `withdraw`.
    @discardableResult
    package func offer(_ job: @escaping @Sendable () -> Void) -> Int {
        let (id, startsHelper) = condition.withLock { () -> (Int, Bool) in
            nextID += 1
            offered.append((nextID, job))
            guard helpers < maxHelpers else { return (nextID, false) }
            helpers += 1
            return (nextID, true)
        }
        if startsHelper { BlockingThreads.pool.submit { _ in self.help() } }
        return id
    }

    /// Takes the job `id` back if no thread has begun it: true when it was still waiting (it
    /// will not run then; the caller does its work another way, or not at all).
    package func withdraw(_ id: Int) -> Bool {
        condition.withLock {
            guard let k = offered.firstIndex(where: { $0.id == id }) else { return false }
            offered.remove(at: k)
            return true
        }
    }

    /// A pool thread's part: the offered jobs, in order, until none is left.
    private func help() {
        while runNext(asHelper: true) {}
    }

    /// Runs the first offered job; false when there was none (a helper then leaves).
    private func runNext(asHelper: Bool) -> Bool {
        let job = condition.withLock { () -> (@Sendable () -> Void)? in
            guard !offered.isEmpty else {
                if asHelper { helpers -= 1 }
                return nil
            }
            running += 1
            return offered.removeFirst().job
        }
        guard let job else { return false }
        job()
        condition.withLock {
            running -= 1
            condition.broadcast()
        }
        return true
    }

    /// Runs what no pool thread has taken, on the calling thread, and waits for the rest.
    package func finish() {
        while runNext(asHelper: false) {}
        condition.withLock {
            while running > 0 { condition.wait() }
        }
    }
}
