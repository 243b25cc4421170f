import NIOCore
import NIOPosix

/// Swift's tasks run on SwiftNIO's event loops, in `trafficgeo serve` only: Hummingbird's
/// request handling then runs on the event loop that reads and writes the connection instead of
/// on Swift's cooperative pool, and a short query (`QueryRunner.run(short:)`) runs right there,
/// to its end. A 10-nearest request then crosses no thread at all, where before it went event
/// loop → cooperative pool → query thread → cooperative pool → event loop; on 2 cores that
/// shared with the load, each crossing was a queue (docs/serve.md: 1.04–1.06× requests/s and
/// p99 12.4 → 10.8 ms at 64 connections).
///
/// Process-wide, so it is the command's choice, not the library's: a program that embeds
/// `IncidentServer` (the tests) keeps Swift's own pool, and every query runs on the query threads.
public enum EventLoopTasks {
    /// Makes the event loops of `MultiThreadedEventLoopGroup.singleton` (the group Hummingbird
    /// serves on) Swift Concurrency's global executor. Call it once, from the main thread, before
    /// any task is started. False where SwiftNIO cannot (Windows, a Swift it does not know).
    @discardableResult
    public static func install() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Whether the calling thread is an event loop of SwiftNIO's.
    static var onEventLoop: Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }
}
