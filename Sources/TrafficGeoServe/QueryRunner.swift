import Foundation
import NIOConcurrencyHelpers
import NIOPosix

/// Runs store queries on threads of their own (SQLite calls block; Swift's cooperative pool has
/// one thread per core and must keep serving connections and event streams), and answers 503
/// when one takes longer than the request time limit. The query itself runs to its end (SQLite
/// has no safe way to stop it from here), but the client is not kept waiting.
final class QueryRunner: Sendable {
    private let pool: NIOThreadPool
    private let timeout: Duration

    init(threads: Int, timeout: Duration) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        self.timeout = timeout
    }

    func shutdown() async {
        try? await pool.shutdownGracefully()
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let seconds = timeout.components.seconds
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            // Whichever comes first, the answer or the time limit, resumes the request.
            let pending = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(continuation)
            let finish: @Sendable (Result<T, any Error>) -> Void = { result in
                pending.withLockedValue { c in
                    c?.resume(with: result)
                    c = nil
                }
            }
            pool.submit { state in
                guard case .active = state else {
                    finish(.failure(Problem(status: .serviceUnavailable, title: "Shutting down", detail: "The server is stopping; try again shortly.")))
                    return
                }
                finish(Result { try body() })
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))) {
                finish(.failure(Problem(status: .serviceUnavailable, title: "The query took too long",
                                        detail: "The answer took longer than \(seconds) s. Ask a narrower question: a bbox, a radius, nearest=k or a smaller limit.")))
            }
        }
    }
}
