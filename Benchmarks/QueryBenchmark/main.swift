// The benchmark suite of trafficgeo's hot paths (docs/benchmarks.md).
//
//   swift build -c release && .build/release/trafficgeo-bench [SUITE ...] [options]
//
// Suites (default: all but watch): geodesic, projection, output, ingest, knn, radius, process;
// watch (100 standing queries over a copy of the query store, matched after ingests that change
// 10,000 incidents; only when named).
//   --points N            incidents in the query store (1,000,000)
//   --queries N           query points for knn/radius (1,000)
//   --atom-entries N      entries of the Atom feed for `ingest` (100,000)
//   --db PATH             the query store, built once and reused (/tmp/trafficgeo-bench-1M.sqlite)
//   --rebuild             rebuild it
//   --process-runs N      fresh `trafficgeo near` processes to time (30)
//   --save-baseline FILE  write the results as JSON
//   --compare FILE        compare with a saved baseline
//
// Every benchmark reports the median (and p95) time of one operation. The machines this runs on
// are noisy, so each run also times a fixed reference loop, and `--compare` compares each
// benchmark's ratio to that loop between the two runs (a change of the machine's speed cancels
// out); the absolute times are printed beside it.
import Foundation
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoOutput
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoSQLite
import TrafficGeoStore
import TrafficGeoTestSupport
import TrafficGeoPROJ
import TrafficGeoWatch

/// One benchmark's result: seconds per operation.
struct Measurement: Codable {
    var name: String
    var median: Double
    var p95: Double
    var samples: Int
    /// median / the reference loop's median in the same run.
    var relative: Double = 0
    var note: String?
}

let clock = ContinuousClock()
var results: [Measurement] = []

/// Times `body` `samples` times (after `warmup` untimed runs); each run does `operations` operations.
@MainActor @discardableResult
func measure(_ name: String, samples: Int, warmup: Int = 1, operations: Int = 1, note: String? = nil,
             _ body: () throws -> Void) rethrows -> Measurement {
    for _ in 0..<warmup { try body() }
    var times: [Double] = []
    for _ in 0..<samples {
        let t0 = clock.now
        try body()
        times.append((clock.now - t0).inSeconds / Double(operations))
    }
    return record(name, times: times, note: note)
}

/// The median and 95th percentile of `times` (seconds per operation), kept and printed.
@MainActor func record(_ name: String, times: [Double], note: String?) -> Measurement {
    let sorted = times.sorted()
    let m = Measurement(name: name, median: sorted[sorted.count / 2], p95: sorted[min(sorted.count - 1, sorted.count * 95 / 100)],
                        samples: times.count, note: note)
    results.append(m)
    print("\(padded(name)) median \(format(m.median))  p95 \(format(m.p95))\(note.map { "  (\($0))" } ?? "")")
    return m
}

/// Like `measure` for several benchmarks at once, run in turn within each round; also each
/// benchmark's time in every round (seconds per operation), for ratios taken round by round.
/// `untimed` runs after its benchmark, outside the timing.
@MainActor func measureInterleaved(rounds: Int, operations: Int,
                                   _ specs: [(name: String, note: String?, body: () throws -> Void, untimed: (() -> Void)?)])
    throws -> (results: [Measurement], times: [[Double]]) {
    var times = [[Double]](repeating: [], count: specs.count)
    for _ in 0..<rounds {
        for (i, spec) in specs.enumerated() {
            let t0 = clock.now
            try spec.body()
            times[i].append((clock.now - t0).inSeconds / Double(operations))
            spec.untimed?()
        }
    }
    return (specs.indices.map { record(specs[$0].name, times: times[$0], note: specs[$0].note) }, times)
}

/// Median, lowest and highest of some values.
func spread(_ values: [Double]) -> (median: Double, low: Double, high: Double) {
    let sorted = values.sorted()
    return (sorted[sorted.count / 2], sorted.first!, sorted.last!)
}

func padded(_ name: String) -> String { name.count >= 38 ? name : name + String(repeating: " ", count: 38 - name.count) }

func format(_ seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: return String(format: "%7.1f ns", seconds * 1e9)
    case ..<1e-3: return String(format: "%7.2f µs", seconds * 1e6)
    case ..<1: return String(format: "%7.3f ms", seconds * 1e3)
    default: return String(format: "%7.3f s ", seconds)
    }
}

let options = Options(CommandLine.arguments)
var rng = SplitMix64(seed: 7)
@MainActor func germany() -> Coordinate {
    Coordinate(latitude: Double.random(in: 47.5...54.8, using: &rng), longitude: Double.random(in: 6.0...14.8, using: &rng))
}

// The reference: fixed integer and memory work, independent of trafficgeo's code.
var sink: UInt64 = 0
let reference = try measure("reference loop (machine speed)", samples: 15, operations: 1) {
    var table = [UInt64](repeating: 0, count: 1 << 16)
    var x: UInt64 = 1
    for i in 0..<2_000_000 {
        x = x &* 6364136223846793005 &+ 1442695040888963407
        table[Int(x >> 48)] &+= UInt64(i)
    }
    sink &+= table[7]
}

let points = (0..<10_000).map { _ in germany() }
let origin = Coordinate(latitude: 50.94, longitude: 6.96)

if options.suites.contains("geodesic") {
    try measure("geodesic inverse", samples: 15, operations: points.count) {
        for p in points { sink &+= UInt64(Geodesic.distance(from: origin, to: p)) }
    }
    // What a query does per candidate row: the geocentric point, then the short-line distance.
    let nearby = points.map { Geodesic.direct(from: origin, bearing: $0.longitude * 24, distance: ($0.latitude - 47) * 1_000) }
    let o = GeocentricPoint(origin)
    try measure("geocentric point (closed form)", samples: 15, operations: nearby.count) {
        for p in nearby { sink &+= UInt64(bitPattern: Int64(GeocentricPoint(p).z)) }
    }
    let geocentric = nearby.map(GeocentricPoint.init)
    try measure("short-line geodesic (< 30 km)", samples: 15, operations: geocentric.count) {
        for p in geocentric { sink &+= UInt64(Geodesic.shortLineDistance(o, p)!) }
    }
}

if options.suites.contains("projection") {
    let projector = try Projector(target: "EPSG:4978")
    try measure("PROJ EPSG:4326 → 4978", samples: 15, operations: points.count) {
        for p in points { sink &+= UInt64(bitPattern: Int64(try projector.forward(p).x)) }
    }
}

if options.suites.contains("output") {
    let incidents: [QueryResult] = points.prefix(2000).enumerated().map { i, p in
        var incident = Incident(source: "bench", id: "id-\(i)", title: "A\(i % 99 + 1) : Koeln - Olpe",
                                summary: "Zwischen AS Wenden und AS Krombach Stau, \(i % 7) km")
        incident.position = p
        incident.category = .queue
        incident.updated = Date(timeIntervalSince1970: 1_747_627_200)
        return QueryResult(stored: StoredIncident(storeID: Int64(i), incident: incident, firstSeen: Date(), lastChanged: Date()), distance: 1234.5, bearing: 90)
    }
    let path = NSTemporaryDirectory() + "trafficgeo-bench-output"
    for format in [OutputFormat.geojson, .json, .csv, .annotations] {
        try measure("output \(format.rawValue) (per incident)", samples: 15, operations: incidents.count) {
            let textSink = try TextSink(path: path)
            let writer = format.makeWriter(sink: textSink)
            try writer.begin()
            for r in incidents { try writer.write(r) }
            try writer.end()
            try textSink.commit()
        }
    }
    try? FileManager.default.removeItem(atPath: path)
}

if options.suites.contains("ingest") {
    // A freiefahrt-shaped Atom feed whose weblinks carry the coordinates (like scripts/make-big-feed.py).
    let folder = NSTemporaryDirectory() + "trafficgeo-bench-ingest"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let feed = folder + "/feed.xml"
    var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<title>bench</title>\n"
    FileManager.default.createFile(atPath: feed, contents: nil)
    let handle = FileHandle(forWritingAtPath: feed)!
    for i in 0..<options.atomEntries {
        let p = germany(), road = i % 99 + 1
        text += """
              <entry><updated>2025-05-19T04:\(String(format: "%02d", i % 60)):00Z</updated><title>A\(road) : Koeln - Olpe</title>
            <id>syn-\(i)</id><link type="text/html" rel="alternate" href="https://traffic.example/?id=syn-\(i)&amp;lat=\(String(format: "%.6f", p.latitude))&amp;lon=\(String(format: "%.6f", p.longitude))"/>
            <summary>Zwischen AS Wenden und AS Krombach in beiden Richtungen Stau, \(i % 7) km</summary></entry>

            """
        if text.utf8.count > 1 << 20 { handle.write(Data(text.utf8)); text = "" }
    }
    handle.write(Data((text + "</feed>\n").utf8))
    try handle.close()
    let n = options.atomEntries

    // The three parts of an ingest, each alone: parse, project, store + index; and the whole
    // ingest. Parse, store and whole take turns within each round, so that the machine's drift
    // (±30 % within minutes here) falls on all three alike.
    var parsed = try FeedReading.readAll(FeedInput(localFile: feed), source: "bench").incidents
    precondition(parsed.count == n && parsed.allSatisfy { $0.position != nil })
    var round = 0
    // What a parse produced is freed outside its timing (the last round's incidents were freed
    // inside it before): in an ingest the store frees them, as it takes them over.
    var fresh: [Incident] = []
    let (rounds, times) = try measureInterleaved(rounds: 7, operations: n, [
        ("ingest: parse Atom (per entry)", nil, {
            fresh = try FeedReading.readAll(FeedInput(localFile: feed), source: "bench").incidents
        }, {
            swap(&parsed, &fresh)
            fresh = []
        }),
        ("ingest: store + index (per entry)", nil, {
            round += 1
            let store = try SQLiteIncidentStore(path: "\(folder)/store-\(round).sqlite")
            _ = try store.ingest(source: "bench") { emit in for incident in parsed { try emit(.incident(incident)) } }
        }, nil),
        ("ingest: whole Atom ingest (per entry)", "FeedIngestor, as `trafficgeo ingest`", {
            round += 1
            let store = try SQLiteIncidentStore(path: "\(folder)/store-\(round).sqlite")
            _ = try FeedIngestor(store: store).ingest(FeedInput(localFile: feed))
        }, nil),
    ])
    let (store, whole) = (rounds[1], rounds[2])
    // The index's projection: geocentric coordinates in closed form (checked against PROJ in the tests).
    let project = try measure("ingest: project (per entry)", samples: 5, operations: n) {
        for incident in parsed { sink &+= UInt64(bitPattern: Int64(GeocentricPoint(incident.position!).z)) }
    }
    // Two views of the same cost: what parsing and projecting take on one core, and how much
    // longer the real ingest (which reads on its own thread, `ReadAhead`) takes than storing and
    // indexing the same incidents. Each taken round by round (the parts of a round run seconds
    // apart, while this machine's speed drifts ±30 % over minutes), then the median.
    let oneCore = spread(times[0].indices.map { (times[0][$0] + project.median) / times[1][$0] })
    let added = spread(times[2].indices.map { (times[2][$0] - times[1][$0]) / times[1][$0] })
    print(String(format: "ingest: %.0f entries/s; parsing + projection = %.2f × the store + index time on one core (rounds %.2f–%.2f); "
                     + "the whole ingest adds %.2f × the store + index time (rounds %.2f–%.2f)",
                 1 / whole.median, oneCore.median, oneCore.low, oneCore.high, added.median, added.low, added.high))
}

/// The query store of `options.points` random incidents in and around Germany (built once).
@MainActor func buildQueryStoreIfNeeded() throws {
    if options.rebuild || !FileManager.default.fileExists(atPath: options.db) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: options.db + suffix) }
        let csv = options.db + ".csv"
        FileManager.default.createFile(atPath: csv, contents: nil)
        let handle = FileHandle(forWritingAtPath: csv)!
        var build = SplitMix64(seed: 42)
        var text = "id,title,lat,lon\n"
        for i in 0..<options.points {
            let lat = Double.random(in: 47.3...55.0, using: &build), lon = Double.random(in: 5.9...15.0, using: &build)
            text += "p\(i),A\(i % 99 + 1) : bench,\(String(format: "%.6f", lat)),\(String(format: "%.6f", lon))\n"
            if text.utf8.count > 1 << 20 { handle.write(Data(text.utf8)); text = "" }
        }
        handle.write(Data(text.utf8))
        try handle.close()
        let store = try SQLiteIncidentStore(path: options.db)
        let start = clock.now
        let result = try FeedIngestor(store: store, format: .csv, sourceName: "bench").ingest(FeedInput(localFile: csv))
        print(String(format: "built %d incidents in %.1f s (%.0f entries/s)", result.new, (clock.now - start).inSeconds,
                     Double(result.new) / (clock.now - start).inSeconds))
        try? FileManager.default.removeItem(atPath: csv)
    }
}

if options.suites.contains("knn") || options.suites.contains("radius") || options.suites.contains("process") {
    try buildQueryStoreIfNeeded()
    let store = try SQLiteIncidentStore(path: options.db, readOnly: true)
    let engine = QueryEngine(store: store)
    let queries = (0..<options.queries).map { _ in germany() }
    // Page cache, statements. (Synchronously on the main thread, as every measurement below: the
    // engine's own speed, without the hop async callers make to a store thread.)
    func warmUp() throws { for q in queries.prefix(100) { _ = try engine.nearestNeighbours(to: q, limit: 10) } }
    try warmUp()
    var index = 0
    func nextQuery() -> Coordinate { defer { index = (index + 1) % queries.count }; return queries[index] }

    if options.suites.contains("knn") {
        try measure("10-NN, ids + distances", samples: queries.count) { _ = try engine.nearestNeighbours(to: nextQuery(), limit: 10) }
        try measure("10-NN, whole incidents", samples: queries.count) { _ = try engine.nearest(to: nextQuery(), limit: 10) }
    }
    if options.suites.contains("radius") {
        var found = 0
        try measure("10 km radius, ids + distances", samples: queries.count) {
            found += try engine.withinNeighbours(radius: 10_000, of: nextQuery()).count
        }
        try measure("10 km radius, whole incidents", samples: queries.count,
                    note: "\(found / (queries.count + 1)) results a query") { _ = try engine.within(radius: 10_000, of: nextQuery()) }
    }
    if options.suites.contains("process") {
        let cli = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("trafficgeo")
        if FileManager.default.isExecutableFile(atPath: cli.path) {
            // posix_spawn, not Foundation's Process: on Linux, Process spent ~35 ms of its own per
            // launch (closing every possible file descriptor), which hid the process being timed.
            try measure("`trafficgeo near` fresh process", samples: options.processRuns, warmup: 2) {
                let q = nextQuery()
                let arguments = [cli.path, "near", "--db", options.db, "--lat", "\(q.latitude)", "--lon", "\(q.longitude)", "--format", "json"]
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
                var argv = arguments.map { strdup($0) } + [nil]
                defer { for a in argv { free(a) } }
                var pid = pid_t()
                guard posix_spawn(&pid, cli.path, &actions, nil, &argv, environ) == 0 else { fatalError("cannot start \(cli.path)") }
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                precondition(status == 0, "trafficgeo near failed")
            }
        } else {
            print("(build the trafficgeo product in the same configuration to time the process: \(cli.path) is missing)")
        }
    }
}

if options.suites.contains("watch") {
    // 100 standing queries (circles of 25 km, some with a road filter, boxes, route corridors)
    // over a copy of the 1M store; each round an ingest changes 10,000 random incidents (half of
    // them moved ~5 km) and the watches are matched against its change-feed events. The time
    // from the ingest's commit to every watch's events is the figure (issue 17: ≤ 1 s).
    try buildQueryStoreIfNeeded()
    let copy = options.db + ".watch.sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
    // The file and its write-ahead log (what a reader would see); the copy migrates on opening.
    _ = try SQLiteIncidentStore(path: options.db, readOnly: true)
    for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: options.db + suffix) {
        try FileManager.default.copyItem(atPath: options.db + suffix, toPath: copy + suffix)
    }
    let store = try SQLiteIncidentStore(path: copy)
    var queries: [StandingQuery] = []
    for k in 0..<100 {
        let c = germany()
        var filter = IncidentFilter()
        let area: WatchArea
        switch k % 10 {
        case 0..<5: area = .circle(center: c, radius: 25_000)
        case 5, 6: area = .circle(center: c, radius: 25_000); filter.roads = ["A\(k % 99 + 1)"]
        case 7, 8: area = .box(LonLatBox(west: c.longitude, south: c.latitude, east: c.longitude + 0.4, north: c.latitude + 0.25))
        default:
            let route = (0..<6).map { i in Coordinate(latitude: c.latitude + Double(i) * 0.05, longitude: c.longitude + Double(i) * 0.08) }
            area = .corridor(route: route, buffer: 2_000)
        }
        queries.append(StandingQuery(name: "w\(k)", area: area, filter: filter))
    }
    var matcher = WatchMatcher(queries: queries, state: nil)
    var t0 = clock.now
    var initial = 0
    try await matcher.poll(store) { events, _ in initial += events.count }
    print(String(format: "watch: 100 standing queries started over %d incidents in %.2f s (%d inside)", options.points, (clock.now - t0).inSeconds, initial))
    var matchTimes: [Double] = [], ingestTimes: [Double] = []
    var eventCounts: [Int] = []
    var change = SplitMix64(seed: 99)
    for round in 0..<5 {
        var changed = Set<Int>()
        while changed.count < 10_000 { changed.insert(Int.random(in: 0..<options.points, using: &change)) }
        let current = try store.incidents(ids: [])   // warm the statement cache
        _ = current
        var updates: [Incident] = []
        try store.all(filter: IncidentFilter(), locatedOnly: true) { result in
            guard let n = Int(result.incident.id.dropFirst()), changed.contains(n) else { return }
            var incident = result.incident
            incident.title = "A\(n % 99 + 1) : bench, round \(round)"
            if n % 2 == 0, let p = incident.position {
                incident.position = Coordinate(latitude: min(89, p.latitude + 0.045), longitude: p.longitude)
            }
            updates.append(incident)
        }
        t0 = clock.now
        let summary = try await store.perform { [updates] store in try store.ingest(source: "bench") { emit in for i in updates { try emit(.incident(i)) } } }
        ingestTimes.append((clock.now - t0).inSeconds)
        precondition(summary.updated == 10_000, "the round changed \(summary.updated), not 10,000")
        t0 = clock.now
        var events = 0
        try await matcher.poll(store) { batch, _ in events += batch.count }
        matchTimes.append((clock.now - t0).inSeconds)
        eventCounts.append(events)
    }
    _ = record("watch: 10,000 changes × 100 queries", times: matchTimes,
               note: "events a round \(eventCounts.map(String.init).joined(separator: ", ")); the ingest itself \(format(spread(ingestTimes).median))")
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
}

for i in results.indices { results[i].relative = results[i].median / reference.median }

if let path = options.saveBaseline {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(results).write(to: URL(fileURLWithPath: path))
    print("baseline written to \(path)")
}

if let path = options.compare {
    guard let data = FileManager.default.contents(atPath: path),
          let baseline = try? JSONDecoder().decode([Measurement].self, from: data) else { fail("cannot read the baseline \(path)") }
    print("\ncompared with \(path) (ratio of each benchmark to the reference loop, this run ÷ baseline; < 1 = faster):")
    for m in results where m.name != reference.name {
        guard let old = baseline.first(where: { $0.name == m.name }) else { continue }
        let change = m.relative / old.relative
        print("  \(padded(m.name)) \(String(format: "%5.2f", change))×   (\(format(old.median)) → \(format(m.median)))"
              + (change > 1.2 ? "  SLOWER" : change < 0.83 ? "  faster" : ""))
    }
}
if sink == 42 { print("") } // keeps the optimiser from dropping the timed work
