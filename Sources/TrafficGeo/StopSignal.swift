import Foundation
import NIOConcurrencyHelpers

/// The first Ctrl-C (SIGINT) or SIGTERM asks a long run to stop at its next safe point (a batch
/// between rows, a watch between rounds: `isSet`); a second Ctrl-C quits at once (exit 130). A
/// second SIGTERM does not: a service manager may send it to every process of the service, and
/// the run must still finish its write and exit 0 (what cannot wait is SIGKILL's business).
///
/// Signals arrive through Dispatch signal sources (the handler runs on a queue, not in the signal
/// handler, so it may print and lock); the sources are kept for the life of the process.
public final class StopSignal: Sendable {
    private let requested = NIOLockedValueBox(false)
    /// Written once, by `install`, before the instance is shared.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    public var isSet: Bool { requested.withLockedValue { $0 } }

    /// Installs the handlers; `announce` is told, at the first signal, that the run is stopping
    /// (the command line prints what will be kept).
    public static func install(announce: @escaping @Sendable (_ second: Bool) -> Void = { _ in }) -> StopSignal {
        let stop = StopSignal()
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                let second = stop.requested.withLockedValue { requested in defer { requested = true }; return requested }
                if second && sig == SIGTERM { return }
                announce(second)
                if second { exit(130) }
            }
            source.resume()
            stop.sources.append(source)
        }
        return stop
    }
}
