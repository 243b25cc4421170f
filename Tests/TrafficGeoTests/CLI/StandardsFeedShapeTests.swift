import AsyncHTTPClient
import Foundation
import Testing
import TrafficGeoStore
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoTestSupport

/// The shapes of DATEX II, WZDx and Open511 that the published samples do not show, written from
/// the standards' schemas, through the command line as `StandardsFeedTests` reads the samples.
extension StandardsFeedTests {

    static let v2Header = #"<?xml version="1.0" encoding="UTF-8"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" modelBaseVersion="2"><exchange><supplierIdentification><country>de</country><nationalIdentifier>T</nationalIdentifier></supplierIdentification></exchange><payloadPublication xsi:type="SituationPublication" lang="de"><publicationTime>2026-11-26T08:00:00Z</publicationTime><publicationCreator><country>de</country><nationalIdentifier>T</nationalIdentifier></publicationCreator>"#
    static let v2Footer = "</payloadPublication></d2LogicalModel>"

    /// A record that gives no end, updated an hour ago: in effect now.
    static func v2Record(id: String, type: String, extra: String = "", location: String, validity: String = "", comment: String? = nil, version: String = "1") -> String {
        """
        <situationRecord xsi:type="\(type)" id="\(id)" version="\(version)"><situationRecordCreationTime>2026-11-26T07:00:00Z</situationRecordCreationTime>\
        <situationRecordVersionTime>\(TestSupport.anHourAgo)</situationRecordVersionTime><probabilityOfOccurrence>certain</probabilityOfOccurrence>\
        \(extra)<validity><validityStatus>\(validity.isEmpty ? "active" : validity)</validityStatus><validityTimeSpecification><overallStartTime>2026-11-26T07:00:00Z</overallStartTime></validityTimeSpecification></validity>\
        \(comment.map { "<generalPublicComment><comment><values><value lang=\"de\">\($0)</value></values></comment></generalPublicComment>" } ?? "")\
        \(location)</situationRecord>
        """
    }

    static func point(_ lat: Double, _ lon: Double) -> String {
        #"<groupOfLocations xsi:type="Point"><pointByCoordinates><pointCoordinates><latitude>\#(lat)</latitude><longitude>\#(lon)</longitude></pointCoordinates></pointByCoordinates></groupOfLocations>"#
    }

    @Test(.timeLimit(.minutes(3))) func shapesFromTheSchemasVersionsEnvelopesAndLocations() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let linear = #"<groupOfLocations xsi:type="Linear"><linearExtension><linearByCoordinatesExtension><linearCoordinatesStartPoint><pointCoordinates><latitude>50.95</latitude><longitude>7.10</longitude></pointCoordinates></linearCoordinatesStartPoint><linearCoordinatesEndPoint><pointCoordinates><latitude>50.97</latitude><longitude>7.20</longitude></pointCoordinates></linearCoordinatesEndPoint></linearByCoordinatesExtension></linearExtension><locationForDisplay><latitude>50.96</latitude><longitude>7.15</longitude></locationForDisplay></groupOfLocations>"#
        let tpegLinear = #"<groupOfLocations xsi:type="Linear"><tpegLinearLocation><tpegDirection>northBound</tpegDirection><tpeglinearLocationType>segment</tpeglinearLocationType><to xsi:type="TpegNonJunctionPoint"><pointCoordinates><latitude>51.30</latitude><longitude>6.80</longitude></pointCoordinates></to><from xsi:type="TpegNonJunctionPoint"><pointCoordinates><latitude>51.20</latitude><longitude>6.70</longitude></pointCoordinates></from></tpegLinearLocation></groupOfLocations>"#
        let wrongWay = Self.v2Record(id: "r1", type: "VehicleObstruction", extra: "<vehicleObstructionType>vehicleOnWrongCarriageway</vehicleObstructionType>", location: Self.point(50.94, 6.96), comment: "A3 Köln Richtung Frankfurt")
        let v2 = Self.v2Header
            + #"<situation id="S-linear" version="1"><overallSeverity>high</overallSeverity>"# + Self.v2Record(id: "r0", type: "MaintenanceWorks", extra: "<roadMaintenanceType>resurfacingWork</roadMaintenanceType>", location: linear) + "</situation>"
            + #"<situation id="S-tpeg" version="1">"# + Self.v2Record(id: "r2", type: "AbnormalTraffic", extra: "<abnormalTrafficType>stationaryTraffic</abnormalTrafficType>", location: tpegLinear) + "</situation>"
            + #"<situation id="S-wrongway" version="1">"# + wrongWay + "</situation>"
            + #"<situation id="S-suspended" version="2">"# + Self.v2Record(id: "r3", type: "Accident", location: Self.point(50.5, 7.5), validity: "suspended") + "</situation>"
            + #"<situation id="S-cancelled" version="3">"# + Self.v2Record(id: "r4", type: "PublicEvent", extra: "<management><lifeCycleManagement><cancel>true</cancel></lifeCycleManagement></management>", location: Self.point(50.6, 7.6)) + "</situation>"
            + Self.v2Footer
        // A SOAP envelope around the same publication.
        let soap = #"<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header/><soapenv:Body>"#
            + v2.replacingOccurrences(of: #"<?xml version="1.0" encoding="UTF-8"?>"#, with: "") + "</soapenv:Body></soapenv:Envelope>"
        // v1.0: its own namespace, the same situation/record shape.
        let v1 = v2.replacingOccurrences(of: "http://datex2.eu/schema/2/2_0", with: "http://datex2.eu/schema/1_0/1_0").replacingOccurrences(of: #"modelBaseVersion="2""#, with: #"modelBaseVersion="1.0""#)
        // v3 with a Level C profile namespace and a posList in CRS84 (longitude first).
        let v3 = #"""
            <?xml version="1.0" encoding="UTF-8"?><d2:payload xmlns:d2="http://levelC/schema/3/d2Payload" xmlns:sit="http://levelC/schema/3/situation" xmlns:loc="http://levelC/schema/3/locationReferencing" xmlns:com="http://levelC/schema/3/common" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="sit:SituationPublication" lang="en" modelBaseVersion="3"><com:publicationTime>2026-11-26T08:00:00Z</com:publicationTime>
            <sit:situation id="S-v3"><sit:overallSeverity>low</sit:overallSeverity><sit:situationVersionTime>2026-11-26T07:00:00Z</sit:situationVersionTime>
            <sit:situationRecord xsi:type="sit:RoadOrCarriagewayOrLaneManagement" id="v3r" version="1"><sit:situationRecordCreationTime>2026-11-26T07:00:00Z</sit:situationRecordCreationTime><sit:situationRecordVersionTime>2026-11-26T07:00:00Z</sit:situationRecordVersionTime><sit:probabilityOfOccurrence>probable</sit:probabilityOfOccurrence>
            <sit:validity><com:validityStatus>definedByValidityTimeSpec</com:validityStatus><com:validityTimeSpecification><com:overallStartTime>2026-11-26T06:00:00Z</com:overallStartTime><com:overallEndTime>2099-01-01T00:00:00Z</com:overallEndTime></com:validityTimeSpecification></sit:validity>
            <sit:impact><sit:delays><sit:delayTimeValue>900</sit:delayTimeValue></sit:delays></sit:impact><sit:unknownNationalExtension><sit:whatever>x</sit:whatever></sit:unknownNationalExtension>
            <sit:locationReference xsi:type="loc:LinearLocation"><loc:gmlLineString srsName="urn:ogc:def:crs:OGC:1.3:CRS84"><loc:posList>4.90 52.37 4.95 52.40 5.00 52.42</loc:posList></loc:gmlLineString></sit:locationReference>
            <sit:roadOrCarriagewayOrLaneManagementType>roadClosed</sit:roadOrCarriagewayOrLaneManagementType></sit:situationRecord></sit:situation>
            <sit:situation id="S-openlr"><sit:situationRecord xsi:type="sit:AbnormalTraffic" id="o1" version="1"><sit:situationRecordVersionTime>2026-11-26T07:00:00Z</sit:situationRecordVersionTime>
            <sit:validity><com:validityStatus>active</com:validityStatus><com:validityTimeSpecification><com:overallStartTime>2026-11-26T06:00:00Z</com:overallStartTime></com:validityTimeSpecification></sit:validity>
            <sit:abnormalTrafficType>slowTraffic</sit:abnormalTrafficType><sit:locationReference xsi:type="loc:SingleRoadLinearLocation"><loc:openlrExtendedLinear><loc:firstDirection>
            <loc:openlrLocationReferencePoint><loc:openlrCoordinates><loc:latitude>52.5</loc:latitude><loc:longitude>4.8</loc:longitude></loc:openlrCoordinates></loc:openlrLocationReferencePoint>
            <loc:openlrLastLocationReferencePoint><loc:openlrCoordinates><loc:latitude>52.6</loc:latitude><loc:longitude>4.9</loc:longitude></loc:openlrCoordinates></loc:openlrLastLocationReferencePoint>
            </loc:firstDirection></loc:openlrExtendedLinear></sit:locationReference></sit:situationRecord></sit:situation></d2:payload>
            """#
        // v3 JSON: elements as members, attributes with a G, values wrapped, types as prefixed members.
        let json = #"""
            {"messageContainer": {"payload": [{"sitSituationPublication": {"langG": "nl", "publicationTime": "2026-11-26T08:00:00Z",
              "situation": [{"idG": "S-json", "overallSeverity": {"value": "highest"},
                "situationRecord": [{"sitAccident": {"idG": "j1", "versionG": "4", "situationRecordVersionTime": "2026-11-26T07:45:00Z",
                  "probabilityOfOccurrence": {"value": "certain"},
                  "validity": {"validityStatus": {"value": "active"}, "validityTimeSpecification": {"overallStartTime": "2026-11-26T07:40:00Z"}},
                  "generalPublicComment": [{"comment": {"values": {"value": [{"lang": "nl", "value": "Ongeval op de A2"}, {"lang": "en", "value": "Accident on the A2"}]}}}],
                  "locationReference": {"locPointLocation": {"pointByCoordinates": {"pointCoordinates": {"latitude": 52.1, "longitude": 5.1}}}}}}]}]}}]}}
            """#
        var files: [(String, String)] = [("v2.xml", v2), ("soap.xml", soap), ("v1.xml", v1), ("v3.xml", v3), ("v3.json", json)]
        files = files.map { ($0.0, $0.1) }
        for (name, text) in files {
            let file = try TestSupport.write(text, name: name, in: folder)
            let db = folder.appendingPathComponent("\(name).sqlite").path
            let out = try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder)
            #expect(out.status == 0, "\(name): \(out.stderr)")
            #expect(out.stderr.contains("(datex2"), "\(name): \(out.stderr)")
            let stored = try await Self.exported(db: db, folder: folder)
            if name == "v3.json" {
                let s = try #require(stored["S-json"])
                #expect(s["category"] as? String == "accident")
                #expect((s["coordinate"] as? [String: Double])?["latitude"] == 52.1)
                #expect(s["title"] as? String == "Accident – Ongeval op de A2", "the first language given")
                #expect(s["severity"] as? String == "highest")
                continue
            }
            if name == "v3.xml" {
                let s = try #require(stored["S-v3"])
                #expect(s["category"] as? String == "closure")
                let c = s["coordinate"] as? [String: Double]
                #expect(c?["latitude"] == 52.37 && c?["longitude"] == 4.90, "CRS84 is longitude first: \(String(describing: c))")
                #expect(s["delayMinutes"] as? String == "15")
                #expect(s["probability"] as? String == "probable")
                #expect(s["state"] as? String == "active")
                let openlr = try #require(stored["S-openlr"])
                #expect((openlr["coordinate"] as? [String: Double])?["latitude"] == 52.5 && openlr["category"] as? String == "slow traffic",
                        "an OpenLR line starts at its first location reference point: \(openlr)")
                continue
            }
            // The v2 publication in each wrapping: identical answers, and the oracle agrees on the plain ones.
            #expect(stored.count == 5, "\(name): \(stored.keys.sorted())")
            let linearIncident = try #require(stored["S-linear"])
            #expect((linearIncident["coordinate"] as? [String: Double])?["latitude"] == 50.95, "a linear location is placed at its start")
            #expect(linearIncident["category"] as? String == "roadworks")
            #expect(linearIncident["title"] as? String == "Resurfacing work")
            #expect((stored["S-tpeg"]?["coordinate"] as? [String: Double])?["latitude"] == 51.20, "a TPEG linear location starts at its from point")
            #expect(stored["S-tpeg"]?["category"] as? String == "standstill")
            #expect(stored["S-wrongway"]?["category"] as? String == "wrong-way driver")
            #expect(stored["S-wrongway"]?["road"] as? String == "A3", "the road from the comment's words")
            #expect(stored["S-suspended"]?["state"] as? String == "ended", "a suspended record ends its situation")
            #expect(stored["S-cancelled"]?["state"] as? String == "ended", "a cancelled record ends its situation")
            #expect(stored["S-wrongway"]?["state"] as? String == "active")
            if name == "v2.xml" || name == "v1.xml" {
                Self.compare(stored, with: try Self.oracle(file), file: name)
            }
        }
        // The linear segment is kept: GeoJSON's segment geometry runs start to end.
        let db = folder.appendingPathComponent("v2.xml.sqlite").path
        let segments = try await Self.cli(["export", "--db", db, "--geometry", "segment", "--search", "Resurfacing"], folder: folder)
        #expect(segments.stdout.contains(#""coordinates":[[7.1,50.95],[7.2,50.97]]"#), Comment(rawValue: segments.stdout))
        // The details in every format: CSV columns, GeoJSON properties, the cards.
        let csv = try await Self.cli(["export", "--db", db, "--format", "csv", "--search", "Resurfacing"], folder: folder)
        let rows = csv.stdout.split(separator: "\r\n").map(String.init)
        #expect(rows.count == 2 && rows[1].contains(",high,certain,2026-11-26T07:00:00Z,MaintenanceWorks,,,,"), Comment(rawValue: csv.stdout))
        let geojson = try await Self.cli(["export", "--db", db, "--format", "geojson", "--search", "Resurfacing"], folder: folder)
        #expect(geojson.stdout.contains(#""severity":"high","severityLevel":"high","probability":"certain","validFrom":"2026-11-26T07:00:00Z","recordTypes":"MaintenanceWorks""#), Comment(rawValue: geojson.stdout))
        let cards = try await Self.cli(["export", "--db", db, "--format", "annotations", "--search", "Resurfacing"], folder: folder)
        #expect(cards.stdout.contains("severity high · probability certain · valid from 2026-11-26T07:00:00Z · MaintenanceWorks"), Comment(rawValue: cards.stdout))
    }

    @Test(.timeLimit(.minutes(2))) func aNewVersionReplacesAndTheFeedsEndingsReachTheChangeFeed() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("live.sqlite").path
        func publish(_ situations: String) throws -> String {
            try TestSupport.write(Self.v2Header + situations + Self.v2Footer, name: "feed.xml", in: folder).path
        }
        let a = #"<situation id="A" version="1">"# + Self.v2Record(id: "a1", type: "Accident", location: Self.point(50.94, 6.96), comment: "Unfall") + "</situation>"
        let b = #"<situation id="B" version="1">"# + Self.v2Record(id: "b1", type: "ConstructionWorks", location: Self.point(50.8, 7.0)) + "</situation>"
        var out = try await Self.cli(["ingest", "--db", db, "--no-geocode", "--snapshot", try publish(a + b)], folder: folder)
        #expect(out.stderr.contains("2 read, 2 new"), Comment(rawValue: out.stderr))
        // Version 2 of A: the same incident, its words changed.
        let a2 = #"<situation id="A" version="2">"# + Self.v2Record(id: "a1", type: "Accident", location: Self.point(50.94, 6.96), comment: "Unfall, zwei Fahrstreifen gesperrt", version: "2") + "</situation>"
        out = try await Self.cli(["ingest", "--db", db, "--no-geocode", "--snapshot", try publish(a2 + b)], folder: folder)
        #expect(out.stderr.contains("2 read, 0 new, 1 updated, 1 unchanged"), Comment(rawValue: out.stderr))
        // A cancelled by its supplier; B no longer in the full publication.
        let a3 = #"<situation id="A" version="3">"# + Self.v2Record(id: "a1", type: "Accident", extra: "<management><lifeCycleManagement><end>true</end></lifeCycleManagement></management>", location: Self.point(50.94, 6.96), comment: "Unfall, zwei Fahrstreifen gesperrt", version: "3") + "</situation>"
        out = try await Self.cli(["ingest", "--db", db, "--no-geocode", "--snapshot", try publish(a3)], folder: folder)
        #expect(out.stderr.contains("2 ended"), Comment(rawValue: out.stderr))
        // Read again: nothing changes, nothing ends twice.
        out = try await Self.cli(["ingest", "--db", db, "--no-geocode", "--snapshot", try publish(a3)], folder: folder)
        #expect(out.stderr.contains("1 read, 0 new, 0 updated, 1 unchanged"), Comment(rawValue: out.stderr))
        #expect(!out.stderr.contains("ended"), Comment(rawValue: out.stderr))
        let changes = try await Self.cli(["changes", "--db", db, "--since", "0", "--format", "ndjson"], folder: folder)
        let kinds = changes.stdout.split(separator: "\n").compactMap { line -> String? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(o["change"] ?? "?"):\((o["incident"] as? [String: Any])?["id"] ?? o["id"] ?? "?")"
        }
        #expect(kinds.filter { $0.hasPrefix("ended") }.count == 2, "\(kinds)")
        #expect(kinds.count == 6, "2 new, 2 updated (version 2, then version 3 that ends it), 2 ended: \(kinds)")
        let stored = try await Self.exported(db: db, folder: folder)
        #expect(stored.count == 2)
        #expect(stored["A"]?["subtitle"] as? String == "Unfall, zwei Fahrstreifen gesperrt")
    }

    @Test(.timeLimit(.minutes(2))) func gzipFilesAndCompressedDownloads() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let xml = Self.v2Header + #"<situation id="G" version="1">"# + Self.v2Record(id: "g1", type: "Accident", location: Self.point(50.94, 6.96)) + "</situation>" + Self.v2Footer
        let plain = try TestSupport.write(xml, name: "feed.xml", in: folder)
        let gzip = try TestSupport.run("/usr/bin/env", ["gzip", "-k", "-9", plain.path])
        #expect(gzip.status == 0, Comment(rawValue: gzip.stderr))
        let compressed = try Data(contentsOf: URL(fileURLWithPath: plain.path + ".gz"))
        // A database each: the publication names itself, so each read would update the same situation.
        var db = folder.appendingPathComponent("g.sqlite").path
        var out = try await Self.cli(["ingest", "--db", db, "--no-geocode", plain.path + ".gz"], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("(datex2") && out.stderr.contains(": 1 read, 1 new"), Comment(rawValue: out.stderr))

        let bytes = [UInt8](compressed)
        let server = try LoopbackHTTPServer { request, _ in
            switch request.path {
            case "/feed.xml.gz": .respondBytes(status: 200, headers: [("Content-Type", "application/gzip")], body: bytes)
            case "/feed.xml": .respondBytes(status: 200, headers: [("Content-Type", "application/xml"), ("Content-Encoding", "gzip")], body: bytes)
            default: .respondBytes(status: 200, headers: [("Content-Type", "application/gzip")], body: Array(bytes.prefix(bytes.count / 2)))
            }
        }
        defer { server.shutdown() }
        for path in ["/feed.xml.gz", "/feed.xml"] {
            let url = server.baseURL.absoluteString + path
            db = folder.appendingPathComponent("g\(path.count).sqlite").path
            out = try await Self.cli(["ingest", "--db", db, "--no-geocode", url], folder: folder)
            #expect(out.status == 0 && out.stderr.contains("(datex2") && out.stderr.contains(": 1 read, 1 new"), "\(path): \(out.stderr)")
        }
        // Truncated compressed data: bad data (65), nothing stored.
        out = try await Self.cli(["ingest", "--db", db, "--no-geocode", server.baseURL.absoluteString + "/cut.gz"], folder: folder)
        #expect(out.status == 65, Comment(rawValue: out.stderr))
        #expect(out.stderr.contains("gzip-compressed, but the compressed data ends early"), Comment(rawValue: out.stderr))
    }

    @Test(.timeLimit(.minutes(2))) func alertCLocationsThroughALocationTable() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A chain of four points due north along 7° E (table 12): 100 → 101 → 102 → 103 positive.
        let table = folder.appendingPathComponent("tmc")
        try FileManager.default.createDirectory(at: table, withIntermediateDirectories: true)
        let lats = [50.90, 50.92, 50.94, 50.96]
        var points = "CID;TABCD;LCD;CLASS;TCD;STCD;JUNCTIONNUMBER;RNID;N1ID;N2ID;POL_LCD;OTH_LCD;SEG_LCD;ROA_LCD;INPOS;INNEG;OUTPOS;OUTNEG;PRESENTPOS;PRESENTNEG;DIVERSIONPOS;DIVERSIONNEG;XCOORD;YCOORD;INTERRUPTSROAD;URBAN;JNID\r\n"
        var offsets = "CID;TABCD;LCD;NEG_OFF_LCD;POS_OFF_LCD\r\n"
        for (i, lat) in lats.enumerated() {
            points += "58;12;\(100 + i);P;1;3;\(i);;;;;;;200;1;1;1;1;1;1;;;+00700000;+\(String(format: "%08d", Int((lat * 100_000).rounded())));0;0;\r\n"
            offsets += "58;12;\(100 + i);\(i == 0 ? "" : String(99 + i));\(i == 3 ? "" : String(101 + i))\r\n"
        }
        try points.write(to: table.appendingPathComponent("POINTS.DAT"), atomically: true, encoding: .isoLatin1)
        try offsets.write(to: table.appendingPathComponent("POFFSETS.DAT"), atomically: true, encoding: .isoLatin1)
        func alertC(_ body: String) -> String {
            #"<groupOfLocations xsi:type="Linear"><alertCLinear xsi:type="AlertCMethod4Linear"><alertCLocationCountryCode>D</alertCLocationCountryCode><alertCLocationTableNumber>12.1</alertCLocationTableNumber><alertCLocationTableVersion>1</alertCLocationTableVersion><alertCDirection><alertCDirectionCoded>positive</alertCDirectionCoded></alertCDirection>\#(body)</alertCLinear></groupOfLocations>"#
        }
        // Method 4 stretch: secondary 100 (+1000 m), primary 103 (+500 m, towards the secondary).
        let stretch = alertC("<alertCMethod4PrimaryPointLocation><alertCLocation><specificLocation>103</specificLocation></alertCLocation><offsetDistance><offsetDistance>500</offsetDistance></offsetDistance></alertCMethod4PrimaryPointLocation><alertCMethod4SecondaryPointLocation><alertCLocation><specificLocation>100</specificLocation></alertCLocation><offsetDistance><offsetDistance>1000</offsetDistance></offsetDistance></alertCMethod4SecondaryPointLocation>")
        // Method 2 point: 102 as it is.
        let point = alertC("<alertCMethod2PrimaryPointLocation><alertCLocation><specificLocation>102</specificLocation></alertCLocation></alertCMethod2PrimaryPointLocation>")
        let missing = alertC("<alertCMethod2PrimaryPointLocation><alertCLocation><specificLocation>999</specificLocation></alertCLocation></alertCMethod2PrimaryPointLocation>")
        let xml = Self.v2Header
            + #"<situation id="T1" version="1">"# + Self.v2Record(id: "t1", type: "MaintenanceWorks", location: stretch) + "</situation>"
            + #"<situation id="T2" version="1">"# + Self.v2Record(id: "t2", type: "Accident", location: point) + "</situation>"
            + #"<situation id="T3" version="1">"# + Self.v2Record(id: "t3", type: "Accident", location: missing, comment: "A4 Köln Richtung Olpe") + "</situation>"
            + Self.v2Footer
        let file = try TestSupport.write(xml, name: "tmc.xml", in: folder)
        let db = folder.appendingPathComponent("t.sqlite").path
        let out = try await Self.cli(["ingest", "--db", db, "--no-geocode", "--tmc-table", table.path, file.path], folder: folder)
        #expect(out.status == 0, Comment(rawValue: out.stderr))
        #expect(out.stderr.contains("3 read, 3 new, 0 updated, 0 unchanged, 0 skipped, 1 without position"), Comment(rawValue: out.stderr))
        #expect(out.stderr.contains("ALERT-C location 999 is not a point of table 12"), Comment(rawValue: out.stderr))
        let stored = try await Self.exported(db: db, folder: folder)
        // Expected positions along the meridian, by GeographicLib's direct problem.
        let primary = Geodesic.direct(from: Coordinate(latitude: 50.96, longitude: 7.0), bearing: 180, distance: 500)
        let t1 = stored["T1"]?["coordinate"] as? [String: Double]
        #expect(abs((t1?["latitude"] ?? 0) - primary.latitude) < 2e-6 && abs((t1?["longitude"] ?? 0) - 7.0) < 2e-6, "\(String(describing: t1)) vs \(primary)")
        let t2 = stored["T2"]?["coordinate"] as? [String: Double]
        #expect(t2?["latitude"] == 50.94 && t2?["longitude"] == 7.0, "\(String(describing: t2))")
        #expect(stored["T3"]?["coordinate"] is NSNull, "an unknown code leaves the incident unplaced, kept")
        // The stretch is the segment: from the secondary (moved 1000 m on) to the primary.
        let segment = try await Self.cli(["export", "--db", db, "--geometry", "segment", "--search", "Maintenance"], folder: folder)
        let start = Geodesic.direct(from: Coordinate(latitude: 50.90, longitude: 7.0), bearing: 0, distance: 1000)
        #expect(segment.stdout.contains(String(format: "[7,%.6f],[7,50.92],[7,50.94],[7,%.6f]", start.latitude, primary.latitude)), Comment(rawValue: segment.stdout))

        // Without the table the same feed is kept whole, unplaced where only ALERT-C says where.
        let without = try await Self.cli(["ingest", "--db", folder.appendingPathComponent("n.sqlite").path, "--no-geocode", file.path], folder: folder)
        #expect(without.stderr.contains("3 read, 3 new, 0 updated, 0 unchanged, 0 skipped, 3 without position"), Comment(rawValue: without.stderr))
        // … and says what would place them.
        #expect(without.stderr.contains("3 of its records are located only by ALERT-C codes (location table 12.1)") && without.stderr.contains("(--tmc-table names the table)"),
                Comment(rawValue: without.stderr))
        let bad = try await Self.cli(["ingest", "--db", db, "--tmc-table", folder.path, file.path], folder: folder)
        #expect(bad.status == 64 && bad.stderr.contains("has no POINTS.DAT"), Comment(rawValue: bad.stderr))
    }

    @Test(.timeLimit(.minutes(2))) func detectionFormatOverrideAndDocumentsThatAreNotIncidents() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("d.sqlite").path
        let measured = try TestSupport.write(#"<?xml version="1.0"?><d2LogicalModel xmlns="http://datex2.eu/schema/2/2_0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><payloadPublication xsi:type="MeasuredDataPublication" lang="nl"><publicationTime>2026-11-26T08:00:00Z</publicationTime></payloadPublication></d2LogicalModel>"#, name: "measured.xml", in: folder)
        var out = try await Self.cli(["ingest", "--db", db, measured.path], folder: folder)
        #expect(out.status == 65 && out.stderr.contains("MeasuredDataPublication holds no situations"), Comment(rawValue: out.stderr))
        // An empty situation publication is a feed with nothing on: fine.
        let empty = try TestSupport.write(Self.v2Header + Self.v2Footer, name: "empty.xml", in: folder)
        out = try await Self.cli(["ingest", "--db", db, empty.path], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("0 read"), Comment(rawValue: out.stderr))
        // --format of another kind of text is refused; of the same kind, read as asked.
        let wzdx = try TestSupport.write(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"w1","properties":{"core_details":{"event_type":"detour","road_names":["I-70"],"direction":"westbound"},"start_date":"2026-11-26T00:00:00Z","end_date":"2099-01-01T00:00:00Z"},"geometry":{"type":"LineString","coordinates":[[-105.0,39.7],[-105.1,39.71]]}}]}"#, name: "w.json", in: folder)
        out = try await Self.cli(["ingest", "--db", db, "--format", "datex2", wzdx.path], folder: folder)
        #expect(out.status == 65, Comment(rawValue: out.stderr))
        out = try await Self.cli(["ingest", "--db", db, "--format", "open511", empty.path], folder: folder)
        #expect(out.status == 65 && out.stderr.contains("not <open511>"), Comment(rawValue: out.stderr))
        out = try await Self.cli(["ingest", "--db", db, wzdx.path], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("(wzdx): 1 read, 1 new"), Comment(rawValue: out.stderr))
        let stored = try await Self.exported(db: db, folder: folder)
        #expect(stored["w1"]?["category"] as? String == "detour")
        #expect(stored["w1"]?["road"] as? String == "I-70")
        // The wrong standard forced on JSON of the right kind is refused, and a snapshot of it
        // ends nothing (it ended every incident of the source once).
        for (format, file) in [("open511", wzdx), ("wzdx", try TestSupport.write(#"{"events":[{"id":"x","event_type":"INCIDENT"}]}"#, name: "w.json", in: folder)),
                               ("wzdx", try TestSupport.write(#"{"foo":1}"#, name: "w.json", in: folder)),
                               ("open511", try TestSupport.write(#"[{"a":1}]"#, name: "w.json", in: folder))] {
            let forced = try await Self.cli(["ingest", "--db", db, "--snapshot", "--format", format, file.path], folder: folder)
            #expect(forced.status == 65 && !forced.stderr.contains("ended"), "\(format): \(forced.stderr)")
        }
        #expect(try await Self.exported(db: db, folder: folder)["w1"]?["state"] as? String == "active")
        // Closed shoulders are no restricted lanes.
        let lanes = try TestSupport.write(#"{"feed_info":{"version":"4.2"},"type":"FeatureCollection","features":[{"type":"Feature","id":"l1","properties":{"core_details":{"event_type":"work-zone","road_names":["I-25"],"direction":"northbound"},"start_date":"2026-11-26T00:00:00Z","end_date":"2099-01-01T00:00:00Z","lanes":[{"order":1,"type":"general","status":"open"},{"order":2,"type":"general","status":"closed"},{"order":3,"type":"shoulder","status":"closed"}]},"geometry":{"type":"LineString","coordinates":[[-105.0,39.7],[-105.0,39.71]]}}]}"#, name: "lanes.json", in: folder)
        _ = try await Self.cli(["ingest", "--db", db, lanes.path], folder: folder)
        #expect(try await Self.exported(db: db, folder: folder)["l1"]?["lanesRestricted"] as? String == "1")
        // A broken situation is reported and skipped; the rest are kept.
        let broken = try TestSupport.write(Self.v2Header + #"<situation version="1"></situation><situation id="ok">"# + Self.v2Record(id: "k", type: "Accident", location: Self.point(50, 7)) + "</situation>" + Self.v2Footer, name: "broken.xml", in: folder)
        out = try await Self.cli(["ingest", "--db", db, broken.path], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("2 read, 1 new") && out.stderr.contains("1 skipped"), Comment(rawValue: out.stderr))
    }

    @Test(.timeLimit(.minutes(2))) func open511InXMLAndAnAPIAnsweringInPages() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let xml = #"""
            <?xml version="1.0" encoding="UTF-8"?>
            <open511 xml:lang="en" xmlns:gml="http://www.opengis.net/gml" version="v1"><events>
            <event><id>drivebc.ca/DBC-1</id><status>ACTIVE</status><headline>Accident on Highway 1</headline><event_type>INCIDENT</event_type>
              <event_subtypes><event_subtype>ACCIDENT</event_subtype></event_subtypes><severity>MAJOR</severity><updated>2026-11-26T07:00:00-08:00</updated>
              <roads><road><name>Highway 1</name><from>Exit 44</from><direction>WESTBOUND</direction></road></roads>
              <geography><gml:Point><gml:coordinates>-123.1,49.2</gml:coordinates></gml:Point></geography>
              <schedule><intervals><interval>2026-11-26T06:00/2099-11-26T20:00</interval></intervals></schedule></event>
            <event><id>drivebc.ca/DBC-2</id><status>ARCHIVED</status><event_type>CONSTRUCTION</event_type><updated>2026-11-25T07:00:00Z</updated>
              <geography><gml:Point srsName="urn:ogc:def:crs:EPSG::4326"><gml:pos>49.3 -123.0</gml:pos></gml:Point></geography></event>
            </events></open511>
            """#
        let file = try TestSupport.write(xml, name: "events.xml", in: folder)
        let db = folder.appendingPathComponent("o.sqlite").path
        var out = try await Self.cli(["ingest", "--db", db, "--no-geocode", file.path], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("(open511): 2 read, 2 new"), Comment(rawValue: out.stderr))
        let stored = try await Self.exported(db: db, folder: folder)
        Self.compare(stored, with: try Self.oracle(file), file: "events.xml")
        #expect(stored["drivebc.ca/DBC-1"]?["severity"] as? String == "major")
        #expect(stored["drivebc.ca/DBC-1"]?["road"] as? String == "HWY-1", "DriveBC's \"Highway 1\" is the highway 1 (BC-1 finds it)")

        // An API answering in pages: followed to the end and read as one snapshot.
        @Sendable func event(_ n: Int) -> String {
            #"{"id":"api/\#(n)","status":"ACTIVE","event_type":"CONSTRUCTION","headline":"Work \#(n)","geography":{"type":"Point","coordinates":[-123.\#(n),49.\#(n)]}}"#
        }
        let server = try LoopbackHTTPServer { request, _ in
            switch request.query["offset"] ?? "0" {
            case "0": .json(#"{"events":[\#(event(1)),\#(event(2))],"pagination":{"offset":0,"next_url":"/events?offset=2"},"meta":{"version":"v1"}}"#)
            case "2": .json(#"{"events":[\#(event(3))],"pagination":{"offset":2,"next_url":"events?offset=4"},"meta":{"version":"v1"}}"#)
            default: .json(#"{"events":[\#(event(4))],"pagination":{"offset":4},"meta":{"version":"v1"}}"#)
            }
        }
        defer { server.shutdown() }
        let api = folder.appendingPathComponent("api.sqlite").path
        out = try await Self.cli(["ingest", "--db", api, "--no-geocode", "--snapshot", server.baseURL.absoluteString + "/events"], folder: folder)
        #expect(out.status == 0 && out.stderr.contains("(open511): 4 read, 4 new"), Comment(rawValue: out.stderr))
        #expect(server.requests.map(\.rawQuery) == ["", "offset=2", "offset=4"], "\(server.requests.map(\.rawQuery))")
    }
}
