// The store and its query engine (product TrafficGeoQuery): ingest a feed into an SQLite file
// and ask for the incidents nearest a point, by exact WGS84 distance. No server, no PostgreSQL.
//
//     swift run example-nearest data/sample/lmst.de_DE.xml 50.94 6.96
import Foundation
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoSQLite
import TrafficGeoStore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("example-nearest: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let location = arguments.first ?? "data/sample/lmst.de_DE.xml"
var here = Coordinate(latitude: 50.94, longitude: 6.96)
if arguments.count > 1 {
    guard arguments.count == 3, let lat = Double(arguments[1]), let lon = Double(arguments[2]),
          (-90...90).contains(lat), (-180...180).contains(lon) else {
        fail("give FEED LAT LON, in degrees (LAT -90 … 90, LON -180 … 180)")
    }
    here = Coordinate(latitude: lat, longitude: lon)
}
let database = FileManager.default.temporaryDirectory.appendingPathComponent("example-nearest-\(getpid()).sqlite").path
func removeDatabase() { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
do {
    let input = try await FeedInput.open(location, timeout: .seconds(60))
    defer { input.discard() }
    // The store and the engine block their thread: from async code, on the store's threads.
    let (summary, nearest) = try await StoreThreads.run { [here] in
        let store = try SQLiteIncidentStore(path: database)
        let format = try FeedReading.format(of: input)
        // One transaction: every incident the reader gives is stored, or none if it fails.
        let summary = try store.ingest(source: "example", format: format) { emit in
            try FeedReading.reader(for: format).read(input, source: "example", handle: emit)
        }
        return (summary, try QueryEngine(store: store).nearest(to: here, limit: 3))
    }
    removeDatabase()
    let placed = summary.new - summary.withoutPosition
    print("\(location): \(summary.new) new incidents stored, \(placed) with a position")
    for result in nearest {
        let km = (result.distance ?? 0) / 1000
        print(String(format: "%7.1f km\t", km) + "\(result.incident.road ?? "-")\t\(result.incident.title)")
    }
} catch {
    removeDatabase()
    fail("\(error)")
}
