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

    /// Runs `body` on one of these threads and returns its answer. `body` may block (the
    /// synchronous store API, a file); it does not outlive the call (the caller waits for it), so
    /// it need not be `Sendable`: it and its answer cross to the thread and back exactly once.
    public static func run<T>(_ body: () throws -> T) async throws -> T {
        try await withoutActuallyEscaping(body) { body in
            let work = Handover(body)
            let answer: Outcome<T> = try await withCheckedThrowingContinuation { continuation in
                pool.submit { state in
                    guard state == .active else {
                        work.drop()
                        continuation.resume(throwing: BlockingThreadsStopped())
                        return
                    }
                    // The closure is let go before the task resumes: withoutActuallyEscaping
                    // checks, as its block ends, that nothing holds it any more.
                    let outcome = work.run()
                    continuation.resume(returning: outcome)
                }
            }
            return try answer.result.get()
        }
    }
}

/// The caller's closure on its way to a pool thread (`BlockingThreads.run`): run there once and
/// dropped at once. It crosses threads while its owner waits, never used by two at a time.
private final class Handover<T>: @unchecked Sendable {
    private var body: (() throws -> T)?

    init(_ body: @escaping () throws -> T) { self.body = body }

    /// Runs the closure and lets it go before returning.
    func run() -> Outcome<T> {
        let body = self.body!
        self.body = nil
        return Outcome(result: Result { try body() })
    }

    func drop() { body = nil }
}

/// A pool thread's answer on its way back to the waiting task.
private struct Outcome<T>: @unchecked Sendable {
    let result: Result<T, any Error>
}

/// The threads were shut down (the process is ending).
public struct BlockingThreadsStopped: Error, CustomStringConvertible {
    public var description: String { "the threads for blocking work have stopped" }
}
