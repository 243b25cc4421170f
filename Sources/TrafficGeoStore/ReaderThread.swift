#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads that run store reads one after another for as long as the store is in use (a
/// server's query threads) say so here; a store may then keep a read connection for each such
/// thread instead of taking one from a shared pool for every read (the pool's checkout and
/// checks were ≈ 10 % of the CPU of a 10-nearest request in `serve`).
/// Other threads (a command's main thread, Swift's cooperative pool, whose threads come and go)
/// read through the pool as before.
public enum ReaderThread {
    /// Marks the calling thread as a long-lived reader, until it ends.
    public static func markCurrent() {
        if pthread_getspecific(key) == nil { pthread_setspecific(key, marker) }
    }

    /// True on a thread `markCurrent` was called on.
    public static var isCurrentMarked: Bool { pthread_getspecific(key) != nil }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()

    /// Any non-nil pointer: only whether one is set matters.
    nonisolated(unsafe) private static let marker = UnsafeMutableRawPointer(bitPattern: 1)!
}
