import Foundation
import Testing
@testable import TrafficGeoSQLite
@testable import TrafficGeoSupport

@Suite("Security: secrets, SQL, output paths, TLS, limits", .serialized, .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct SecurityTests {
    static func cli() throws -> String {
        try #require(TestSupport.cliExecutable, "the trafficgeo executable is not built").path
    }

    /// A database in `folder` with `count` synthetic incidents, ingested by the CLI.
    static func database(incidents count: Int, in folder: URL) throws -> String {
        let db = folder.appendingPathComponent("db.sqlite").path
        let feed = try TestSupport.write(SyntheticFeeds.atom(count: count), name: "f.xml", in: folder)
        #expect(try TestSupport.run(cli(), ["ingest", "-q", "--no-geocode", "--db", db, feed.path]).status == 0)
        return db
    }

    @Test func secretsAreRedacted() {
        #expect(Redaction.redact("pelias=https://api.example.org/v1?api_key=abc123&size=5")
                == "pelias=https://api.example.org/v1?api_key=REDACTED&size=5")
        #expect(Redaction.redact("csv=http://u:pw@legacy.example/q?KEY=s3cr3t") == "csv=http://REDACTED@legacy.example/q?KEY=REDACTED")
        #expect(Redaction.redact("nominatim=http://127.0.0.1:8088") == "nominatim=http://127.0.0.1:8088")
    }

    /// Neither a bad configuration nor a failed request shows the key, even with -v.
    @Test func apiKeysNeverReachTheTerminal() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        for chain in ["nope=http://x.example/?api_key=SECRET123", "pelias=ftp://x.example/?api_key=SECRET123",
                      "pelias=http://127.0.0.1:9/?api_key=SECRET123", "csv=http://user:SECRET123@127.0.0.1:9/?key=SECRET123"] {
            let result = try TestSupport.run(Self.cli(), ["geocode", "-v", "--db", db, "--retries", "0", "--timeout", "2s", "--geocoder", chain, "Köln"])
            #expect(result.status != 0)
            #expect(!result.stderr.contains("SECRET123") && !result.stdout.contains("SECRET123"), "\(chain): \(result.stderr)")
        }
    }

    /// Filters are bound parameters: SQL in them is text to search for.
    @Test func sqlInFiltersIsJustText() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try Self.database(incidents: 30, in: folder)
        for args in [["--search", "'; DROP TABLE incidents; --"], ["--road", "A1' OR '1'='1"], ["--category", "x') OR 1=1 --"],
                     ["--search", "%"], ["--search", "\u{0}"]] {
            let result = try TestSupport.run(Self.cli(), ["near", "--db", db, "--lat", "50", "--lon", "7", "--format", "csv"] + args)
            #expect(result.status == 0 || result.status == 64, "\(args): \(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count <= 1, "\(args) matched rows: \(result.stdout.prefix(200))")
        }
        #expect(try SQLiteIncidentStore(path: db, readOnly: true).statistics().total == 30)
    }

    /// `-o` through a symlink replaces the link, never writes its target.
    @Test func outputNeverFollowsASymlink() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try Self.database(incidents: 5, in: folder)
        let precious = try TestSupport.write("keep me", name: "precious.txt", in: folder)
        let link = folder.appendingPathComponent("out.geojson")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: precious)
        let result = try TestSupport.run(Self.cli(), ["export", "--db", db, "--format", "geojson", "-o", link.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOf: precious, encoding: .utf8) == "keep me")
        #expect(try String(contentsOf: link, encoding: .utf8).contains("FeatureCollection"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == nil, "the output is a file now")
        // No temporary files are left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    /// `-o /dev/null` or a FIFO is written to, never replaced by a regular file.
    @Test func devicesAndPipesAreWrittenNotReplaced() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = try Self.database(incidents: 5, in: folder)
        // A FIFO stands in for /dev/null (replacing the real one would break this machine if it failed).
        let fifo = folder.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = [fifo]
        let out = Pipe()
        reader.standardOutput = out
        try reader.run()
        let result = try TestSupport.run(Self.cli(), ["export", "--db", db, "--format", "csv", "-o", fifo])
        let received = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(received.split(whereSeparator: \.isNewline).count == 6, "\(received)")  // CSV lines end in CRLF
        var info = stat()
        #expect(stat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the FIFO is still a FIFO")
        let null = try TestSupport.run(Self.cli(), ["export", "--db", db, "-o", "/dev/null"])
        #expect(null.status == 0)
        #expect(stat("/dev/null", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR, "/dev/null is still a device")
    }

    @Test func entryCountLimitKeepsTheFirstEntries() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let db = folder.appendingPathComponent("db.sqlite").path
        let feed = try TestSupport.write(SyntheticFeeds.atom(count: 100), name: "f.xml", in: folder)
        let result = try TestSupport.run(Self.cli(), ["ingest", "--no-geocode", "--max-entries", "10", "--db", db, feed.path])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("--max-entries"), "\(result.stderr)")
        // Over the limit is not broken, and what was stored is said once.
        #expect(!result.stderr.contains("not valid") && result.stderr.components(separatedBy: "stored").count == 2, "\(result.stderr)")
        #expect(try SQLiteIncidentStore(path: db, readOnly: true).statistics().total == 10)
    }

    /// TLS certificates are verified: a self-signed server on loopback is refused.
    @Test(.enabled(if: TestSupport.which("openssl") != nil && TestSupport.which("python3") != nil,
                   "needs openssl and python3 for an HTTPS server on loopback"))
    func selfSignedCertificatesAreRefused() throws {
        let openssl = try #require(TestSupport.which("openssl")), python = try #require(TestSupport.which("python3"))
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("key.pem").path, cert = folder.appendingPathComponent("cert.pem").path
        let made = try TestSupport.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                                 "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        try #require(made.status == 0, Comment(rawValue: made.stderr))
        _ = try TestSupport.write(SyntheticFeeds.atom(count: 3), name: "feed.xml", in: folder)
        let portFile = folder.appendingPathComponent("port").path
        let server = try TestSupport.launch(URL(fileURLWithPath: python), ["-c", """
            import http.server, ssl, os, functools
            os.chdir(\(String(reflecting: folder.path)))
            httpd = http.server.HTTPServer(("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory="."))
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(\(String(reflecting: cert)), \(String(reflecting: key)))
            httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
            with open(\(String(reflecting: portFile + ".tmp")), "w") as f: f.write(str(httpd.server_address[1]))
            os.replace(\(String(reflecting: portFile + ".tmp")), \(String(reflecting: portFile)))  # never read half-written
            httpd.serve_forever()
            """])
        defer { TestSupport.stop(server) }
        var port: String?
        for _ in 0..<100 where port == nil {
            port = try? String(contentsOfFile: portFile, encoding: .utf8)
            if port == nil { usleep(50_000) }
        }
        let p = try #require(port)
        let result = try TestSupport.run(Self.cli(), ["ingest", "--no-geocode", "--db", folder.appendingPathComponent("db.sqlite").path,
                                                      "https://127.0.0.1:\(p)/feed.xml"])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.lowercased().contains("certificate") || result.stderr.contains("TLS") || result.stderr.contains("SSL"), "\(result.stderr)")
    }
}
