// The feed readers alone (product TrafficGeoFeeds): read a feed in any format trafficgeo knows
// (Atom, RSS, the Autobahn API, GeoJSON, CSV, DATEX II, WZDx, Open511; gzip or not), from a file,
// stdin (-) or an http(s) URL, told from its content, and print its incidents. No database, no
// server.
//
//     swift run example-read-feed data/sample/lmst.de_DE.xml
import Foundation
import TrafficGeoFeeds
import TrafficGeoModel

let location = CommandLine.arguments.dropFirst().first ?? "data/sample/lmst.de_DE.xml"
do {
    // A file, stdin or a download; a gzip-compressed one inflated.
    let input = try await FeedInput.open(location, timeout: .seconds(60))
    defer { input.discard() }
    let format = try FeedReading.format(of: input)
    let (incidents, skipped) = try FeedReading.readAll(input, source: "example", format: format)
    for incident in incidents.prefix(5) {
        let place = incident.position.map { String(format: "%.5f, %.5f", $0.latitude, $0.longitude) } ?? "no position (its words can be geocoded)"
        print("\(incident.road ?? "-")\t\(incident.category?.rawValue ?? "-")\t\(place)\t\(incident.title)")
    }
    print("\(location): \(format.rawValue), \(incidents.count) incidents, \(skipped.count) entries skipped")
} catch {
    // FeedError says what went wrong in words (no such file, not a feed, which entry broke).
    FileHandle.standardError.write(Data("example-read-feed: \(error)\n".utf8))
    exit(1)
}
