import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoQuery
@testable import TrafficGeoServe
@testable import TrafficGeoStore

/// Real clients of `serve`: a browser showing the map page, and GDAL reading the collection.
@Suite("serve: a browser and GDAL as clients")
struct ServeClientsTests {
    static var browserCheck: Bool {
        TestSupport.which("chromium") != nil && TestSupport.which("python3") != nil
            && (try? TestSupport.run(TestSupport.which("python3")!, ["-c", "import websocket"]).status) == 0
            && FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js")
    }

    /// The page in headless Chromium: it becomes ready, its pins are drawn, and its list holds
    /// exactly the incidents the API returns for the view it shows, nearest first; a click on
    /// the map moves the query point and the list follows. The screenshot is kept where
    /// $TRAFFICGEO_SCREENSHOT says (docs/serve-map.png was made that way).
    @Test(.enabled(if: browserCheck, "needs chromium, libjs-leaflet and python3's websocket-client (scripts/setup installs them)"))
    func theMapPageShowsThePinsAndTheListTheAPIReturns() async throws {
        try await ServeFixture.serving { f in
            let shot = ProcessInfo.processInfo.environment["TRAFFICGEO_SCREENSHOT"] ?? f.folder.appendingPathComponent("map.png").path
            let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/browser-check.py").path
            let run = try await TestSupport.runOnThread(TestSupport.which("python3")!, [script, f.base + "/?bbox=6.8,50.82,7.2,51.06", "--screenshot", shot, "--timeout", "90"])
            #expect(run.status == 0, Comment(rawValue: run.stdout + run.stderr))
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], Comment(rawValue: run.stderr))
            #expect(report["leaflet"] as? Bool == true)
            let ids = report["ids"] as? [Int] ?? []
            let itemsURL = try #require(report["itemsUrl"] as? String)
            let api = try await f.get(itemsURL)
            #expect(!ids.isEmpty && ids == api.ids, "the page's list is the API's answer for its view, in its order")
            #expect(report["pins"] as? Int == api.features.filter { $0["geometry"] is [String: Any] }.count, "a pin for each")
            #expect((report["icons"] as? Int ?? 0) + (report["clusters"] as? Int ?? 0) == report["pins"] as? Int,
                    "every pin is on the map, alone or counted in a cluster: \(report)")
            #expect(Set(report["pinColors"] as? [String] ?? []).isSuperset(of: ["red", "purple"]))
            let png = try Data(contentsOf: URL(fileURLWithPath: shot))
            #expect(png.count > 5000 && png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))

            // On a phone's screen: the map above, the list below it, both as wide as the screen.
            let phone = try await TestSupport.runOnThread(TestSupport.which("python3")!, [script, f.base + "/?bbox=6.8,50.82,7.2,51.06", "--mobile", "--timeout", "90"])
            let small = try #require(try JSONSerialization.jsonObject(with: Data(phone.stdout.utf8)) as? [String: Any], Comment(rawValue: phone.stderr))
            let map = small["map"] as? [Double] ?? [], side = small["side"] as? [Double] ?? [], viewport = small["viewport"] as? [Double] ?? []
            #expect(map.count == 4 && side.count == 4 && viewport.first == 390, "\(small)")
            if map.count == 4, side.count == 4 {
                #expect(map[2] == 390 && side[2] == 390 && side[1] >= map[1] + map[3] - 1 && map[3] > 300, "\(map) \(side)")
            }
            #expect(small["ids"] as? [Int] == ids, "the same incidents on a phone")

            // A click left of the centre: the list is sorted by distance from there.
            let clicked = try await TestSupport.runOnThread(TestSupport.which("python3")!, [script, f.base + "/?bbox=6.8,50.82,7.2,51.06", "--click", "100,400", "--timeout", "90"])
            let after = try #require(try JSONSerialization.jsonObject(with: Data(clicked.stdout.utf8)) as? [String: Any])
            let afterURL = try #require(after["itemsUrl"] as? String)
            #expect(afterURL != itemsURL)
            let answer = try await f.get(afterURL)
            #expect(after["ids"] as? [Int] == answer.ids)
        }
    }

    /// The page settles for screenshot tools although it follows the event stream (Chromium's own
    /// `--virtual-time-budget` waited forever on an open EventSource), the event stream still
    /// changes its list when an ingest adds an incident in view, and its legend says what the
    /// colours mean.
    @Test(.enabled(if: browserCheck, "needs chromium, libjs-leaflet and python3's websocket-client (scripts/setup installs them)"),
          .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
    func theMapPageSettlesAndFollowsTheEventStream() async throws {
        // Tiles from a loopback port nobody listens on: refused at once. The public tile server
        // is out of reach here, and a name lookup that hangs instead of failing would hold the
        // browser's virtual time as an open stream did (a CI run waited 60 s for it).
        var configuration = ServeConfiguration()
        configuration.tileURL = "http://127.0.0.1:9/{z}/{x}/{y}.png"
        try await ServeFixture.serving(configuration: configuration) { f in
            let shot = f.folder.appendingPathComponent("settled.png").path
            let started = ContinuousClock.now
            let chromium = try await TestSupport.runOnThread("/usr/bin/env", ["timeout", "60", TestSupport.which("chromium")!, "--headless", "--no-sandbox",
                "--disable-gpu", "--virtual-time-budget=3000", "--window-size=1000,700", "--screenshot=\(shot)", f.base + "/?bbox=6.8,50.82,7.2,51.06"])
            #expect(chromium.status == 0, "Chromium settles on the map page: \(chromium.stderr.suffix(500))")
            #expect(ContinuousClock.now - started < .seconds(45))
            #expect(FileManager.default.fileExists(atPath: shot))

            let legend = try await f.get("/?f=html").body
            #expect(legend.contains("red: wrong-way driver, accident, closure, obstacle, danger") && legend.contains("purple: roadworks")
                    && legend.contains("green: queue, slow traffic") && legend.contains("hollow, faded: expired or ended") && legend.contains("<svg"))

            let feed = try TestSupport.write(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"live-in-view","geometry":{"type":"Point","coordinates":[6.95,50.93]},"properties":{"title":"B55 : Köln - Olpe","road":"B55","category":"accident"}}]}"#,
                                             name: "live.geojson", in: f.folder)
            let ingest = "'\(TestSupport.cliExecutable!.path)' ingest --db '\(f.location)' --source-name live '\(feed.path)'"
            let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/browser-check.py").path
            let run = try await TestSupport.runOnThread(TestSupport.which("python3")!, [script, f.base + "/?bbox=6.8,50.82,7.2,51.06", "--then", ingest, "--timeout", "60"])
            #expect(run.status == 0, "the list changed after the ingest: \(run.stdout) \(run.stderr)")
        }
    }

    /// The page as a desk opens it, with no place in its URL: the first view holds the data,
    /// current incidents only; a segment is a line; each filter changes the items request and
    /// the page's URL; choosing an incident from the keyboard opens its details; with no tile
    /// server the page says so.
    @Test(.enabled(if: browserCheck, "needs chromium, libjs-leaflet and python3's websocket-client (scripts/setup installs them)"))
    func theMapOpensOnTheDataFiltersAndShowsDetails() async throws {
        var configuration = ServeConfiguration()
        configuration.tileURL = "http://127.0.0.1:9/{z}/{x}/{y}.png"
        try await ServeFixture.serving(configuration: configuration) { f in
            // Works along a stretch of the A3 near Köln, with the facts the details show.
            let works = Incident(source: "works", id: "a3-works", title: "A3 : Köln-Dellbrück - Königsforst", summary: "Bauarbeiten, rechter Fahrstreifen gesperrt",
                                 weblink: "https://example.org/a3-works", updated: f.now, expires: f.now.addingTimeInterval(7200), road: "A3", category: .roadworks,
                                 position: Coordinate(latitude: 50.97, longitude: 7.06),
                                 segment: [Coordinate(latitude: 50.97, longitude: 7.06), Coordinate(latitude: 50.95, longitude: 7.09), Coordinate(latitude: 50.93, longitude: 7.12)],
                                 positionSource: PositionSource(kind: .feed),
                                 properties: ["severity": "high", "direction": "Frankfurt", "delay_minutes": "15", "lanes_restricted": "1 of 3"])
            _ = try await f.writer.ingest(source: "works", snapshot: .wholeSource, now: f.now) { emit in try emit(.incident(works)) }
            let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/browser-check.py").path
            let python = TestSupport.which("python3")!
            func report(_ arguments: [String]) async throws -> [String: Any] {
                let run = try await TestSupport.runOnThread(python, [script] + arguments + ["--timeout", "90"])
                #expect(run.status == 0, Comment(rawValue: run.stdout + run.stderr))
                return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], Comment(rawValue: run.stderr))
            }

            let opened = try await report([f.base + "/"])
            let ids = opened["ids"] as? [Int] ?? []
            let firstURL = try #require(opened["itemsUrl"] as? String)
            #expect(!ids.isEmpty && firstURL.contains("active-at=now"), "the first view holds current incidents: \(opened)")
            #expect(ids == (try await f.get(firstURL)).ids)
            #expect((opened["lines"] as? Int ?? 0) >= 1 && firstURL.contains("geometry=mixed"), "the works are a line")
            #expect((opened["pageUrl"] as? String)?.contains("bbox=") == true, "the page's URL says what it shows")
            #expect((opened["tilesNote"] as? String)?.contains("127.0.0.1:9") == true, "no tiles, and the page says so")

            // Each filter is the query model's own parameter, in the request and in the URL.
            let filtered = try await report([f.base + "/", "--filter", "category=roadworks", "--filter", "road=A3", "--filter", "min-severity=high",
                                             "--filter", "q=Bauarbeiten", "--filter", "current=false"])
            let itemsURL = try #require(filtered["itemsUrl"] as? String), pageURL = try #require(filtered["pageUrl"] as? String)
            for part in ["category=roadworks", "road=A3", "min-severity=high", "q=Bauarbeiten", "active-at=&"] {
                #expect(itemsURL.contains(part) && (pageURL + "&").contains(part), "\(part): \(itemsURL) \(pageURL)")
            }
            let worksID = try #require((try await f.get(itemsURL)).ids.first)
            #expect(filtered["ids"] as? [Int] == [worksID])

            // A link to the filtered page opens the same, and the keyboard opens the details.
            let linked = try await report([pageURL, "--select", "1"])
            #expect(linked["ids"] as? [Int] == [worksID])
            let details = try #require(linked["details"] as? [String: Any], "\(linked)")
            let fields = details["fields"] as? [String: String] ?? [:]
            #expect(details["title"] as? String == "A3 : Köln-Dellbrück - Königsforst")
            for (name, value) in [("Kind", "roadworks"), ("Severity", "high"), ("Road", "A3"), ("Direction", "Frankfurt"), ("Delay", "15 min"),
                                  ("Lanes", "1 of 3"), ("State", "active")] {
                #expect(fields[name] == value, "\(name): \(fields)")
            }
            #expect(fields["Ends"]?.isEmpty == false && fields["Updated"]?.isEmpty == false)
            #expect((details["reports"] as? [String])?.first?.hasPrefix("works") == true)
            #expect(details["link"] as? String == "https://example.org/a3-works")
            #expect((linked["pageUrl"] as? String)?.hasSuffix("#incident=\(worksID)") == true)
        }
    }

    /// A commuter's question on the page: a route drawn by clicking the map lists the incidents
    /// along it in the order the driver meets them, the same as `along` (the query engine, and
    /// the command itself when it is built); the page's URL then holds the route.
    @Test(.enabled(if: browserCheck, "needs chromium, libjs-leaflet and python3's websocket-client (scripts/setup installs them)"))
    func aRouteDrawnOnThePageListsWhatIsAlongItInOrder() async throws {
        var configuration = ServeConfiguration()
        configuration.tileURL = "http://127.0.0.1:9/{z}/{x}/{y}.png"
        try await ServeFixture.serving(configuration: configuration) { f in
            let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/browser-check.py").path
            let python = TestSupport.which("python3")!
            // Across the Köln grid, south-west to north-east, with a bend.
            let run = try await TestSupport.runOnThread(python, [script, f.base + "/?bbox=6.8,50.82,7.2,51.06", "--draw-route", "50.85,6.85;50.93,6.97;51.01,7.13", "--timeout", "90"])
            #expect(run.status == 0, Comment(rawValue: run.stdout + run.stderr))
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], Comment(rawValue: run.stderr))
            let itemsURL = try #require(report["itemsUrl"] as? String)
            let ids = report["ids"] as? [Int] ?? []
            let api = try await f.get(itemsURL)
            #expect(ids.count >= 5 && ids == api.ids, "\(report)")
            #expect((report["status"] as? String)?.contains("in the order you meet them") == true)

            // The route the page sent, read back: the query engine answers it in the same order.
            let query = try #require(URLComponents(string: "http://x" + itemsURL)?.queryItems)
            // URLSearchParams writes a space as '+' (form encoding, which serve reads).
            let wkt = try #require(query.first { $0.name == "route" }?.value).replacingOccurrences(of: "+", with: " ")
            #expect(query.first { $0.name == "buffer" }?.value == "2km")
            let line = try RouteLine.read(text: wkt, what: "route")
            #expect(line.count == 3)
            let engine = QueryEngine(store: f.writer)
            let along = try await StoreThreads.run { try engine.along(RouteCourse(line), buffer: 2_000, filter: IncidentFilter(activeAt: f.now)) }
            #expect(ids.map(Int64.init) == along.map(\.stored.storeID))

            // And `trafficgeo along` with the same line, as a user would run it.
            if let cli = TestSupport.cliExecutable {
                let coordinates = line.map { "[\($0.longitude),\($0.latitude)]" }.joined(separator: ",")
                let file = try TestSupport.write(#"{"type":"LineString","coordinates":["# + coordinates + "]}", name: "drawn.geojson", in: f.folder)
                let printed = try await TestSupport.runOnThread(cli.path, ["along", "--db", f.location, "--route", file.path, "--buffer", "2km", "--active-at", "now", "--format", "json"])
                let answers = try #require(try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [[String: Any]], Comment(rawValue: printed.stderr))
                let pageFeedIDs = (try await f.get(itemsURL)).features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String }
                #expect(answers.compactMap { $0["id"] as? String } == pageFeedIDs)
            }

            // The page's URL holds the route: opened again, it shows the same list.
            let pageURL = try #require(report["pageUrl"] as? String)
            #expect(pageURL.contains("route=") && !pageURL.contains("bbox="))
            let reopened = try await TestSupport.runOnThread(python, [script, pageURL, "--timeout", "90"])
            let again = try #require(try JSONSerialization.jsonObject(with: Data(reopened.stdout.utf8)) as? [String: Any], Comment(rawValue: reopened.stderr))
            #expect(again["ids"] as? [Int] == ids)
        }
    }

    /// GDAL's OGC API – Features driver lists the collection and reads every feature.
    @Test(.enabled(if: TestSupport.which("ogrinfo") != nil, "needs GDAL's ogrinfo (apt install gdal-bin)"))
    func gdalReadsTheCollection() async throws {
        try await ServeFixture.serving { f in
            let ogrinfo = TestSupport.which("ogrinfo")!
            let list = try await TestSupport.runOnThread(ogrinfo, ["-ro", "OAPIF:" + f.base])
            #expect(list.status == 0, Comment(rawValue: list.stderr))
            #expect(list.stdout.contains("incidents"), Comment(rawValue: list.stdout))
            let summary = try await TestSupport.runOnThread(ogrinfo, ["-ro", "-so", "-al", "OAPIF:" + f.base + "/collections/incidents"])
            #expect(summary.stdout.contains("Feature Count: 46"), Comment(rawValue: summary.stdout + summary.stderr))
            let features = try await TestSupport.runOnThread(ogrinfo, ["-ro", "-al", "-q", "OAPIF:" + f.base + "/collections/incidents"])
            let points = features.stdout.components(separatedBy: "POINT (").count - 1
            #expect(points == 45, "every positioned incident, paged through")
            #expect(features.stdout.contains("Köln - Olpe"))
            let boxed = try await TestSupport.runOnThread(ogrinfo, ["-ro", "-al", "-q", "-spat", "179", "-20", "181", "-10", "OAPIF:" + f.base + "/collections/incidents"])
            #expect(boxed.status == 0)
        }
    }
}
