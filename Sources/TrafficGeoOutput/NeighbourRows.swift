import Foundation
import NIOConcurrencyHelpers
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// The rows of batch queries (`--queries`): `qid,id,distance_m`, distances in full precision so
/// that they can be checked against an exact oracle.
public enum NeighbourRows {
    public static let header = "qid,id,distance_m\n"

    public static func line(qid: String, _ n: Neighbour) -> String {
        "\(CSVResultWriter.quote(qid)),\(CSVResultWriter.quote(n.id)),\(n.distance)\n"
    }
}

/// Many query points answered in one process (`--queries`), each answer written as
/// `qid,id,distance_m` rows, with each query's time. The sink is committed only when every point
/// was answered (a file then appears whole or not at all).
///
///     let timing = try await NeighbourBatch.run(points, into: sink, store: store, sessions: 2) { search, point in
///         try search.nearestNeighbours(to: point, limit: 10)
///     }
public enum NeighbourBatch {
    /// How long the batch took: each query's latency (milliseconds, in the points' order) and
    /// the whole batch's seconds; the rows written and the sessions that answered.
    public struct Timing: Sendable {
        public var latencies: [Double]
        public var seconds: Double
        public var rows: Int
        public var sessions: Int
        /// Points with no answer (no row).
        public var unanswered: Int
        public var median: Double { Self.quantile(latencies, 0.5) }
        public var p95: Double { Self.quantile(latencies, 0.95) }

        static func quantile(_ values: [Double], _ q: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return q == 0.5 ? sorted[sorted.count / 2] : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
        }
    }

    /// Answers every point, on up to `sessions` searches of `store` at once (`withNeighbourSearches`:
    /// each on its own thread, all on one committed state), in blocks of `blockSize` points taken
    /// in order; the rows are written in the points' order, so the file is the same for any number
    /// of sessions. A batch smaller than two blocks uses one.
    public static func run(_ points: [QueryLocations.Point], into sink: TextSink, store: any StoreReader, sessions: Int = 1,
                           blockSize: Int = 16,
                           answer: @escaping @Sendable (any NeighbourSearch, Coordinate) throws -> [Neighbour]) async throws -> Timing {
        let work = OrderedBlocks(points: points, blockSize: blockSize, sink: sink)
        let clock = ContinuousClock()
        let start = clock.now
        var opened: [Void] = []
        do {
            try sink.write(NeighbourRows.header)
            let sessions = points.count >= 2 * blockSize ? max(1, sessions) : 1
            opened = try await store.withNeighbourSearches(upTo: sessions) { _, search in
                do {
                    try work.answerBlocks(points, clock: clock) { try answer(search, $0) }
                } catch {
                    work.stop()   // the other sessions take no more blocks
                    throw error
                }
            }
            try sink.commit()
        } catch {
            work.stop()
            sink.abandon()
            throw error
        }
        return Timing(latencies: work.latencies, seconds: (clock.now - start).inSeconds, rows: work.rowsWritten, sessions: opened.count,
                      unanswered: work.unanswered)
    }
}

extension OrderedBlocks {
    /// One session's part: blocks taken in turn until none is left, each query timed.
    func answerBlocks(_ points: [QueryLocations.Point], clock: ContinuousClock, answer: (Coordinate) throws -> [Neighbour]) throws {
        while let block = take() {
            var rows = ""
            var rowCount = 0, empty = 0
            var latencies: [Double] = []
            latencies.reserveCapacity(block.count)
            for p in points[block] {
                let t0 = clock.now
                let found = try answer(p.coordinate)
                latencies.append((clock.now - t0).inSeconds * 1000)
                for n in found { rows += NeighbourRows.line(qid: p.qid, n) }
                rowCount += found.count
                if found.isEmpty { empty += 1 }
            }
            try finished(block, rows: rows, count: rowCount, empty: empty, latencies: latencies)
        }
    }
}

/// The blocks of a batch shared by its sessions: the next block to take, and the answered blocks
/// written to the sink in order by whichever session completes the next one to write (no session
/// waits for another). Unchecked Sendable for the sink only, which is written inside the lock.
private final class OrderedBlocks: @unchecked Sendable {
    private struct Progress {
        var nextToTake = 0
        var nextToWrite = 0
        var done: [Int: (rows: String, count: Int)] = [:]
        var written = 0
        var emptyAnswers = 0
        var stopped = false
        var latencyOf: [Double]
    }

    private let count: Int
    private let blockSize: Int
    private let sink: TextSink
    private let progress: NIOLockedValueBox<Progress>

    init(points: [QueryLocations.Point], blockSize: Int, sink: TextSink) {
        count = points.count
        self.blockSize = blockSize
        self.sink = sink
        progress = NIOLockedValueBox(Progress(latencyOf: Array(repeating: 0, count: points.count)))
    }

    /// The rows written so far.
    var rowsWritten: Int { progress.withLockedValue { $0.written } }

    /// The points answered with nothing so far.
    var unanswered: Int { progress.withLockedValue { $0.emptyAnswers } }

    /// Each query's milliseconds, in the points' order.
    var latencies: [Double] { progress.withLockedValue { $0.latencyOf } }

    /// The next block's range of points; nil when all are taken or the batch failed.
    func take() -> Range<Int>? {
        let count = self.count, blockSize = self.blockSize
        return progress.withLockedValue { p in
            guard !p.stopped, p.nextToTake < count else { return nil }
            defer { p.nextToTake += blockSize }
            return p.nextToTake ..< min(count, p.nextToTake + blockSize)
        }
    }

    /// A block's rows: kept until every block before it is written, then written with them.
    func finished(_ block: Range<Int>, rows: String, count: Int, empty: Int, latencies: [Double]) throws {
        let sink = self.sink, blockSize = self.blockSize
        try progress.withLockedValue { p in
            p.latencyOf.replaceSubrange(block, with: latencies)
            p.emptyAnswers += empty
            p.done[block.lowerBound] = (rows, count)
            while let next = p.done.removeValue(forKey: p.nextToWrite) {
                do {
                    try sink.write(next.rows)
                    p.written += next.count
                } catch {
                    p.stopped = true
                    throw error
                }
                p.nextToWrite += blockSize
            }
        }
    }

    /// No more blocks are handed out (a session failed).
    func stop() { progress.withLockedValue { $0.stopped = true } }
}
