#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// A store call that can be told to stop: `serve` runs each request's store work under one
/// (`run`), and stops it when the request's time is up or its client has gone, so that a
/// timed-out query frees its thread instead of running on for minutes. A store checks
/// `currentIsStopped` where it works long (SQLite: a progress handler that interrupts the
/// statement, `SQLiteIncidentStore`); code outside `run` is never stopped.
public final class QueryStop: Sendable {
    private let stopped = NIOLockedValueBox(false)

    public init() {}

    /// Asks the work under this stop to end at its next check.
    public func stop() { stopped.withLockedValue { $0 = true } }

    public var isStopped: Bool { stopped.withLockedValue { $0 } }

    /// Runs `body` with this stop as the calling thread's current one.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, previous) }
        return try body()
    }

    /// Runs `body` as if outside any stop: the cleanup after a stopped statement (a rollback)
    /// must itself not be stopped.
    public static func unstoppable<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, nil)
        defer { pthread_setspecific(key, previous) }
        return try body()
    }

    /// Whether the work on the calling thread was told to stop (false outside `run`).
    public static var currentIsStopped: Bool {
        guard let pointer = pthread_getspecific(key) else { return false }
        return Unmanaged<QueryStop>.fromOpaque(pointer).takeUnretainedValue().isStopped
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()
}
