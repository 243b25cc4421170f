import Foundation
import Testing
@testable import TrafficGeoGeocoding

/// `trafficgeo geocode batch` as a user runs it, against a geocoder on loopback.
@Suite("Batch geocoding", .serialized)
struct BatchGeocodeTests {
    /// A Nominatim that knows "Place N" at a position derived from N, fails for "Broken", and
    /// counts how often each query was asked.
    static func server(delay: Double = 0) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request, _ in
            let q = request.query["q"] ?? ""
            let reply: LoopbackHTTPServer.Reply
            if q == "Broken" {
                reply = .text("boom", status: 500)
            } else if q.hasPrefix("Place "), let n = Int(q.dropFirst(6)) {
                reply = .json("[" + GeocoderFixtures.nominatimPlace(q, lat: 50 + Double(n) / 1000, lon: 7 + Double(n) / 1000,
                                                                  category: "place", type: "village") + "]")
            } else {
                reply = .json("[]")
            }
            return delay > 0 ? .delayed(seconds: delay, reply) : reply
        }
    }

    static func counts(_ server: LoopbackHTTPServer) -> [String: Int] {
        var c: [String: Int] = [:]
        for r in server.requests { c[r.query["q"] ?? "", default: 0] += 1 }
        return c
    }

    static func cli() throws -> URL {
        try #require(TestSupport.cliExecutable, "the trafficgeo executable is not built")
    }

    @Test func orderColumnsDuplicatesAndFailures() throws {
        let exe = try Self.cli()
        let server = try Self.server()
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var csv = "id;name;remark\n"
        let names = ["Place 3", "Place 1", "Broken", "Place 3", "", "Nowhere", "place 1", "Place 2"]
        for (i, n) in names.enumerated() { csv += "\(i);\(n);\"semi;colon \(i)\"\n" }
        let input = try TestSupport.write(csv, name: "in.csv", in: folder)
        let output = folder.appendingPathComponent("out.csv").path
        let r = try TestSupport.run(exe.path, ["geocode", "batch", input.path, "--column", "name", "-o", output, "--db",
                                               folder.appendingPathComponent("db.sqlite").path, "--geocoder", "nominatim=\(server.baseURL)",
                                               "--timeout", "2s", "--retries", "1"])
        #expect(r.status == 3, Comment(rawValue: r.stderr))   // "Broken" failed: partial
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines[0] == "id;name;remark;latitude;longitude;precision;confidence;provider;status;error")
        #expect(lines.count == names.count + 1)
        let rows = lines.dropFirst().map { $0.components(separatedBy: ";") }
        #expect(rows.map { $0[0] } == (0..<names.count).map(String.init))          // input order
        #expect(lines[1].hasPrefix("0;Place 3;\"semi;colon 0\";50.0030000;7.0030000;"))
        #expect(lines[1].contains(";found;"))
        #expect(lines[3].contains(";failed;") && lines[3].contains("HTTP 500"))
        #expect(lines[5].hasSuffix(";empty;"))
        #expect(lines[6].contains(";not-found;"))
        #expect(lines[7].contains("50.0010000;7.0010000"))                         // "place 1" = "Place 1"
        let asked = Self.counts(server)
        #expect(asked["Place 3"] == 1 && asked["Place 1"] == 1 && asked["place 1"] == nil)
        #expect(r.stderr.contains("8 rows, 5 distinct queries"))
    }

    @Test func jsonLinesAndTemplates() throws {
        let exe = try Self.cli()
        let server = try Self.server()
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let jsonl = "{\"kind\":\"Place\",\"n\":5,\"extra\":{\"a\":[1,2]}}\n{\"kind\":\"Place\",\"n\":6}\n"
        let r = try TestSupport.run(exe.path, ["geocode", "batch", "--template", "{kind} {n}", "--db", folder.appendingPathComponent("db.sqlite").path,
                                               "--geocoder", "nominatim=\(server.baseURL)", "--quiet"], stdin: jsonl)
        #expect(r.status == 0, Comment(rawValue: r.stderr))
        let objects = r.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(objects.count == 2)
        #expect(objects[0]["latitude"] as? Double == 50.005 && objects[0]["status"] as? String == "found")
        #expect((objects[0]["extra"] as? [String: Any]) != nil)
        #expect(r.stdout.hasPrefix("{\"kind\":\"Place\",\"n\":5,\"extra\":{\"a\":[1,2]},\"latitude\""))   // input keys first, in order
        #expect(r.stderr.isEmpty)
    }

    @Test func dryRunSendsNothing() throws {
        let exe = try Self.cli()
        let server = try Self.server()
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try TestSupport.write("q\nPlace 1\nPlace 1\nPlace 2\n", name: "in.csv", in: folder)
        let r = try TestSupport.run(exe.path, ["geocode", "batch", input.path, "--dry-run", "--db", folder.appendingPathComponent("db.sqlite").path,
                                               "--geocoder", "nominatim=\(server.baseURL)"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("3 rows, 2 distinct queries"))
        #expect(server.requests.isEmpty)
    }

    @Test func aKilledRunResumesWithTheSameOutputAndNoQueryAskedTwice() throws {
        let exe = try Self.cli()
        let server = try Self.server(delay: 0.03)
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var csv = "id,q\n"
        for i in 0..<240 { csv += "\(i),Place \(i % 200)\n" }   // 40 duplicates
        let input = try TestSupport.write(csv, name: "in.csv", in: folder)
        let db = folder.appendingPathComponent("db.sqlite").path
        let output = folder.appendingPathComponent("out.csv").path
        let arguments = ["geocode", "batch", input.path, "--column", "q", "-o", output, "--db", db,
                         "--geocoder", "nominatim=\(server.baseURL)", "--concurrency", "4", "--quiet"]
        let process = try TestSupport.launch(exe, arguments)
        while server.requests.count < 80 && process.isRunning { usleep(2000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(!FileManager.default.fileExists(atPath: output))            // never half a file
        let beforeResume = server.requests.count
        #expect(beforeResume >= 80 && beforeResume < 200)

        let resumed = try TestSupport.run(exe.path, arguments)
        #expect(resumed.status == 0, Comment(rawValue: resumed.stderr))
        let asked = Self.counts(server)
        #expect(asked.count == 200)
        // Only questions in flight at the kill (at most --concurrency of them) can have been asked twice.
        let twice = asked.filter { $0.value > 1 }
        #expect(twice.count <= 4, "asked twice: \(twice)")

        // The same output as an uninterrupted run into a fresh database.
        let reference = folder.appendingPathComponent("reference.csv").path
        var fresh = arguments
        fresh[fresh.firstIndex(of: output)!] = reference
        fresh[fresh.firstIndex(of: db)!] = folder.appendingPathComponent("fresh.sqlite").path
        let uninterrupted = try TestSupport.run(exe.path, fresh)
        #expect(uninterrupted.status == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == String(contentsOfFile: reference, encoding: .utf8))
        #expect(try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").count == 241)
    }

    @Test func ctrlCWritesAConsistentOutputAndTheRerunCompletes() throws {
        let exe = try Self.cli()
        let server = try Self.server(delay: 0.05)
        defer { server.shutdown() }
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var csv = "q\n"
        for i in 0..<100 { csv += "Place \(i)\n" }
        let input = try TestSupport.write(csv, name: "in.csv", in: folder)
        let output = folder.appendingPathComponent("out.csv").path
        let arguments = ["geocode", "batch", input.path, "-o", output, "--db", folder.appendingPathComponent("db.sqlite").path,
                         "--geocoder", "nominatim=\(server.baseURL)", "--concurrency", "2", "--quiet"]
        let process = try TestSupport.launch(exe, arguments)
        while server.requests.count < 20 && process.isRunning { usleep(2000) }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 3)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 101)                                   // every row, in order
        let found = lines.filter { $0.contains(",found,") }.count
        let pending = lines.filter { $0.hasSuffix(",pending,") }.count
        #expect(found >= 20 && pending > 0 && found + pending == 100)
        let again = try TestSupport.run(exe.path, arguments)
        #expect(again.status == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").filter { $0.contains(",found,") }.count == 100)
        #expect(Self.counts(server).values.allSatisfy { $0 == 1 })   // Ctrl-C waited for the answers in flight
    }
}
