import Foundation
import Testing

/// A desk's feed "from whoever published it", through the command line as typed (issue 63): an
/// ingest that stored nothing says so and fails, an empty answer says why, a CSV's columns are
/// recognised and said, a British motorway is a road, a document trafficgeo cannot read is named.
@Suite("Any feed a desk is given", .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct AnyFeedCommandTests {
    let folder = TestSupport.temporaryDirectory()
    var db: String { folder.appendingPathComponent("db.sqlite").path }

    func cli(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = db
        environment["XDG_CACHE_HOME"] = folder.appendingPathComponent("cache").path
        return try TestSupport.run(TestSupport.cliExecutable!.path, arguments, environment: environment)
    }

    /// Every row skipped: nothing stored is a data error (65) with the reasons; a query on the
    /// empty database says it holds nothing.
    @Test func anIngestThatStoredNothingFails() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let broken = try TestSupport.write("title,lat,lon\nA,1\nB,2\n", name: "broken.csv", in: folder)
        let ingest = try cli(["ingest", broken.path])
        #expect(ingest.status == 65, Comment(rawValue: ingest.stderr))
        #expect(ingest.stderr.contains("all 2 entries were skipped") && ingest.stderr.contains("has 2 fields"), Comment(rawValue: ingest.stderr))
        let near = try cli(["near", "--lat", "50", "--lon", "7"])
        #expect(near.status == 0 && near.stderr.contains("holds no incidents yet"), Comment(rawValue: near.stderr))
        // One good feed beside the broken one: the good one is stored, the run is partial (3).
        let good = try TestSupport.write("title,lat,lon\nM25 clockwise between J9 and J10,51.3,-0.4\n", name: "good.csv", in: folder)
        let both = try cli(["ingest", good.path, broken.path])
        #expect(both.status == 3, Comment(rawValue: both.stderr))
    }

    /// Titles of British motorways are on their roads, and `--road` finds them by the road shown.
    @Test func britishMotorwaysAreRoads() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let rss = """
        <?xml version="1.0"?><rss version="2.0" xmlns:georss="http://www.georss.org/georss"><channel><title>Latest</title>
        <item><title>M11 southbound between J5 and J4</title><description>Lane closed</description><guid>a</guid><georss:point>51.6 0.08</georss:point></item>
        <item><title>A1(M) northbound between J7 and J8</title><description>Congestion</description><guid>b</guid><georss:point>51.9 -0.2</georss:point></item>
        <item><title>M25 clockwise between J9 and J10</title><description>Roadworks</description><guid>c</guid><georss:point>51.3 -0.4</georss:point></item>
        </channel></rss>
        """
        let feed = try TestSupport.write(rss, name: "ha.rss", in: folder)
        #expect(try cli(["ingest", feed.path]).status == 0)
        for (road, id) in [("M11", "a"), ("a1(m)", "b"), ("M25", "c")] {
            let found = try cli(["near", "--lat", "51.5", "--lon", "0", "--road", road, "--format", "json"])
            #expect(found.status == 0 && found.stdout.contains("\"id\":\"\(id)\"") && found.stdout.components(separatedBy: "\"title\"").count == 2,
                    Comment(rawValue: road + ": " + found.stdout + found.stderr))
        }
        let parsed = try cli(["parse", "M11 southbound between J5 and J4"])
        #expect(parsed.stdout.contains("\"road\":\"M11\"") || parsed.stdout.contains("\"road\" : \"M11\""), Comment(rawValue: parsed.stdout))
    }

    /// Every road a road field names is one `--road` finds the incident by, in any spelling of
    /// its street type, and every output shows it.
    @Test func everyRoadOfARoadFieldIsFoundAndShown() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let csv = try TestSupport.write("""
            id,title,road,lat,lon
            n1,Crash,I-87 Northway,42.8,-73.8
            n2,Works,Merritt Parkway/CT 15,41.2,-73.3
            n3,Closure,US 1&9,40.7,-74.1
            n4,Works,PARK AVE,40.75,-73.97
            n5,Works,NY 9A - Henry Hudson Parkway,40.85,-73.94

            """, name: "nyc.csv", in: folder)
        #expect(try cli(["ingest", csv.path]).status == 0)
        for (road, id) in [("Northway", "n1"), ("I-87", "n1"), ("merritt parkway", "n2"), ("CT-15", "n2"), ("US-9", "n3"), ("US 1", "n3"),
                           ("Park Avenue", "n4"), ("Henry Hudson Pkwy", "n5"), ("NY-9A", "n5")] {
            let found = try cli(["within", "--lat", "41", "--lon", "-73.8", "--radius", "300km", "--road", road, "--format", "json"])
            #expect(found.status == 0 && found.stdout.contains("\"id\":\"\(id)\"") && found.stdout.components(separatedBy: "\"title\"").count == 2,
                    Comment(rawValue: road + ": " + found.stdout + found.stderr))
        }
        let exported = try cli(["export", "--format", "csv"])
        let rows = exported.stdout.split(whereSeparator: \.isNewline).map(String.init)
        let column = try #require(rows.first?.split(separator: ",").firstIndex(of: "other_roads"), Comment(rawValue: rows.first ?? ""))
        let others = Dictionary(uniqueKeysWithValues: rows.dropFirst().map { row in
            let cells = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return (cells[0], cells[column])
        })
        #expect(others["n1"] == "Northway" && others["n2"] == "Merritt Parkway" && others["n3"] == "US-9" && others["n4"] == "", Comment(rawValue: exported.stdout))
    }

    /// A CSV of other names: the ingest says which columns it took; --field names one it did not guess.
    @Test func csvColumnsAreRecognisedAndSaid() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let csv = """
        incidencia_id;carretera;descripcion;tipo;fecha;fechaFin;latitud;longitud;aviso
        E1;A-7;Retenciones por obras;OBRAS;2024-02-11T18:00:00Z;2024-02-12T18:00:00Z;36.72;-4.42;Obras en la A-7 km 240
        """
        let file = try TestSupport.write(csv, name: "dgt.csv", in: folder)
        let ingest = try cli(["ingest", file.path, "--field", "title=aviso"])
        #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        #expect(ingest.stderr.contains("columns recognised:") && ingest.stderr.contains("road ← carretera") && ingest.stderr.contains("id ← incidencia_id"),
                Comment(rawValue: ingest.stderr))
        let out = try cli(["near", "--lat", "36.7", "--lon", "-4.4", "--format", "json"])
        #expect(out.stdout.contains("\"id\":\"E1\"") && out.stdout.contains("\"title\":\"Obras en la A-7 km 240\"") && out.stdout.contains("\"road\":\"A7\""),
                Comment(rawValue: out.stdout))
        #expect(out.stdout.contains("\"category\":\"roadworks\""), Comment(rawValue: out.stdout))
        // x and y in metres, with no CRS: not read as degrees, and the ingest says what to give.
        let metres = try TestSupport.write("id;x;y;text\nT1;539007;5257837;Baustelle zwischen St. Gallen und Neudorf\n", name: "evts.csv", in: folder)
        let projected = try cli(["ingest", metres.path, "--no-geocode"])
        #expect(projected.stderr.contains("columns x and y hold numbers such as 539007 and 5257837, not degrees") && projected.stderr.contains("(--crs names it)"),
                Comment(rawValue: projected.stderr))
        let placed = try cli(["ingest", metres.path, "--no-geocode", "--crs", "EPSG:32632"])
        #expect(placed.status == 0 && placed.stderr.contains("0 without position"), Comment(rawValue: placed.stderr))
        let bad = try cli(["ingest", file.path, "--field", "colour=aviso"])
        #expect(bad.status == 64 && bad.stderr.contains("'colour' is no field"), Comment(rawValue: bad.stderr))
    }

    /// The --field an ingest of a source was given is kept with the source: the next file filed
    /// under it is read the same way, and says so; --forget-reading drops it.
    @Test func aSourceKeepsTheFieldsItWasGiven() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let header = "incidencia_id;carretera;descripcion;latitud;longitud;aviso\n"
        let monday = try TestSupport.write(header + "E1;A-7;Retenciones;36.72;-4.42;Obras en la A-7 km 240\n", name: "lunes.csv", in: folder)
        let tuesday = try TestSupport.write(header + "E2;A-4;Accidente;37.1;-3.6;Accidente en la A-4 km 12\n", name: "martes.csv", in: folder)
        #expect(try cli(["ingest", monday.path, "--source-name", "dgt", "--field", "title=aviso"]).status == 0)
        let later = try cli(["ingest", tuesday.path, "--source-name", "dgt"])
        #expect(later.status == 0 && later.stderr.contains("read as an earlier ingest of source 'dgt' was told: title=aviso (--field or --crs replaces it"),
                Comment(rawValue: later.stderr))
        let out = try cli(["near", "--lat", "37.1", "--lon", "-3.6", "--limit", "1", "--format", "json"])
        #expect(out.stdout.contains("\"title\":\"Accidente en la A-4 km 12\""), Comment(rawValue: out.stdout))
        let forgot = try cli(["ingest", tuesday.path, "--source-name", "dgt", "--forget-reading"])
        #expect(forgot.status == 0 && !forgot.stderr.contains("earlier ingest"), Comment(rawValue: forgot.stderr))
        let again = try cli(["ingest", tuesday.path, "--source-name", "dgt"])
        #expect(again.status == 0 && !again.stderr.contains("earlier ingest"), Comment(rawValue: again.stderr))
        // A mapping with which every row was skipped is not kept.
        let skipped = try cli(["ingest", tuesday.path, "--source-name", "other", "--field", "starts=aviso"])
        #expect(skipped.status == 65, Comment(rawValue: skipped.stderr))
        let after = try cli(["ingest", tuesday.path, "--source-name", "other"])
        #expect(after.status == 0 && !after.stderr.contains("earlier ingest"), Comment(rawValue: after.stderr))
    }

    /// A place typed with its country is looked for there; without one, near the store's
    /// incidents first; the others of the name are named (the shipped gazetteer and countries).
    @Test func aTypedPlaceIsTheOneMeant() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let csv = try TestSupport.write("id,title,lat,lon\nb1,Highway 1 closed at Malahat,48.55,-123.55\n", name: "drivebc.csv", in: folder)
        #expect(try cli(["ingest", csv.path]).status == 0)
        let spain = try cli(["near", "Valencia, Spain", "--format", "json"])
        #expect(spain.status == 0 && spain.stderr.contains("Valencia, Valencia, ES is at 39.") && spain.stderr.contains("in Spain"), Comment(rawValue: spain.stderr))
        let victoria = try cli(["near", "Victoria", "--format", "json"])
        #expect(victoria.status == 0 && victoria.stderr.contains("Victoria, BC, CA is at 48.") && victoria.stderr.contains("near the store's incidents")
                && victoria.stderr.contains("also named 'Victoria'"), Comment(rawValue: victoria.stderr))
        let london = try cli(["near", "London, UK", "--format", "json"])
        #expect(london.status == 0 && london.stderr.contains("London, ENG, GB is at 51."), Comment(rawValue: london.stderr))
        // A state or province after the comma (shipped subdivisions.tsv): IL is Israel's code and Illinois's.
        let ontario = try cli(["near", "London, Ontario", "--format", "json"])
        #expect(ontario.status == 0 && ontario.stderr.contains("London, ON, CA is at 42.") && ontario.stderr.contains("in Ontario"), Comment(rawValue: ontario.stderr))
        let illinois = try cli(["near", "Springfield, IL", "--format", "json"])
        #expect(illinois.status == 0 && illinois.stderr.contains("Springfield, IL, US is at 39.") && !illinois.stderr.contains("warning"), Comment(rawValue: illinois.stderr))
        let oregon = try cli(["near", "Portland, OR", "--format", "json"])
        #expect(oregon.status == 0 && oregon.stderr.contains("Portland, OR, US is at 45."), Comment(rawValue: oregon.stderr))
    }

    /// A KML file is read through GDAL (its placemarks on their roads); a document of a format
    /// trafficgeo does not read is named in the refusal.
    @Test func aKMLFileIsReadAndAnUnknownDocumentNamed() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let kml = try TestSupport.write("""
            <?xml version="1.0"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>M25 clockwise between J9 and J10</name>
            <Polygon><outerBoundaryIs><LinearRing><coordinates>-0.36,51.29 -0.34,51.29 -0.34,51.31 -0.36,51.31 -0.36,51.29</coordinates></LinearRing></outerBoundaryIs></Polygon>
            </Placemark></Document></kml>
            """, name: "works.kml", in: folder)
        let ingest = try cli(["ingest", kml.path])
        #expect(ingest.status == 0, Comment(rawValue: ingest.stderr))
        let found = try cli(["near", "--lat", "51.3", "--lon", "-0.35", "--road", "M25", "--format", "json"])
        #expect(found.stdout.contains("M25 clockwise between J9 and J10") && found.stdout.contains("\"road\":\"M25\""), Comment(rawValue: found.stdout + found.stderr))
        // GML geometries in records GDAL finds no layer in: read for the records instead.
        let records = try TestSupport.write("""
            <Baustellen xmlns:gml="http://www.opengis.net/gml"><Baustelle><Name>A3 Baustelle bei Köln</Name><Ort><gml:Point srsName="EPSG:25832"><gml:pos>356000 5645000</gml:pos></gml:Point></Ort></Baustelle>
            <Baustelle><Name>A4 Sperrung</Name><Ort><gml:Point srsName="EPSG:25832"><gml:pos>357000 5646000</gml:pos></gml:Point></Ort></Baustelle></Baustellen>
            """, name: "baustellen.xml", in: folder)
        let read = try cli(["ingest", records.path])
        #expect(read.status == 0 && read.stderr.contains("2 read"), Comment(rawValue: read.stderr))
        let near = try cli(["near", "--lat", "50.96", "--lon", "7.03", "--format", "json"])
        #expect(near.stdout.contains("A3 Baustelle bei Köln") && near.stdout.contains("\"latitude\":50.9"), Comment(rawValue: near.stdout + near.stderr))
        let other = try TestSupport.write("<?xml version=\"1.0\"?>\n<evts><evt id=\"1\"/></evts>\n", name: "evts.xml", in: folder)
        let refused = try cli(["ingest", other.path])
        #expect(refused.status == 65, Comment(rawValue: refused.stderr))
        #expect(refused.stderr.contains("<evts>") && refused.stderr.contains("gis"), Comment(rawValue: refused.stderr))
    }
}
