import Foundation
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
/// waits for another). Unchecked Sendable: every field is used under `lock`.
private final class OrderedBlocks: @unchecked Sendable {
    private let lock = NSLock()
    private let count: Int
    private let blockSize: Int
    private let sink: TextSink
    private var nextToTake = 0
    private var nextToWrite = 0
    private var done: [Int: (rows: String, count: Int)] = [:]
    private var written = 0
    private var emptyAnswers = 0
    private var stopped = false
    private var latencyOf: [Double]

    init(points: [QueryLocations.Point], blockSize: Int, sink: TextSink) {
        count = points.count
        self.blockSize = blockSize
        self.sink = sink
        latencyOf = Array(repeating: 0, count: points.count)
    }

    /// The rows written so far.
    var rowsWritten: Int { lock.withLock { written } }

    /// The points answered with nothing so far.
    var unanswered: Int { lock.withLock { emptyAnswers } }

    /// Each query's milliseconds, in the points' order.
    var latencies: [Double] { lock.withLock { latencyOf } }

    /// The next block's range of points; nil when all are taken or the batch failed.
    func take() -> Range<Int>? {
        lock.withLock {
            guard !stopped, nextToTake < count else { return nil }
            defer { nextToTake += blockSize }
            return nextToTake ..< min(count, nextToTake + blockSize)
        }
    }

    /// A block's rows: kept until every block before it is written, then written with them.
    func finished(_ block: Range<Int>, rows: String, count: Int, empty: Int, latencies: [Double]) throws {
        try lock.withLock {
            latencyOf.replaceSubrange(block, with: latencies)
            emptyAnswers += empty
            done[block.lowerBound] = (rows, count)
            while let next = done.removeValue(forKey: nextToWrite) {
                do {
                    try sink.write(next.rows)
                    written += next.count
                } catch {
                    stopped = true
                    throw error
                }
                nextToWrite += blockSize
            }
        }
    }

    /// No more blocks are handed out (a session failed).
    func stop() { lock.withLock { stopped = true } }
}
