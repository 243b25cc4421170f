import NIOConcurrencyHelpers
import NIOPosix

/// Blocking work that can be told to stop: every `BlockingThreads.run` runs its work under one
/// (`run`) and stops it when the awaiting task is cancelled, and `serve` stops a request's
/// when its time is up or its client has gone, so that a query nobody waits for frees its
/// thread instead of running on for minutes. A store checks `currentIsStopped` where it works
/// long (SQLite: a progress handler that interrupts the statement, `SQLiteIncidentStore`);
/// code outside `run` is never stopped.
public final class QueryStop: Sendable {
    private let stopped = NIOLockedValueBox(false)

    public init() {}

    /// Asks the work under this stop to end at its next check.
    public func stop() { stopped.withLockedValue { $0 = true } }

    public var isStopped: Bool { stopped.withLockedValue { $0 } }

    /// Runs `body` with this stop as the calling thread's current one.
    public func run<T>(_ body: () throws -> T) rethrows -> T { try Self.under(self, body) }

    /// Runs `body` as if outside any stop: the cleanup after a stopped statement (a rollback)
    /// must itself not be stopped.
    public static func unstoppable<T>(_ body: () throws -> T) rethrows -> T { try under(nil, body) }

    /// Runs `body` with `stop` as the calling thread's current one, then puts back the one before.
    private static func under<T>(_ stop: QueryStop?, _ body: () throws -> T) rethrows -> T {
        let previous = current.currentValue
        current.currentValue = stop
        defer { current.currentValue = previous }
        return try body()
    }

    /// Whether the work on the calling thread was told to stop (false outside `run`).
    public static var currentIsStopped: Bool { current.currentValue?.isStopped ?? false }

    /// The calling thread's stop (NIO's thread-specific variable, as the SQLite store's
    /// per-thread connections).
    private static let current = ThreadSpecificVariable<QueryStop>()
}
