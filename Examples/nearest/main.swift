// The store and its query engine (product TrafficGeoQuery): ingest a feed into an SQLite file
// and ask for the incidents nearest a point, by exact WGS84 distance. No server, no PostgreSQL.
//
//     swift run example-nearest data/sample/lmst.de_DE.xml 50.94 6.96
import Foundation
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoSQLite

let arguments = Array(CommandLine.arguments.dropFirst())
let feed = arguments.first ?? "data/sample/lmst.de_DE.xml"
let here = Coordinate(latitude: arguments.count > 2 ? Double(arguments[1]) ?? 50.94 : 50.94,
                      longitude: arguments.count > 2 ? Double(arguments[2]) ?? 6.96 : 6.96)
let database = FileManager.default.temporaryDirectory.appendingPathComponent("example-nearest-\(getpid()).sqlite").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
do {
    let store = try SQLiteIncidentStore(path: database)
    let input = FeedInput(localFile: feed)
    let format = try FeedReading.format(of: input)
    // One transaction: every incident the reader gives is stored, or none if it fails.
    let summary = try store.ingest(source: "example", format: format) { emit in
        try FeedReading.reader(for: format).read(input, source: "example", handle: emit)
    }
    print("\(feed): \(summary.new) new incidents stored")
    for result in try QueryEngine(store: store).nearest(to: here, limit: 3) {
        let km = (result.distance ?? 0) / 1000
        print(String(format: "%7.1f km\t", km) + "\(result.incident.road ?? "-")\t\(result.incident.title)")
    }
} catch {
    FileHandle.standardError.write(Data("example-nearest: \(error)\n".utf8))
    exit(1)
}
