import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import TrafficGeoFeeds
import TrafficGeoStore

/// Runs store queries on threads of their own (SQLite calls block; Swift's cooperative pool has
/// one thread per core and must keep serving connections and event streams), and answers 503
/// when one takes longer than the request time limit. The query is then told to stop
/// (`QueryStop`: the SQLite store interrupts its statement), and so is one whose client went
/// away, so that neither holds a thread or the CPU. Heavy questions (word search, ranking the
/// whole collection) run on a lane of their own threads, so that a few of them cannot keep
/// the cheap ones (nearest, a box) waiting.
final class QueryRunner: Sendable {
    private typealias Expiry = @Sendable () -> Void
    private let pool: NIOThreadPool
    private let heavyPool: NIOThreadPool
    private let timeout: Duration
    /// Queries under way, with their deadlines; one timer looks at them all (a timer per request
    /// cost a wake-up of its own each).
    private let waiting = NIOLockedValueBox<(next: UInt64, entries: [UInt64: (deadline: ContinuousClock.Instant, expire: Expiry)])>((0, [:]))
    /// Looks at the deadlines a few times a second: a task that sleeps between looks (what it
    /// does is take a lock and resume the overdue requests, nothing that blocks).
    private let watchdog: Task<Void, Never>

    init(threads: Int, timeout: Duration, heavyThreads: Int = 1) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        heavyPool = NIOThreadPool(numberOfThreads: max(1, heavyThreads))
        heavyPool.start()
        self.timeout = timeout
        let waiting = self.waiting
        let tick = Duration.seconds(min(0.25, max(0.01, timeout.inSeconds / 4)))
        watchdog = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                let now = ContinuousClock.now
                let expired = waiting.withLockedValue { w -> [Expiry] in
                    let due = w.entries.filter { $0.value.deadline <= now }
                    for key in due.keys { w.entries.removeValue(forKey: key) }
                    return due.map(\.value.expire)
                }
                for expire in expired { expire() }
            }
        }
    }

    deinit { watchdog.cancel() }

    func shutdown() async {
        watchdog.cancel()
        try? await pool.shutdownGracefully()
        try? await heavyPool.shutdownGracefully()
    }

    /// `heavy`: on the heavy lane (`ItemsQuery.isHeavy`).
    func run<T: Sendable>(heavy: Bool = false, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        let seconds = timeout.inSeconds
        let deadline = ContinuousClock.now + timeout
        let waiting = self.waiting
        let stop = QueryStop()
        let lane = heavy ? heavyPool : pool
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                // Whichever comes first, the answer or the time limit, resumes the request.
                let pending = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(continuation)
                let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                    pending.withLockedValue { c in
                        c?.resume(with: result)
                        c = nil
                    }
                }
                let expire: Expiry = {
                    // The answer first, then the stop: stopped first, the query's own failure
                    // ("the query was stopped") could answer before it, as a 500.
                    finish(.failure(Problem(status: .serviceUnavailable, title: "The query took too long",
                                            detail: "The answer took longer than \(String(format: "%g", seconds)) s. Ask a narrower question: a bbox, a radius, nearest=k or a smaller limit.")))
                    stop.stop()
                }
                let id = waiting.withLockedValue { w -> UInt64 in
                    w.next += 1
                    w.entries[w.next] = (deadline, expire)
                    return w.next
                }
                let shuttingDown: @Sendable () -> any Error = {
                    Problem(status: .serviceUnavailable, title: "Shutting down", detail: "The server is stopping; try again shortly.")
                }
                BlockingThreads.submit(on: lane, stop: stop, whenPoolStopped: shuttingDown, {
                    // These threads live as long as the server: the store may keep a connection for each.
                    ReaderThread.markCurrent()
                    return try body()
                }, then: { result in
                    waiting.withLockedValue { _ = $0.entries.removeValue(forKey: id) }
                    finish(result)
                })
            }
        } onCancel: {
            // The client went away: the work stops at its next check.
            stop.stop()
        }
    }
}
