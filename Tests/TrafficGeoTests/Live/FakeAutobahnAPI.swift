import Foundation
@testable import TrafficGeoSupport

/// A real HTTP server on loopback that answers like the Autobahn GmbH API (`/o/autobahn/` the
/// road list, `/o/autobahn/ROAD/services/SERVICE` the lists), with ETags and 304s for
/// conditional requests, and roads that can be told to fail (500), hang, or answer empty lists.
final class FakeAutobahnAPI: @unchecked Sendable {
    enum Behaviour { case normal, fail500, hang }

    private final class State: @unchecked Sendable {
        let lock = NSLock()
        var documents: [String: [String: [[String: Any]]]] = [:]
        var behaviour: [String: Behaviour] = [:]
        var notModified = 0

        func reply(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Reply {
            lock.lock(); defer { lock.unlock() }
            let parts = request.path.split(separator: "/").map(String.init)
            guard parts.count >= 2, parts[0] == "o", parts[1] == "autobahn" else { return .json("{}", status: 404) }
            if parts.count == 2 {
                return .json(Self.json(["roads": documents.keys.sorted()]))
            }
            guard parts.count == 5, parts[3] == "services" else { return .json("{}", status: 404) }
            let road = parts[2], service = parts[4]
            switch behaviour[road] ?? .normal {
            case .fail500: return .json("{\"error\": \"internal\"}", status: 500)
            case .hang: return .hang
            case .normal: break
            }
            guard let services = documents[road] else { return .json("{}", status: 404) }
            let body = Self.json([service: services[service] ?? []])
            let etag = "\"\(StableHash.of(body))\""
            if request.headers["if-none-match"] == etag {
                notModified += 1
                return .respond(status: 304, headers: [("ETag", etag)], body: "")
            }
            return .respond(status: 200, headers: [("Content-Type", "application/json"), ("ETag", etag)], body: body)
        }

        static func json(_ object: Any) -> String {
            String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    private let state = State()
    let server: LoopbackHTTPServer
    var baseURL: String { "http://127.0.0.1:\(server.port)/o/autobahn" }

    init() throws {
        let state = self.state
        server = try LoopbackHTTPServer { request, _ in state.reply(request) }
    }

    func set(road: String, service: String, items: [[String: Any]]) {
        state.lock.lock(); defer { state.lock.unlock() }
        state.documents[road, default: [:]][service] = items
    }

    func items(road: String, service: String) -> [[String: Any]] {
        state.lock.lock(); defer { state.lock.unlock() }
        return state.documents[road]?[service] ?? []
    }

    func set(road: String, behaviour: Behaviour) {
        state.lock.lock(); defer { state.lock.unlock() }
        state.behaviour[road] = behaviour
    }

    var notModifiedAnswers: Int {
        state.lock.lock(); defer { state.lock.unlock() }
        return state.notModified
    }

    func shutdown() { server.shutdown() }
}

extension StableHash {
    static func of(_ text: String) -> UInt64 {
        var hash = StableHash()
        hash.combine(text)
        return UInt64(bitPattern: hash.int64)
    }
}

/// Warning items in the API's shape, made from rows of ../shared/data/autobahn (the first rows of
/// distinct identifiers with a position, per road).
enum AutobahnFixture {
    static func items(roads: [String], perRoad: Int, shared: URL) throws -> [String: [[String: Any]]] {
        let xz = Process()
        xz.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        xz.arguments = ["xz", "-dc", shared.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path]
        let pipe = Pipe()
        xz.standardOutput = pipe
        try xz.run()
        let reader = CSVRecordReader(stream: InputStream(data: pipe.fileHandleForReading.readDataToEndOfFile()))
        xz.waitUntilExit()
        guard let header = try reader.next()?.fields else { return [:] }
        func column(_ name: String) -> Int { header.firstIndex(of: name)! }
        let (road, identifier, title, subtitle, start, extent, point, lat, lon, description) = (
            column("road"), column("identifier"), column("title"), column("subtitle"), column("startTimestamp"),
            column("extent"), column("point"), column("latitude"), column("longitude"), column("description"))
        var found: [String: [[String: Any]]] = [:]
        var seen = Set<String>()
        while let record = try reader.next() {
            let f = record.fields
            guard f.count == header.count, roads.contains(f[road]), (found[f[road]]?.count ?? 0) < perRoad,
                  f[lat] != "NA", f[lon] != "NA", Double(f[lat]) != nil, seen.insert(f[identifier]).inserted else { continue }
            found[f[road], default: []].append([
                "identifier": f[identifier], "title": f[title], "subtitle": f[subtitle],
                "description": f[description].split(separator: "\n").map(String.init),
                "coordinate": ["lat": f[lat], "long": f[lon]],      // strings, as the live API sends them
                "startTimestamp": f[start], "extent": f[extent], "point": f[point],
                "display_type": "WARNING", "isBlocked": "false",
            ])
            if roads.allSatisfy({ (found[$0]?.count ?? 0) >= perRoad }) { break }
        }
        return found
    }
}
