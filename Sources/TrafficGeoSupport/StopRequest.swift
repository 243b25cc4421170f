import Foundation

/// The one way a long run is asked to stop — the feed loop, `watch`, batch geocoding and
/// `serve` alike: a signal (`StopRequest.onSignals`), a test or an embedding program calls
/// `request()`, and every run holding the request ends at its next safe point (a batch between
/// rows, a watch between deliveries, a server once requests in flight are answered).
///
/// Runs wait on it instead of looking at a flag now and then: `requested()` returns the moment
/// the stop comes, and `sleep(until:)` is a wait between reads that a stop ends early.
///
///     let stop = StopRequest()
///     Task { try await server.run(until: stop) }
///     …
///     stop.request()
public final class StopRequest: Sendable {
    private struct State {
        var requested = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters whose task was cancelled before they were stored: they resume at once.
        var cancelled: Set<Int> = []
    }
    private let state = LockedState(State())

    public init() {}

    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Asks every run holding this request to stop; later calls change nothing. True for the
    /// call that made the request.
    @discardableResult
    public func request() -> Bool {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
            guard !state.requested else { return nil }
            state.requested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiting ?? [] { waiter.resume() }
        return waiting != nil
    }

    /// Returns once a stop is requested, or when the waiting task is cancelled.
    public func requested() async {
        let id = state.withLock { state -> Int in defer { state.nextWaiter += 1 }; return state.nextWaiter }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.requested || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                state.cancelled.insert(id)
                return nil
            }
            waiter?.resume()
        }
    }

    /// Waits until `deadline`; a stop (or the task's cancellation) ends the wait early. True when
    /// the whole wait passed and no stop came.
    @discardableResult
    public func sleep(until deadline: ContinuousClock.Instant) async -> Bool {
        guard !isRequested, !Task.isCancelled else { return false }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            group.addTask { await self.requested() }
            await group.next()
            group.cancelAll()
        }
        return !isRequested && !Task.isCancelled
    }
}

extension StopRequest {
    /// A stop requested by the first Ctrl-C (SIGINT) or SIGTERM; a second Ctrl-C quits at once
    /// (exit 130). A second SIGTERM does not: a service manager may send it to every process of
    /// the service, and the run must still finish its write and exit 0 (what cannot wait is
    /// SIGKILL's business). `announce` is told at each signal whether it is the second (the
    /// command line prints what stopping keeps).
    ///
    /// `announce` runs before the stop is requested: a run that ends at once must not end (and
    /// print its last line, or exit) before the notice is out. Signals arrive through Dispatch
    /// signal sources on one serial queue (the handler runs there, not in the signal handler, so
    /// it may print and lock; one signal at a time); the sources are kept for the life of the
    /// process.
    public static func onSignals(announce: @escaping @Sendable (_ second: Bool) -> Void = { _ in }) -> StopRequest {
        let stop = StopRequest()
        var sources: [any DispatchSourceSignal] = []
        let queue = DispatchQueue(label: "trafficgeo.signals")
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                let second = stop.isRequested
                if second && sig == SIGTERM { return }
                announce(second)
                if second { exit(130) }
                stop.request()
            }
            source.resume()
            sources.append(source)
        }
        SignalSources.keep(sources)
        return stop
    }
}

/// Signal sources live as long as the process: a released source stops delivering.
private enum SignalSources {
    private static let kept = LockedState<[any DispatchSourceSignal]>([])
    static func keep(_ sources: [any DispatchSourceSignal]) { kept.withLock { $0 += sources } }
}

/// A value behind a lock (Support depends on no package, so not NIO's box).
final class LockedState<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}
