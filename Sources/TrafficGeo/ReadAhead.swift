import Foundation
import TrafficGeoFeeds

/// Runs a feed reader on a thread beside the caller's (a `BlockingThreads` thread, through
/// `SharedWork`) while the caller stores what it has read: parsing and storing each keep one
/// core busy instead of taking turns (a CSV build or a big Atom ingest spends about a third of
/// its time reading).
///
/// The caller's `consume` sees exactly the events, in the order, and the error the reader would
/// have given it directly; batches of events pass through a small bounded queue, so a fast
/// reader waits for a slow store instead of filling memory. When `consume` throws, the reader is
/// stopped (its next handoff throws) and waited for before the error goes on.
enum ReadAhead {
    static let batchSize = 512
    static let queuedBatches = 8
    /// How long the consumer waits for the reader to be taken up by a thread before it reads
    /// itself, without a thread beside it (`BlockingThreads` busy with as many ingests as it
    /// has threads): a pool thread takes an offered job in microseconds when one is free.
    static let readerStartWait: TimeInterval = 0.05

    static func run(read: @escaping (_ handle: (FeedEvent) throws -> Void) throws -> Void,
                    consume: (FeedEvent) throws -> Void) throws {
        let pipe = EventPipe(capacity: queuedBatches)
        let work = UncheckedBox(read)
        let helper = SharedWork()
        let reader = helper.offer {
            pipe.started()
            var batch: [FeedEvent] = []
            batch.reserveCapacity(batchSize)
            var failure: Error?
            do {
                try work.value { event in
                    batch.append(event)
                    if batch.count == batchSize {
                        try pipe.put(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
            } catch {
                failure = error
            }
            // The entries read before the end, or before the reader's error (a truncated feed
            // keeps them), go over before the end is announced. (When the consumer gave up,
            // `put` refuses them at once.)
            if !batch.isEmpty {
                do { try pipe.put(batch) } catch { failure = failure ?? error }
            }
            pipe.finish(failure)
        }
        guard pipe.waitForStart(seconds: readerStartWait) || !helper.withdraw(reader) else {
            // No thread took the reader: read here, handing each event straight on.
            return try read(consume)
        }
        do {
            while let batch = try pipe.take() {
                for event in batch { try consume(event) }
            }
            // The reader has said its last; its thread lets go of the closure.
            helper.finish()
        } catch {
            pipe.cancel()
            helper.finish()
            throw error
        }
    }
}

/// The queue between the reader thread and the consumer.
private final class EventPipe: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    // Guarded by `condition`.
    private var batches: [[FeedEvent]] = []
    private var finished = false
    private var readerError: Error?
    private var cancelled = false
    private var readerStarted = false

    init(capacity: Int) { self.capacity = capacity }

    /// Reader side: a thread has taken the reader up.
    func started() {
        condition.withLock {
            readerStarted = true
            condition.broadcast()
        }
    }

    /// Consumer side: whether the reader began within `seconds`.
    func waitForStart(seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        return condition.withLock {
            while !readerStarted && condition.wait(until: deadline) {}
            return readerStarted
        }
    }

    /// Reader side: hands a batch over, waiting while the queue is full; throws once the consumer gave up.
    func put(_ batch: [FeedEvent]) throws {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw CancellationError() }
        batches.append(batch)
        condition.broadcast()
    }

    /// Reader side: no more batches; `error` is what stopped the reader, if anything did.
    func finish(_ error: Error?) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        readerError = error
        condition.broadcast()
    }

    /// Consumer side: the next batch; nil at the end; the reader's error after its last batch.
    func take() throws -> [FeedEvent]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty && !finished { condition.wait() }
        if !batches.isEmpty {
            let batch = batches.removeFirst()
            condition.broadcast()
            return batch
        }
        if let readerError { throw readerError }
        return nil
    }

    /// Consumer side: stop the reader at its next handoff.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        condition.broadcast()
    }
}

/// Hands a value to another thread that the compiler cannot check: the reader closure and what
/// it captures are used by the reader thread alone until `ReadAhead.run` returns.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
