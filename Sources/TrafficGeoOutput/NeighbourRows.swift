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
///     let timing = try NeighbourBatch.run(points, into: sink) { try session.nearestNeighbours(to: $0, limit: 10) }
public enum NeighbourBatch {
    /// How long the batch took: each query's latency (milliseconds, in the points' order) and
    /// the whole batch's seconds.
    public struct Timing: Sendable {
        public var latencies: [Double]
        public var seconds: Double
        public var median: Double { Self.quantile(latencies, 0.5) }
        public var p95: Double { Self.quantile(latencies, 0.95) }

        static func quantile(_ values: [Double], _ q: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return q == 0.5 ? sorted[sorted.count / 2] : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
        }
    }

    @available(*, noasync, message: "blocks its thread: run it on a store thread (StoreThreads.run) in async code")
    public static func run(_ points: [QueryLocations.Point], into sink: TextSink, answer: (Coordinate) throws -> [Neighbour]) throws -> Timing {
        try sink.write(NeighbourRows.header)
        var latencies: [Double] = []
        latencies.reserveCapacity(points.count)
        let clock = ContinuousClock()
        let start = clock.now
        do {
            for p in points {
                let t0 = clock.now
                let found = try answer(p.coordinate)
                latencies.append((clock.now - t0).inSeconds * 1000)
                for n in found { try sink.write(NeighbourRows.line(qid: p.qid, n)) }
            }
            try sink.commit()
        } catch {
            sink.abandon()
            throw error
        }
        return Timing(latencies: latencies, seconds: (clock.now - start).inSeconds)
    }
}
