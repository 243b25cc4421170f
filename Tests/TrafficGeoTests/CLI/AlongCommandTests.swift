import Foundation
import Testing

/// `trafficgeo along` as a user runs it (the shipped release binary: scripts/test), and
/// `serve`'s `route=` giving the same answer in the same order.
@Suite("along: the command and serve's route=")
struct AlongCommandTests {
    static func cli(_ arguments: [String], folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await TestSupport.runCLI(arguments, folder: folder)
    }

    /// Incidents beside a route across the antimeridian (Fiji, east over 180°), one off it.
    static let feed = """
        {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"far-east","geometry":{"type":"Point","coordinates":[-178.5,-17.005]},"properties":{"title":"Kings Road : far east","category":"accident"}},
        {"type":"Feature","id":"west","geometry":{"type":"Point","coordinates":[178.5,-17.005]},"properties":{"title":"Queens Road : west","category":"roadworks"}},
        {"type":"Feature","id":"just-east","geometry":{"type":"Point","coordinates":[-179.9,-16.995]},"properties":{"title":"Kings Road : just east","category":"closure"}},
        {"type":"Feature","id":"just-west","geometry":{"type":"Point","coordinates":[179.9,-16.995]},"properties":{"title":"Queens Road : just west","category":"queue"}},
        {"type":"Feature","id":"off-route","geometry":{"type":"Point","coordinates":[179.9,-17.5]},"properties":{"title":"Elsewhere","category":"accident"}}
        ]}
        """
    static let route = #"{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[178.0,-17],[179.6,-17],[-179.6,-17],[-178.0,-17]]}}"#
    static let gpx = """
        <?xml version="1.0"?>
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
        <trkpt lat="-17" lon="178.0"/><trkpt lat="-17" lon="179.6"/><trkpt lat="-17" lon="-179.6"/><trkpt lat="-17" lon="-178.0"/>
        </trkseg></trk></gpx>
        """

    @Test(.enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
    func alongAnswersInOrderFromGeoJSONAndGPXAlike() async throws {
        let folder = TestSupport.temporaryDirectory()
        let db = folder.appendingPathComponent("db.sqlite").path
        let feed = try TestSupport.write(Self.feed, name: "fiji.geojson", in: folder)
        let route = try TestSupport.write(Self.route, name: "route.geojson", in: folder)
        let gpx = try TestSupport.write(Self.gpx, name: "route.gpx", in: folder)
        #expect(try await Self.cli(["ingest", "--db", db, feed.path], folder: folder).status == 0)

        let json = try await Self.cli(["along", "--db", db, "--route", route.path, "--buffer", "2km", "--format", "json"], folder: folder)
        #expect(json.status == 0, Comment(rawValue: json.stderr))
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(answers.map { $0["id"] as? String } == ["west", "just-west", "just-east", "far-east"])
        let along = answers.compactMap { $0["alongRouteMeters"] as? Double }
        #expect(along.count == 4 && along == along.sorted())
        #expect(answers.allSatisfy { ($0["distanceMeters"] as? Double ?? .infinity) <= 2_000 })

        let fromGPX = try await Self.cli(["along", "--db", db, "--route", gpx.path, "--buffer", "2km", "--format", "json"], folder: folder)
        #expect(fromGPX.stdout == json.stdout, "a GPX track gives the same answer as the GeoJSON line")

        let csv = try await Self.cli(["along", "--db", db, "--route", route.path, "--format", "csv"], folder: folder)
        #expect(csv.stdout.components(separatedBy: "\r\n").first?.hasSuffix(",along_m") == true)

        let cards = try await Self.cli(["along", "--db", db, "--route", route.path, "--format", "annotations"], folder: folder)
        #expect(cards.stdout.contains("along the route,") && cards.stdout.contains("off it"), Comment(rawValue: cards.stdout))

        let table = try await Self.cli(["along", "--db", db, "--route", route.path, "--format", "table"], folder: folder)
        #expect(table.stdout.hasPrefix("ALONG") && table.stdout.contains("OFF"), Comment(rawValue: table.stdout))

        // Nothing within a tiny buffer: said on stderr, exit 0, empty answer.
        let none = try await Self.cli(["along", "--db", db, "--route", route.path, "--buffer", "10m", "--format", "json"], folder: folder)
        #expect(none.status == 0 && none.stderr.contains("nothing within 10 m of the route"), Comment(rawValue: none.stderr))

        // Mistakes: a missing file, a route that is not a line, a bad buffer.
        let missing = try await Self.cli(["along", "--db", db, "--route", folder.appendingPathComponent("nope.gpx").path], folder: folder)
        #expect(missing.status == 66 && missing.stderr.contains("does not exist"), Comment(rawValue: missing.stderr))
        let point = try TestSupport.write(#"{"type":"Point","coordinates":[1,2]}"#, name: "point.geojson", in: folder)
        let notALine = try await Self.cli(["along", "--db", db, "--route", point.path], folder: folder)
        #expect(notALine.status == 65 && notALine.stderr.contains("LineString"), Comment(rawValue: notALine.stderr))
        let badBuffer = try await Self.cli(["along", "--db", db, "--route", route.path, "--buffer", "wide"], folder: folder)
        #expect(badBuffer.status == 64 && badBuffer.stderr.contains("--buffer"), Comment(rawValue: badBuffer.stderr))
    }
}
