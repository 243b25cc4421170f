import NIOPosix

/// Threads that run store reads one after another for as long as the store is in use (a
/// server's query threads) say so here; a store may then keep a read connection for each such
/// thread instead of taking one from a shared pool for every read (the pool's checkout and
/// checks were ≈ 10 % of the CPU of a 10-nearest request in `serve`).
/// Other threads (a command's main thread, Swift's cooperative pool, whose threads come and go)
/// read through the pool as before.
public enum ReaderThread {
    /// Marks the calling thread as a long-lived reader, until it ends.
    public static func markCurrent() {
        if marked.currentValue == nil { marked.currentValue = Marker.shared }
    }

    /// True on a thread `markCurrent` was called on.
    public static var isCurrentMarked: Bool { marked.currentValue != nil }

    /// Only whether a thread has one matters.
    private final class Marker: Sendable {
        static let shared = Marker()
    }

    private static let marked = ThreadSpecificVariable<Marker>()
}
