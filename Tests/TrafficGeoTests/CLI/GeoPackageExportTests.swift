import Foundation
import Testing
import TrafficGeoTestSupport

/// `trafficgeo export` into a GeoPackage and into CSV in another CRS, read back by GDAL.
@Suite("GeoPackage and other CRSs on the command line", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct GeoPackageExportTests {
    let folder = TestSupport.temporaryDirectory()
    var db: String { folder.appendingPathComponent("db.sqlite").path }

    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let exe = try #require(TestSupport.cliExecutable)
        return try TestSupport.run(exe.path, arguments)
    }

    /// Three incidents: two points, one along a road (a segment), one without a position.
    func ingest() throws {
        let feed = """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6.96,50.94]},"properties":{"title":"A4 : Köln - Olpe","category":"accident"}},
            {"type":"Feature","id":"b","geometry":{"type":"LineString","coordinates":[[11.5,48.1],[11.6,48.2],[11.7,48.25]]},"properties":{"title":"A9 it's roadworks","category":"roadworks"}},
            {"type":"Feature","id":"c","geometry":{"type":"Point","coordinates":[13.4,52.5]},"properties":{"title":"A100 : Berlin"}},
            {"type":"Feature","id":"d","geometry":null,"properties":{"title":"somewhere"}}]}
            """
        let path = try TestSupport.write(feed, name: "feed.geojson", in: folder).path
        let r = try cli(["ingest", "--quiet", "--no-geocode", "--db", db, path])
        try #require(r.status == 0, Comment(rawValue: r.stderr))
    }

    @Test(.enabled(if: TestSupport.which("ogrinfo") != nil, "GDAL's ogrinfo is not installed (apt install gdal-bin)"))
    func aGeoPackageOpensInGDALWithItsLayersAndCRS() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let gpkg = try exportedGeoPackage()
        let layers = try TestSupport.run(TestSupport.which("ogrinfo")!, ["-q", gpkg])
        #expect(layers.stdout.contains("incidents (Point)"), Comment(rawValue: layers.stdout))
        #expect(layers.stdout.contains("incident_segments (Line String)"), Comment(rawValue: layers.stdout))
        let points = try TestSupport.run(TestSupport.which("ogrinfo")!, ["-so", gpkg, "incidents"])
        #expect(points.stdout.contains("Feature Count: 4"), Comment(rawValue: points.stdout))
        #expect(points.stdout.contains("UTM zone 32N"), Comment(rawValue: points.stdout))
        #expect(points.stdout.contains("ID[\"EPSG\",25832]"), Comment(rawValue: points.stdout))
        let lines = try TestSupport.run(TestSupport.which("ogrinfo")!, ["-so", gpkg, "incident_segments"])
        #expect(lines.stdout.contains("Feature Count: 1"), Comment(rawValue: lines.stdout))
        // The spatial index answers: only Köln lies in a box around it (EPSG:25832 metres).
        let spatial = try TestSupport.run(TestSupport.which("ogrinfo")!, ["-q", "-al", "-spat", "350000", "5640000", "365000", "5650000", gpkg, "incidents"])
        #expect(spatial.stdout.contains("A4 : Köln - Olpe") && !spatial.stdout.contains("Berlin"), Comment(rawValue: spatial.stdout))
    }

    /// The exported point is where PROJ's own cs2cs puts Köln in EPSG:25832.
    @Test(.enabled(if: TestSupport.which("ogrinfo") != nil && TestSupport.which("cs2cs") != nil,
                   "GDAL's ogrinfo or PROJ's cs2cs is not installed (apt install gdal-bin proj-bin)"))
    func aGeoPackagesPointsAreWhereCs2csPutsThem() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let gpkg = try exportedGeoPackage()
        let expected = try TestSupport.run(TestSupport.which("cs2cs")!, ["-f", "%.3f", "EPSG:4326", "EPSG:25832"], stdin: "50.94 6.96\n").stdout
            .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        let features = try TestSupport.run(TestSupport.which("ogrinfo")!, ["-q", "-al", "-where", "id = 'a'", gpkg, "incidents"]).stdout
        let point = try #require(features.range(of: #"POINT \(([0-9.]+) ([0-9.]+)\)"#, options: .regularExpression).map { features[$0] })
        let numbers = point.dropFirst(7).dropLast().split(separator: " ").compactMap { Double($0) }
        #expect(abs(numbers[0] - Double(expected[0])!) < 0.001 && abs(numbers[1] - Double(expected[1])!) < 0.001, "\(point) vs \(expected)")
    }

    static let gpkgValidator = "/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_gpkg.py"

    /// GDAL's own GeoPackage validation (python3-gdal's validate_gpkg.py).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: Self.gpkgValidator) && FileManager.default.fileExists(atPath: "/usr/bin/python3"),
                   "python3-gdal's validate_gpkg.py is not installed (apt install python3-gdal)"))
    func aGeoPackagePassesGDALsValidation() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try TestSupport.run("/usr/bin/python3", [Self.gpkgValidator, try exportedGeoPackage()])
        #expect(check.status == 0, Comment(rawValue: check.stdout + check.stderr))
    }

    /// The samples exported to a GeoPackage in EPSG:25832.
    func exportedGeoPackage() throws -> String {
        try ingest()
        let gpkg = folder.appendingPathComponent("out.gpkg").path
        let r = try cli(["export", "--db", db, "--include-unlocated", "-o", gpkg, "--crs", "EPSG:25832"])
        try #require(r.status == 0, Comment(rawValue: r.stderr))
        return gpkg
    }

    @Test func csvInAnotherCRSNamesItsColumnsForTheAxes() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try ingest()
        let r = try cli(["export", "--db", db, "--format", "csv", "--crs", "EPSG:31467"])
        try #require(r.status == 0, Comment(rawValue: r.stderr))
        let lines = r.stdout.split(separator: "\r\n")
        #expect(lines.first?.hasPrefix("id,title,subtitle,easting,northing,") == true)
        let koeln = try #require(lines.first { $0.hasPrefix("a,") }).split(separator: ",", omittingEmptySubsequences: false)
        let (east, north) = (try #require(Double(koeln[3])), try #require(Double(koeln[4])))
        // Gauss-Krüger zone 3 (central meridian 9°E, false easting 3,500 km): Köln is west of it.
        #expect((3_300_000...3_400_000).contains(east) && (5_640_000...5_660_000).contains(north), "\(east) \(north)")
        // GeoJSON stays WGS84, and says so; a CRS PROJ does not know is refused; a GeoPackage needs a file.
        let geojson = try cli(["export", "--db", db, "--format", "geojson", "--crs", "EPSG:25832"])
        #expect(geojson.status == 0 && geojson.stderr.contains("RFC 7946") && geojson.stdout.contains("[6.96,50.94]"))
        let unknown = try cli(["export", "--db", db, "--format", "csv", "--crs", "EPSG:999999"])
        #expect(unknown.status == 64 && unknown.stderr.contains("EPSG:999999"), Comment(rawValue: unknown.stderr))
        // Positions the CRS cannot hold (the pole in Web Mercator, Köln in UTM zone 50N) are left
        // empty and counted, never written as meaningless numbers.
        let pole = """
            {"type":"Feature","id":"pole","geometry":{"type":"Point","coordinates":[0,90]},"properties":{"title":"Nordpol"}}
            """
        _ = try cli(["ingest", "--quiet", "--no-geocode", "--db", db, try TestSupport.write(pole, name: "pole.geojson", in: folder).path])
        let mercator = try cli(["export", "--db", db, "--format", "csv", "--crs", "EPSG:3857"])
        #expect(mercator.status == 0 && mercator.stdout.contains("\r\npole,Nordpol,,,,"), Comment(rawValue: mercator.stdout))
        #expect(mercator.stderr.contains("1 positions cannot be expressed in EPSG:3857"), Comment(rawValue: mercator.stderr))
        let far = try cli(["export", "--db", db, "--format", "csv", "--crs", "EPSG:32650"])
        #expect(far.stderr.contains("4 positions cannot be expressed"), Comment(rawValue: far.stderr))
        let noFile = try cli(["export", "--db", db, "--format", "gpkg"])
        #expect(noFile.status == 64 && noFile.stderr.contains("-o"), Comment(rawValue: noFile.stderr))
    }

    /// A CSV of UTM coordinates lands where cs2cs puts it; a row with easting and northing
    /// swapped is reported and keeps no position; a GeoJSON file's legacy crs member is read.
    @Test(.enabled(if: TestSupport.which("cs2cs") != nil, "cs2cs is not installed (apt install proj-bin)"))
    func ingestInAnotherCRSLandsWhereCs2csSays() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SplitMix64(seed: 32)
        let rows = (0..<50).map { i in
            (id: "p\(i)", e: Double.random(in: 300_000...800_000, using: &generator), n: Double.random(in: 5_250_000...6_050_000, using: &generator))
        }
        let csv = "id;title;Rechtswert;Hochwert\n" + rows.map { "\($0.id);incident \($0.id);\($0.e);\($0.n)" }.joined(separator: "\n")
            + "\nswapped;A1 swapped;5645323.376;356693.234\n"
        let path = try TestSupport.write(csv, name: "utm.csv", in: folder).path
        let r = try cli(["ingest", "--no-geocode", "--db", db, "--crs", "EPSG:25832", path])
        try #require(r.status == 0, Comment(rawValue: r.stderr))
        #expect(r.stderr.contains("[swapped]") && r.stderr.contains("x and y swapped?"), Comment(rawValue: r.stderr))
        let expected = try TestSupport.run(TestSupport.which("cs2cs")!, ["-f", "%.9f", "EPSG:25832", "EPSG:4326"],
                                           stdin: rows.map { "\($0.e) \($0.n)" }.joined(separator: "\n") + "\n").stdout
            .split(separator: "\n").map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) } }
        let stored = try cli(["export", "--db", db, "--format", "json", "--include-unlocated"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(stored.stdout.utf8)) as? [[String: Any]])
        var byID: [String: (Double, Double)] = [:]
        for item in items {
            if let c = item["coordinate"] as? [String: Double], let id = item["id"] as? String { byID[id] = (c["latitude"]!, c["longitude"]!) }
        }
        for (row, reference) in zip(rows, expected) {
            let got = try #require(byID[row.id], "\(row.id) has no position")
            // Stored to the full double; shown with 6 decimals (0.1 m).
            #expect(abs(got.0 - reference[0]) < 1e-6 && abs(got.1 - reference[1]) < 1e-6, "\(row.id): \(got) vs \(reference)")
        }
        #expect(byID["swapped"] == nil && items.count == rows.count + 1)

        let legacy = """
            {"type":"FeatureCollection","name":"gk","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::31467"}},
             "features":[{"type":"Feature","id":"g","geometry":{"type":"Point","coordinates":[3356693.234,5646951.916]},"properties":{"title":"GK"}}]}
            """
        let gk = try cli(["ingest", "--quiet", "--no-geocode", "--db", db, try TestSupport.write(legacy, name: "gk.geojson", in: folder).path])
        try #require(gk.status == 0, Comment(rawValue: gk.stderr))
        let csvOut = try cli(["export", "--db", db, "--format", "csv"]).stdout
        #expect(csvOut.contains("\r\ng,GK,,50.94,6.96,"), Comment(rawValue: csvOut))
        let unknown = try cli(["ingest", "--db", db, "--crs", "EPSG:1234567", path])
        #expect(unknown.status == 64 && unknown.stderr.contains("EPSG:1234567"), Comment(rawValue: unknown.stderr))
        // A projection PROJ cannot invert cannot be read from.
        let noInverse = try cli(["ingest", "--db", db, "--crs", "+proj=bacon +R=6400000 +type=crs", path])
        #expect(noInverse.status == 64 && noInverse.stderr.contains("no inverse"), Comment(rawValue: noInverse.stderr))
    }

    /// PROJ is opened only for another CRS: the executable does not link it (linking cost a
    /// fresh `near` 14 ms, docs/benchmarks.md).
    @Test(.enabled(if: TestSupport.which("ldd") != nil, "no ldd here"))
    func theExecutableDoesNotLinkPROJ() throws {
        let exe = try #require(TestSupport.cliExecutable)
        let r = try TestSupport.run(TestSupport.which("ldd")!, [exe.path])
        #expect(r.status == 0)
        #expect(!r.stdout.contains("libproj"), Comment(rawValue: r.stdout))
    }
}
