// Query benchmark: k-NN and radius queries on a store of N incidents, in-process and as a process.
//
//   swift run -c release trafficgeo-bench [--points 1000000] [--queries 1000] [--db /tmp/trafficgeo-bench-1M.sqlite]
//                                         [--process-runs 30] [--rebuild]
//
// Builds the store once (random points in Germany's bounding box, ingested through the CSV
// reader like any feed), then times each query alone and reports medians and p95; last it runs
// `trafficgeo near` as a fresh process repeatedly and reports the median wall time.
import Foundation
import TrafficGeo

struct Options {
    var points = 1_000_000
    var queries = 1000
    var db = "/tmp/trafficgeo-bench-1M.sqlite"
    var processRuns = 30
    var rebuild = false

    init(_ args: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < args.count else { fatalError("missing value for \(args[i - 1])") }
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--points": points = Int(value())!
            case "--queries": queries = Int(value())!
            case "--db": db = value()
            case "--process-runs": processRuns = Int(value())!
            case "--rebuild": rebuild = true
            case "-h", "--help":
                print("usage: trafficgeo-bench [--points N] [--queries N] [--db PATH] [--process-runs N] [--rebuild]")
                exit(0)
            default: fatalError("unknown argument \(args[i])")
            }
            i += 1
        }
    }
}

func seconds(_ d: Duration) -> Double { d.inSeconds }

func summary(_ samples: [Double]) -> String {
    let s = samples.sorted()
    let median = s[s.count / 2], p95 = s[min(s.count - 1, Int(Double(s.count) * 0.95))]
    return String(format: "median %.3f ms, p95 %.3f ms, min %.3f ms", median * 1000, p95 * 1000, s[0] * 1000)
}

let options = Options(CommandLine.arguments)
let clock = ContinuousClock()

if options.rebuild || !FileManager.default.fileExists(atPath: options.db) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: options.db + suffix) }
    let csv = options.db + ".csv"
    FileManager.default.createFile(atPath: csv, contents: nil)
    let handle = FileHandle(forWritingAtPath: csv)!
    var rng = SplitMix64(seed: 42)
    var text = "id,title,lat,lon\n"
    for i in 0..<options.points {
        let lat = Double.random(in: 47.3...55.0, using: &rng), lon = Double.random(in: 5.9...15.0, using: &rng)
        text += "p\(i),A\(i % 99 + 1) : bench,\(String(format: "%.6f", lat)),\(String(format: "%.6f", lon))\n"
        if text.utf8.count > 1 << 20 { handle.write(Data(text.utf8)); text = "" }
    }
    handle.write(Data(text.utf8))
    try handle.close()
    let store = try IncidentStore(path: options.db)
    let start = clock.now
    let result = try FeedIngestor(store: store, format: .csv, sourceName: "bench").ingest(FeedInput(localFile: csv))
    print(String(format: "built %d incidents in %.1f s (%.0f entries/s)", result.new, seconds(clock.now - start),
                 Double(result.new) / seconds(clock.now - start)))
    try? FileManager.default.removeItem(atPath: csv)
}

let store = try IncidentStore(path: options.db, readOnly: true)
let engine = try QueryEngine(store: store)
var rng = SplitMix64(seed: 7)
let queries = (0..<options.queries).map { _ in
    Coordinate(latitude: Double.random(in: 47.5...54.8, using: &rng), longitude: Double.random(in: 6.0...14.8, using: &rng))
}
// Warm the page cache and the statement cache.
for q in queries.prefix(100) { _ = try engine.nearest(to: q, limit: 10) }

var knn: [Double] = [], radius: [Double] = []
var found = 0
for q in queries {
    let t0 = clock.now
    let r = try engine.nearest(to: q, limit: 10)
    knn.append(seconds(clock.now - t0))
    precondition(r.count == 10)
}
for q in queries {
    let t0 = clock.now
    let r = try engine.within(radius: 10_000, of: q)
    radius.append(seconds(clock.now - t0))
    found += r.count
}
let stats = try store.statistics()
print("store: \(stats.total) incidents, \(options.queries) query points in Germany")
print("10-NN (in-process):        \(summary(knn))")
print("10 km radius (in-process): \(summary(radius)), \(found / options.queries) results per query on average")

// The CLI as a user runs it: a fresh process per query.
let cli = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("trafficgeo")
if FileManager.default.isExecutableFile(atPath: cli.path) {
    var walls: [Double] = []
    for q in queries.prefix(options.processRuns) {
        let process = Process()
        process.executableURL = cli
        process.arguments = ["near", "--db", options.db, "--lat", "\(q.latitude)", "--lon", "\(q.longitude)", "--format", "json"]
        process.standardOutput = FileHandle.nullDevice
        let t0 = clock.now
        try process.run()
        process.waitUntilExit()
        walls.append(seconds(clock.now - t0))
        precondition(process.terminationStatus == 0)
    }
    print("`trafficgeo near` process wall time: \(summary(walls)) over \(walls.count) runs")
} else {
    print("(build the trafficgeo product in the same configuration to time the process: \(cli.path) is missing)")
}
