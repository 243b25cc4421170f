import Foundation
import Testing
@testable import TrafficGeoOutput
@testable import TrafficGeoQuery
import TrafficGeoTestSupport

/// Issue 15, "every command works as a user types it": each numbered point through the CLI as
/// typed (points 1, 4, 5, 7, 8, 9 are in CommandLineTests and ConcurrencyTests).
@Suite("Every command as a user types it", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct EveryCommandTests {
    let folder = TestSupport.temporaryDirectory()
    var db: String { folder.appendingPathComponent("db.sqlite").path }
    static let sample = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml")

    func cli(_ arguments: [String], stdin: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = nil
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, stdin: stdin, environment: environment)
    }

    func count(_ export: String) -> Int {
        let object = (try? JSONSerialization.jsonObject(with: Data(export.utf8))) as? [String: Any]
        return (object?["features"] as? [Any])?.count ?? -1
    }

    // MARK: point 2

    @Test func theSameFeedTwiceIsCountedOnce() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let content = try String(contentsOf: Self.sample, encoding: .utf8)
        let monday = try TestSupport.write(content, name: "feed-monday.xml", in: folder)
        let tuesday = try TestSupport.write(content, name: "feed-tuesday.xml", in: folder)
        let r = try cli(["ingest", "--db", db, monday.path, tuesday.path])
        #expect(r.status == 0, Comment(rawValue: r.stderr))
        #expect(r.stderr.contains("feed-tuesday.xml (atom, source https://traffic.example/lmst.de_DE.xml): 12 read, 0 new"), Comment(rawValue: r.stderr))
        // Piped in after being read from its file: the same incidents again, not copies.
        let piped = try cli(["ingest", "--db", db, "-"], stdin: content)
        #expect(piped.stderr.contains("0 new"), Comment(rawValue: piped.stderr))
        let export = try cli(["export", "--db", db, "--format", "geojson"])
        #expect(count(export.stdout) == 12)
        // Nothing local leaks into what is shared: no folder of this machine in ids or sources.
        #expect(!export.stdout.contains(folder.path) && !export.stdout.contains(TestSupport.repositoryRoot.path))
        // An Autobahn API file and the same file piped in: one source, no doubled warnings.
        let json = try TestSupport.write(RoadKnowledgeTests.autobahnHistory(count: 3), name: "a1.json", in: folder)
        _ = try cli(["ingest", "--db", db, "--no-geocode", json.path])
        let again = try cli(["ingest", "--db", db, "--no-geocode", "-"], stdin: try String(contentsOf: json, encoding: .utf8))
        #expect(again.stderr.contains("stdin (autobahn, source autobahn): 3 read, 0 new"), Comment(rawValue: again.stderr))
        // --source-name still decides when given.
        let named = try cli(["ingest", "--db", db, "--source-name", "my feed", monday.path])
        #expect(named.stderr.contains("source my feed): 12 read, 12 new"), Comment(rawValue: named.stderr))
    }

    // MARK: point 3

    @Test func anUnreachableGeocoderIsLeftOutOnceAndQuickly() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = try LoopbackPort.unused()
        let roads = try TestSupport.write("title\nA4 : Koeln - Olpe\nA3 : Koeln - Frankfurt\nA1 : Dortmund - Bremen\nA45 : Dortmund - Giessen\nA2 : Hannover - Berlin\n",
                                          name: "roads.csv", in: folder)
        let start = ContinuousClock.now
        let batch = try cli(["geocode", "batch", "--db", db, "--geocoder", "nominatim=http://127.0.0.1:\(port),gazetteer", roads.path])
        let took = ContinuousClock.now - start
        #expect(took < .seconds(30), "took \(took)")
        #expect(batch.status == 0, Comment(rawValue: batch.stderr))
        // Said once, in words, with what to do; the chain went on to the gazetteer.
        #expect(batch.stderr.components(separatedBy: "is unreachable").count == 2, Comment(rawValue: batch.stderr))
        #expect(batch.stderr.contains("connection refused") && batch.stderr.contains("--geocoder"))
        #expect(batch.stdout.contains(",gazetteer,found,"))
        // reverse: the right cause, balanced brackets, no errno.
        let reverse = try cli(["reverse", "--db", db, "--lat", "50.94", "--lon", "6.96", "--geocoder", "nominatim=http://127.0.0.1:\(port)"])
        #expect(reverse.status != 0)
        #expect(reverse.stderr.contains("connection refused") && !reverse.stderr.contains("errno") && !reverse.stderr.contains("reset"), Comment(rawValue: reverse.stderr))
        #expect(reverse.stderr.filter { $0 == "(" }.count == reverse.stderr.filter { $0 == ")" }.count)
        // A feed URL nobody serves: a plain message, not NIO's type names.
        let download = try cli(["ingest", "--db", db, "http://127.0.0.1:\(port)/feed.xml"])
        #expect(download.status == 69 && download.stderr.contains("connection refused"), Comment(rawValue: download.stderr))
        let unknown = try cli(["ingest", "--db", db, "http://no-such-host.invalid/feed.xml"])
        #expect(unknown.status == 69 && !unknown.stderr.contains("SocketAddressError"), Comment(rawValue: unknown.stderr))
    }

    @Test func ctrlCStopsABatchWaitingOnAServerThatNeverAnswers() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try LoopbackHTTPServer { _, _ in .hang }
        defer { server.shutdown() }
        let roads = try TestSupport.write("query\nKöln\nOlpe\nWenden\nSiegen\n", name: "places.csv", in: folder)
        let output = folder.appendingPathComponent("out.csv")
        // Through python, to start the child with no signals blocked (the test runner blocks some).
        let script = """
            import signal, subprocess, sys, time
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            p = subprocess.Popen(sys.argv[1:], stdout=open('\(output.path)', 'w'), stderr=subprocess.DEVNULL)
            time.sleep(2)
            t = time.monotonic()
            p.send_signal(signal.SIGINT)
            code = p.wait(timeout=60)
            print(code, round(time.monotonic() - t, 2))
            """
        let r = try TestSupport.run("/usr/bin/env", ["python3", "-c", script, TestSupport.cliExecutable!.path, "geocode", "batch", "--db", db,
                                                     "--geocoder", "nominatim=\(server.baseURL.absoluteString)", roads.path])
        let parts = r.stdout.split(separator: " ")
        try #require(parts.count == 2, Comment(rawValue: r.stdout + r.stderr))
        let seconds = Double(parts[1].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99
        #expect(seconds < 6, "Ctrl-C took \(seconds) s")
        #expect(parts[0] != "0")   // interrupted is not success
        // Every row is there; the unanswered ones are pending (asked again next run).
        let rows = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        #expect(rows.count == 5 && rows.dropFirst().allSatisfy { $0.contains(",pending,") }, "\(rows)")
    }

    // MARK: point 6

    @Test func impossiblePositionsAreGeocodedNotStored() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = #"""
            {"warning":[
              {"identifier":"zero","title":"A4 | Köln - Olpe","subtitle":"Köln -> Olpe","description":["A4: zwischen AS Wenden und AS Krombach Stau"],"coordinate":{"lat":"0","long":"0"}},
              {"identifier":"range","title":"A4 | Köln - Olpe","subtitle":"Köln -> Olpe","description":["A4: zwischen AS Wenden und AS Krombach Unfall"],"coordinate":{"lat":"95.1","long":"7.9"}},
              {"identifier":"ok","title":"A4 | Köln - Olpe","coordinate":{"lat":"50.97","long":"7.94"}}
            ]}
            """#
        let feed = try TestSupport.write(json, name: "warnings.json", in: folder)
        let r = try cli(["ingest", "--db", db, feed.path])
        #expect(r.status == 0, Comment(rawValue: r.stderr))
        #expect(r.stderr.contains("3 read, 3 new") && r.stderr.contains("0 skipped"), Comment(rawValue: r.stderr))
        #expect(r.stderr.contains("position ignored") && r.stderr.contains("95.1"), Comment(rawValue: r.stderr))
        let export = try cli(["export", "--db", db, "--format", "geojson"])
        let features = try #require((try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])?["features"] as? [[String: Any]])
        #expect(features.count == 3)
        for feature in features {
            let coordinates = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [Any])
            let point = (coordinates.first as? [Double]) ?? (coordinates as? [Double]) ?? []
            // Geocoded near Wenden/Olpe, never at (0, 0) or latitude 95.
            #expect(point.count == 2 && abs(point[1] - 51.0) < 0.5 && abs(point[0] - 7.9) < 1, "\(feature)")
        }
    }

    // MARK: the README, as written

    /// Every command of the README, top to bottom, run as written (in a shell, from a folder
    /// with the bundled samples and the files the examples name), against one fresh database:
    /// what a new user typing the page in order meets. Commands that need a server or a host
    /// of their own (Nominatim, the Autobahn API, a remote PostgreSQL) are left out; those that
    /// run until stopped (`serve`, `watch`, `ingest --every`) must still be running after 3 s (bad arguments end
    /// them at once). The page must not leave the samples deleted for the sections after it.
    @Test func theReadmeWorksAsWrittenTopToBottom() throws {
        try readmeExamples(database: db)
    }

    /// The same with `$TRAFFICGEO_DB` a PostGIS database: every command works on both stores.
    @Test(.enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
    func theReadmeWorksOnPostGIS() throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        try readmeExamples(database: url)
    }

    /// The README's commands in order: lines of its indented code blocks that start with
    /// `trafficgeo ` (transcripts with a `$ ` prompt are output, not commands).
    static func readmeCommands() throws -> [String] {
        let readme = try String(contentsOf: TestSupport.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.split(separator: "\n").filter { $0.hasPrefix("    trafficgeo ") }
            .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: #"\s{2,}#.*$"#, with: "", options: .regularExpression) }
    }

    private func readmeExamples(database: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let commands = try Self.readmeCommands()
        #expect(commands.count >= 30)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("data"), withDestinationURL: TestSupport.repositoryRoot.appendingPathComponent("data"))
        // The files the examples name, as a user would have them.
        _ = try TestSupport.write("title\nA4 : Koeln - Olpe\nA45 : Dortmund - Giessen\n", name: "roads.csv", in: folder)
        _ = try TestSupport.write(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[7.9,50.98]},"properties":{"name":"Wenden","highway":"motorway_junction"}}]}"#,
                                  name: "motorway-junctions.geojson", in: folder)
        _ = try TestSupport.write("id,title,x,y\nbw-1,A4 : Koeln - Olpe Baustelle,356675.69,5645134.29\n", name: "baustellen.csv", in: folder)
        _ = try TestSupport.write(#"{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::31467"}},"features":[{"type":"Feature","id":"alt-1","geometry":{"type":"Point","coordinates":[3356693.23,5646951.92]},"properties":{"title":"A3 : Koeln - Frankfurt"}}]}"#,
                                  name: "altdaten.geojson", in: folder)
        _ = try TestSupport.write(#"[{"name": "home", "lat": 50.94, "lon": 6.96, "radius": "25km"}]"#, name: "watches.json", in: folder)
        _ = try TestSupport.write("qid,lat,lon\n1,50.94,6.96\n2,51.5,7.4\n", name: "points.csv", in: folder)
        try Self.writeOtherCountriesFeeds(in: folder)
        var environment = ProcessInfo.processInfo.environment
        environment["TRAFFICGEO_DB"] = database
        environment["NO_COLOR"] = "1"
        environment["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
        environment["XDG_CACHE_HOME"] = folder.appendingPathComponent("cache").path
        let elsewhere = ["127.0.0.1", "autobahn:", "https://", "postgresql://"]
        var ran = 0
        for command in commands where !elsewhere.contains(where: command.contains) {
            // (`ingest --every` too: the README may show a feed followed.)
            let runsUntilStopped = command.hasPrefix("trafficgeo serve") || command.hasPrefix("trafficgeo watch") || command.contains(" --every ")
            // The command runs in a shell, as typed, from the example folder.
            let program = "'\(TestSupport.cliExecutable!.path)'" + command.dropFirst("trafficgeo".count)
            // `serve` on a free port rather than 8080, which another test or program may hold.
            let shell = "cd '\(folder.path)' && " + (runsUntilStopped ? "exec timeout 3 " + program + (command.hasPrefix("trafficgeo serve") ? " --port 0" : "") : program)
            let r = try TestSupport.run("/bin/sh", ["-c", shell], environment: environment)
            ran += 1
            if runsUntilStopped {
                #expect(r.status == 124, "\(command) was still running after 3 s: status \(r.status), \(r.stdout) \(r.stderr)")
                continue
            }
            #expect(r.status == 0, "\(command): \(r.stderr)")
            if command.contains(" near ") || command.contains(" within ") || command.contains(" bbox ") || command.contains(" export ") {
                let words = command.components(separatedBy: " ")
                let written = words.firstIndex(of: "-o").map { words[$0 + 1] } ?? (words.dropLast().last == ">" ? words.last : nil)
                let produced = r.stdout + (written.flatMap { try? Data(contentsOf: folder.appendingPathComponent($0)) }.map { String(decoding: $0, as: UTF8.self) } ?? "")
                #expect(!produced.contains("No incidents found") && produced.count > 100, "\(command) returned nothing")
            }
        }
        #expect(ran >= 25)
        // The -o example chose GeoJSON from the extension, and the export holds the samples.
        let london = try String(contentsOf: folder.appendingPathComponent("from-london.geojson"), encoding: .utf8)
        #expect(london.hasPrefix("{\"type\":\"FeatureCollection\""))
        #expect(count(try String(contentsOf: folder.appendingPathComponent("incidents.geojson"), encoding: .utf8)) >= 10)
        // Nothing on the page deleted the samples the later sections use.
        let after = try cli(["near", "--db", database, "--lat", "50.94", "--lon", "6.96", "--limit", "5", "--format", "json"])
        let answers = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [[String: Any]]
        #expect(answers?.count == 5, Comment(rawValue: after.stdout + after.stderr))
    }

    /// The English, American and French desks' feeds the README names, in their authorities'
    /// shapes (National Highways' DATEX II with `key : value` comments, CDOT's WZDx, Bison
    /// Futé's DATEX II), in effect now: saved this morning (a feed's record that gives no end and
    /// is months old is unconfirmed, not in effect: docs/feeds.md).
    static func writeOtherCountriesFeeds(in folder: URL) throws {
        // "Some CSV or GIS file" (the README's desk): columns of other names, a Waze CIFS feed, GeoJSON polygons.
        _ = try TestSupport.write("road_event_id,road_name,head_latitude,head_longitude,event_type,start_date\nE1,I-35,30.27,-97.74,work-zone,2026-03-01T00:00:00Z\n",
                                  name: "events.csv", in: folder)
        _ = try TestSupport.write("codigo;carretera;descripcion;fecha;latitud;longitud\n7;A-7;Obras en la A-7;2026-02-11T18:00:00Z;36.72;-4.42\n",
                                  name: "incidencias.csv", in: folder)
        _ = try TestSupport.write(#"{"incidents":[{"id":"c1","type":"ROAD_CLOSED","location":{"street":"Main Street","polyline":"40.71 -74.00 40.72 -74.01"},"starttime":"2026-03-01T08:00:00Z"}]}"#,
                                  name: "closures.json", in: folder)
        _ = try TestSupport.write(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"w1","geometry":{"type":"Polygon","coordinates":[[[8.53,47.37],[8.54,47.37],[8.54,47.38],[8.53,47.37]]]},"properties":{"title":"Baustelle Bahnhofstrasse"}}]}"#,
                                  name: "works.geojson", in: folder)
        _ = try TestSupport.write(#"<?xml version="1.0"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>Baustelle Hardturmstrasse</name><LineString><coordinates>8.51,47.39 8.52,47.392</coordinates></LineString></Placemark></Document></kml>"#,
                                  name: "works.kml", in: folder)
        _ = try TestSupport.write(#"<?xml version="1.0"?><ogr:FeatureCollection xmlns:ogr="http://ogr.maptools.org/" xmlns:gml="http://www.opengis.net/gml"><gml:featureMember><ogr:baustellen fid="b1"><ogr:geometryProperty><gml:Polygon srsName="EPSG:21781"><gml:outerBoundaryIs><gml:LinearRing><gml:coordinates>683000,248000 683200,248000 683200,248100 683000,248000</gml:coordinates></gml:LinearRing></gml:outerBoundaryIs></gml:Polygon></ogr:geometryProperty><ogr:bezeichnung>Zürcherstrasse: Belagsarbeiten</ogr:bezeichnung></ogr:baustellen></gml:featureMember></ogr:FeatureCollection>"#,
                                  name: "baustellen.gml", in: folder)
        _ = try TestSupport.write("<ERS_Events><Events><Event><EventId>1</EventId><RoadwayName>I-93</RoadwayName><LocationDescription>I-93 Southbound at Exit 33</LocationDescription><PrimaryLatitude>42.50</PrimaryLatitude><PrimaryLongitude>-71.12</PrimaryLongitude></Event>"
                                  + "<Event><EventId>2</EventId><RoadwayName>I-95</RoadwayName><LocationDescription>I-95 Northbound at Main St</LocationDescription><PrimaryLatitude>42.87</PrimaryLatitude><PrimaryLongitude>-70.89</PrimaryLongitude></Event></Events></ERS_Events>",
                                  name: "ers-events.xml", in: folder)
        let hour = 3600.0, now = Date()
        func at(_ offset: Double) -> String { ISO8601DateFormatter().string(from: now.addingTimeInterval(offset)) }
        func datex(_ country: String, _ supplier: String, lang: String, _ situations: [(id: String, type: String, severity: String, comment: String, extra: String, lat: Double, lon: Double)]) -> String {
            let body = situations.map { s in
                """
                <situation id="\(s.id)" version="1"><overallSeverity>\(s.severity)</overallSeverity><situationVersionTime>\(at(-hour))</situationVersionTime>\
                <situationRecord xsi:type="\(s.type)" id="\(s.id)-1" version="1"><situationRecordCreationTime>\(at(-2 * hour))</situationRecordCreationTime>\
                <situationRecordVersionTime>\(at(-hour))</situationRecordVersionTime><probabilityOfOccurrence>certain</probabilityOfOccurrence>\
                <validity><validityStatus>active</validityStatus><validityTimeSpecification><overallStartTime>\(at(-3 * hour))</overallStartTime>\
                </validityTimeSpecification></validity><generalPublicComment><comment><values><value lang="\(lang)">\(s.comment)</value></values></comment></generalPublicComment>\
                <groupOfLocations xsi:type="Point"><locationForDisplay><latitude>\(s.lat)</latitude><longitude>\(s.lon)</longitude></locationForDisplay></groupOfLocations>\
                \(s.extra)</situationRecord></situation>
                """
            }.joined()
            return #"<?xml version="1.0" encoding="UTF-8"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><exchange><supplierIdentification><country>"#
                + country + "</country><nationalIdentifier>" + supplier + #"</nationalIdentifier></supplierIdentification></exchange><payloadPublication xsi:type="SituationPublication" lang=""#
                + lang + #""><publicationTime>"# + at(-hour / 2) + "</publicationTime>" + body + "</payloadPublication></d2LogicalModel>"
        }
        _ = try TestSupport.write(datex("gb", "NTIS", lang: "en", [
            ("NH-1", "AbnormalTraffic", "high", "TYPE : GDP\nEvent Location : The M1 southbound between J11 and J10\nEvent Reason : Congestion\nEvent Status : Currently Active",
             "<abnormalTrafficType>queuingTraffic</abnormalTrafficType>", 51.9, -0.45),
            ("NH-2", "Accident", "medium", "TYPE : UNPLANNED\nEvent Location : The M1 northbound between J15 and J16\nEvent Reason : Collision\nEvent Status : Currently Active",
             "<accidentType>collision</accidentType>", 52.2, -0.92),
        ]), name: "Event_Data_001.xml", in: folder)
        _ = try TestSupport.write(datex("fr", "Tipi", lang: "fr", [
            ("FR-1", "VehicleObstruction", "medium", "Véhicule en panne sur l'A7 direction Marseille", "<vehicleObstructionType>brokenDownVehicle</vehicleObstructionType>", 45.70, 4.83),
        ]), name: "evenements.xml", in: folder)
        func zone(_ id: String, _ road: String, _ direction: String, _ line: [(Double, Double)]) -> String {
            let coordinates = line.map { "[\($0.1), \($0.0)]" }.joined(separator: ", ")
            return #"{"type": "Feature", "id": "\#(id)", "properties": {"core_details": {"event_type": "work-zone", "data_source_id": "cdot", "road_names": ["\#(road)"], "direction": "\#(direction)", "description": "Lane closed"}, "start_date": "2026-01-01T06:00:00Z", "end_date": "2099-01-01T06:00:00Z", "vehicle_impact": "some-lanes-closed"}, "geometry": {"type": "LineString", "coordinates": [\#(coordinates)]}}"#
        }
        let features = [zone("co-1", "I-25", "northbound", [(39.70, -104.99), (39.72, -104.99)]), zone("co-2", "US-6", "westbound", [(39.72, -105.05), (39.72, -105.09)]),
                        zone("co-3", "CO-7", "eastbound", [(40.00, -105.05), (40.00, -105.02)])].joined(separator: ", ")
        _ = try TestSupport.write(#"{"road_event_feed_info": {"publisher": "CDOT", "version": "4.2", "update_date": "2026-01-01T06:00:00Z", "data_sources": [{"data_source_id": "cdot"}]}, "type": "FeatureCollection", "features": [\#(features)]}"#,
                                  name: "cdot-wzdx.geojson", in: folder)
    }

    // MARK: a reader that quits

    /// `trafficgeo … | head` ends quietly with the status a shell gives a command SIGPIPE ended
    /// (141), on both stores: on PostGIS, SwiftNIO has ignored SIGPIPE, so the write fails
    /// instead, and that failure must neither print an error nor be blamed on the database.
    @Test func aReaderThatQuitsEndsTheOutputQuietly() throws {
        try readerQuits(database: db)
    }

    @Test(.enabled(if: PostgresTestServer.url != nil, PostgresTestServer.skipReason))
    func aReaderThatQuitsEndsTheOutputQuietlyOnPostGIS() throws {
        let url = try PostgresTestServer.makeDatabase()
        defer { PostgresTestServer.dropDatabase(url) }
        try readerQuits(database: url)
    }

    private func readerQuits(database: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // Far more output than a pipe holds (64 KiB), so the writes go on after head has quit.
        var csv = "id,title,lat,lon\n"
        for i in 0..<3000 { csv += "p\(i),A\(i % 90 + 1) : Nord - Sued,\(47 + Double(i % 800) / 100),\(6 + Double(i / 800) * 2)\n" }
        let feed = try TestSupport.write(csv, name: "points.csv", in: folder)
        let ingest = try cli(["ingest", "--db", database, "--no-geocode", feed.path])
        #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let queries = try TestSupport.write("qid,lat,lon\n" + (0..<500).map { "\($0),\(48 + Double($0) / 100),9" }.joined(separator: "\n"), name: "q.csv", in: folder)
        let program = TestSupport.cliExecutable!.path
        for command in ["export --format geojson", "near --lat 50 --lon 8 -k 3000 --format json", "within --lat 50 --lon 8 --radius 900km --format csv",
                        "near --queries \(queries.path) -k 50", "changes --since 0"] {
            let r = try TestSupport.run("/bin/bash", ["-c", "set -o pipefail; '\(program)' \(command) --db '\(database)' | head -c 100 > /dev/null"])
            #expect(r.status == 141 && r.stderr.isEmpty, "\(command): status \(r.status), \(r.stderr)")
        }
        // A full disk is still an error that names the output.
        if FileManager.default.fileExists(atPath: "/dev/full") {
            let full = try cli(["export", "--db", database, "-o", "/dev/full"])
            #expect(full.status == 73 && full.stderr.contains("cannot write /dev/full: No space left on device"), Comment(rawValue: full.stderr))
        }
    }

    // MARK: point 10

    @Test func smallThingsAUserMeets() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try cli(["ingest", "--db", db, Self.sample.path])
        // reverse at (0, 0): the gazetteer's nearest town is thousands of km away: no address.
        let ocean = try cli(["reverse", "--db", db, "--lat", "0", "--lon", "0"])
        #expect(ocean.status == 2 && ocean.stderr.contains("km away"), Comment(rawValue: ocean.stderr))
        let cologne = try cli(["reverse", "--db", db, "--lat", "50.94", "--lon", "6.96"])
        #expect(cologne.status == 0 && cologne.stdout.contains("distance"), Comment(rawValue: cologne.stdout + cologne.stderr))
        // Offline, an address finds its town.
        let addresses = try TestSupport.write("address\n50667 Köln\n\"Hauptstraße 5, 69117 Heidelberg\"\n", name: "addresses.csv", in: folder)
        let batch = try cli(["geocode", "batch", "--db", db, addresses.path])
        #expect(batch.status == 0 && batch.stdout.components(separatedBy: ",town,").count == 3, Comment(rawValue: batch.stdout + batch.stderr))
        // A result at the query point has no bearing (not "S").
        let here = try cli(["near", "--db", db, "--lat", "50.9742", "--lon", "7.9405", "-k", "1", "--format", "json"])
        #expect(here.stdout.contains("\"distanceMeters\":0") && !here.stdout.contains("bearingDegrees"), Comment(rawValue: here.stdout))
        // --format of the wrong kind, and an empty file, say what they are.
        let json = try TestSupport.write(#"{"warning":[{"identifier":"1","title":"A1 | X","coordinate":{"lat":"50.9","long":"7.0"}}]}"#, name: "w.json", in: folder)
        let wrong = try cli(["ingest", "--db", db, "--format", "atom", json.path])
        #expect(wrong.status == 65 && wrong.stderr.contains("the content is autobahn"), Comment(rawValue: wrong.stderr))
        // A format's name in any case, as the output formats take it.
        let named = try cli(["ingest", "--db", folder.appendingPathComponent("case.sqlite").path, "--format", "AutoBahn", json.path])
        #expect(named.status == 0, Comment(rawValue: named.stderr))
        let empty = try TestSupport.write("", name: "empty.xml", in: folder)
        let nothing = try cli(["ingest", "--db", db, empty.path])
        #expect(nothing.status == 65 && nothing.stderr.contains("empty"), Comment(rawValue: nothing.stderr))
        // --queries writes CSV: another --format is refused, not ignored.
        let points = try TestSupport.write("qid,lat,lon\n1,50.9,7\n", name: "q.csv", in: folder)
        let table = try cli(["near", "--db", db, "--queries", points.path, "--format", "table"])
        #expect(table.status == 64 && table.stderr.contains("CSV"), Comment(rawValue: table.stderr))
        // -o over a read-only file: refused, the file and its mode untouched.
        let locked = try TestSupport.write("keep me", name: "locked.geojson", in: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: locked.path)
        if getuid() != 0 {   // root may write anything; the check is for everyone else
            let refused = try cli(["export", "--db", db, "-o", locked.path])
            #expect(refused.status == 73 && refused.stderr.contains("read-only"), Comment(rawValue: refused.stderr))
            #expect(try String(contentsOf: locked, encoding: .utf8) == "keep me")
        }
        // A replaced file keeps its mode.
        let shared = try TestSupport.write("old", name: "shared.geojson", in: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: shared.path)
        _ = try cli(["export", "--db", db, "-o", shared.path])
        #expect((try FileManager.default.attributesOfItem(atPath: shared.path)[.posixPermissions] as? Int) == 0o640)
        // Exports are one geometry type unless asked; segment leaves out what has none, and says so.
        let segments = try cli(["export", "--db", db, "--geometry", "segment", "--format", "geojson"])
        #expect(count(segments.stdout) == 0 && segments.stderr.contains("left out"), Comment(rawValue: segments.stderr))
        // The summary of an ingest and the "wrote" of an export both go to stderr.
        let written = try cli(["export", "--db", db, "-o", folder.appendingPathComponent("all.csv").path])
        #expect(written.stdout.isEmpty && written.stderr.contains("wrote 12 incidents"))
    }

    // MARK: point 11

    @Test func whatUsersOfSimilarToolsReachForFirst() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try cli(["ingest", "--db", db, Self.sample.path])
        let near = try cli(["near", "Köln", "--db", db, "-k", "2", "--format", "json"])
        #expect(near.status == 0 && near.stderr.contains("Köln"), Comment(rawValue: near.stderr))
        let results = try #require(try JSONSerialization.jsonObject(with: Data(near.stdout.utf8)) as? [[String: Any]])
        #expect(results.count == 2 && (results[0]["distanceMeters"] as? Double ?? 1e9) < 20_000)
        let unknown = try cli(["near", "Xqzzyville", "--db", db])
        #expect(unknown.status == 2 && unknown.stderr.contains("knows no place"))
        let stats = try cli(["stats", "--db", db, "--format", "json", "--check"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(object["incidents"] as? Int == 12 && (object["check"] as? [String: Any])?["ok"] as? Bool == true)
    }
}

/// A loopback port nothing listens on (bound, then closed).
enum LoopbackPort {
    static func unused() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
