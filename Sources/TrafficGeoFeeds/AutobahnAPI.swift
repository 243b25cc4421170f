import AsyncHTTPClient
import Foundation
import NIOCore
import TrafficGeoModel
import TrafficGeoHTTP
import TrafficGeoSupport

/// The Autobahn GmbH API as a source (`autobahn:`, `autobahn:A1,A3`): the road list, then each
/// road's `warning`, `roadworks` and `closure` documents.
///
/// Polite like the geocoder client: an identifying User-Agent, at most `maxInFlight` requests at
/// once, retries with exponential backoff and jitter on timeouts, connection errors and 5xx, and
/// conditional requests (`If-None-Match`/`If-Modified-Since`) against a cache of the last answers,
/// so that an unchanged document costs the server a 304. A document that fails after its retries
/// is reported; the others are kept (`AutobahnSnapshot.failures`).
public struct AutobahnAPI: Sendable {
    /// The public API.
    public static let defaultBaseURL = "https://verkehr.autobahn.de/o/autobahn"
    /// The documents read per road, in this order.
    public static let services = ["warning", "roadworks", "closure"]

    /// `autobahn:` names every road; `autobahn:A1,A3` some. Nil for any other location.
    public static func roads(inLocation location: String) -> [String]?? {
        let lower = location.lowercased()
        guard lower.hasPrefix("autobahn:") else { return nil }
        let list = location.dropFirst("autobahn:".count).split(separator: ",")
            .map { String($0).trimmed.uppercased().replacingOccurrences(of: " ", with: "") }.filter { !$0.isEmpty }
        return .some(list.isEmpty ? nil : list)
    }

    public var baseURL: String
    public var maxInFlight = 4
    /// Tries per document (the first and the retries).
    public var attempts = 3
    /// First backoff delay in seconds, doubled per retry (±50 % jitter).
    public var backoff = 0.5
    /// Seconds for one request, from sending to the last byte.
    public var timeout = 20.0
    public var maxBytes = 64 << 20
    /// Where answers and their validators are kept for conditional requests; nil: none.
    public var cacheDirectory: URL?
    public var userAgent = UserAgent.default
    public var httpClient: HTTPClient = SharedHTTPClient.client

    public init(baseURL: String = AutobahnAPI.defaultBaseURL, cacheDirectory: URL? = AutobahnAPI.defaultCacheDirectory()) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.cacheDirectory = cacheDirectory
    }

    /// `$XDG_CACHE_HOME/trafficgeo/autobahn` (`~/.cache/trafficgeo/autobahn`).
    public static func defaultCacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let cacheHome = UserFolders.folder(.cache, environment: environment)
        return URL(fileURLWithPath: cacheHome).appendingPathComponent("trafficgeo/autobahn")
    }

    /// The roads the API lists (`{"roads": ["A1", …]}`).
    public func roadList() async throws -> [String] {
        let data: Data
        do {
            data = try await fetch(baseURL + "/")
        } catch let status as Status {
            throw FeedError.httpStatus(baseURL + "/", status: status.code)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw FeedError.download(baseURL + "/", reason: Self.describe(error), underlying: error)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let roads = object["roads"] as? [Any] else {
            throw FeedError.malformed(baseURL + "/", format: .autobahn, reason: "the road list is not {\"roads\": [...]}", entriesRead: 0)
        }
        var seen = Set<String>()
        return roads.compactMap { LooseJSON.string($0)?.trimmed.replacingOccurrences(of: " ", with: "") }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// Every document of `roads` (all the API lists when nil), `maxInFlight` at a time.
    public func snapshot(roads requested: [String]?, progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> AutobahnSnapshot {
        let roads: [String]
        if let requested { roads = requested } else { roads = try await roadList() }
        let jobs = roads.flatMap { road in Self.services.map { (road, $0) } }.enumerated().map { Job(order: $0, road: $1.0, service: $1.1) }
        var answers: [Answer] = []
        try await withThrowingTaskGroup(of: Answer.self) { group in
            // No local function captures the group or a counter here: each child task is one
            // call that returns its whole answer (docs/robustness.md, "Child tasks").
            var pending = jobs.makeIterator()
            for _ in 0..<maxInFlight {
                guard let job = pending.next() else { break }
                group.addTask { await self.download(job) }
            }
            while let answer = try await group.next() {
                answers.append(answer)
                progress?(answers.count, jobs.count)
                if let job = pending.next() { group.addTask { await self.download(job) } }
            }
        }
        // Interrupted (Ctrl-C): no snapshot, rather than one of failures.
        try Task.checkCancellation()
        var documents: [AutobahnSnapshot.Document] = []
        var failures: [AutobahnSnapshot.Failure] = []
        for answer in answers.sorted(by: { $0.job.order < $1.job.order }) {
            let (road, service) = (answer.job.road, answer.job.service)
            switch answer.outcome {
            case let .success(data) where (try? JSONSerialization.jsonObject(with: data)) is [String: Any]:
                documents.append(.init(road: road, service: service, body: data))
            case .success:
                // Not read whole, so it ends nothing: its incidents stay as they were.
                failures.append(.init(road: road, service: service, reason: "the answer is not a JSON object"))
            case let .failure(error): failures.append(.init(road: road, service: service, reason: Self.describe(error)))
            }
        }
        return AutobahnSnapshot(roads: roads, documents: documents, failures: failures)
    }

    /// One document to fetch: a road's service list, and its place in the snapshot.
    struct Job: Sendable {
        let order: Int
        let road: String
        let service: String
    }

    /// What a child task of `snapshot` hands back: the job it did, and the body or the error.
    struct Answer: Sendable {
        let job: Job
        let outcome: Result<Data, Error>
    }

    /// One child task's whole work. The outcome is settled in its own statement before the answer
    /// is built: Swift 6.3.1 at -O lost the first element of `(k, .success(try await …))` returned
    /// from a task (LLVM's dead-store elimination removed its store before the suspension;
    /// scripts/compiler-check/task-result.swift), and the release build crashed on garbage indices.
    private func download(_ job: Job) async -> Answer {
        let url = baseURL + "/" + Self.encode(job.road) + "/services/" + job.service
        let outcome: Result<Data, Error>
        do { outcome = .success(try await fetch(url)) } catch { outcome = .failure(error) }
        return Answer(job: job, outcome: outcome)
    }

    /// Reads the incidents of a snapshot's documents, each marked with its part
    /// (`Incident.snapshotPartProperty`, "A1/warning") and road (`autobahn_road`).
    public static func read(_ snapshot: AutobahnSnapshot, source: String, handle: (FeedEvent) throws -> Void) throws {
        var index = 0
        for document in snapshot.documents {
            let streamer = JSONArrayStreamer(keys: Set(AutobahnJSONReader.services + [""]))
            do {
                try streamer.scan(InputStream(data: document.body)) { key, data in
                    index += 1
                    var event = AutobahnJSONReader.decode(data, service: key ?? document.service, source: source, index: index)
                    if case var .incident(incident) = event {
                        incident.properties[Incident.snapshotPartProperty] = document.part
                        incident.properties["autobahn_road"] = document.road
                        event = .incident(incident)
                    }
                    try handle(event)
                }
            } catch let error as JSONArrayStreamer.ScanError {
                // `snapshot` let only JSON objects through; past that, a document the streamer
                // cannot follow keeps what it read before, and the others stand.
                try handle(.skipped(SkippedEntry(index: index, reason: "\(document.part): \(error.description)")))
            }
        }
    }

    // MARK: - HTTP

    private struct Status: Error { let code: Int }
    private struct Timeout: Error { let seconds: Double }
    private struct TooLarge: Error { let limit: Int }

    /// The body at `url`, with retries; from the cache when the server says it did not change.
    func fetch(_ url: String) async throws -> Data {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await once(url)
            } catch let error as Status where error.code < 500 && error.code != 429 {
                throw error
            } catch is TooLarge {
                throw TooLarge(limit: maxBytes)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                guard attempt < attempts else { throw error }
                try await Task.sleep(for: .milliseconds(Int(Backoff.delay(first: backoff, attempt: attempt) * 1000)))
            }
        }
    }

    private func once(_ url: String) async throws -> Data {
        // (The HTTP client stops the program on a port above 65535.)
        if let problem = HTTPLocation.problem(url) { throw FeedError.unreadable(url, reason: problem) }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Accept", value: "application/json")
        let cached = cache(for: url)
        // The cache is files: read and written on a thread for blocking work.
        if let cached, let validators = try await BlockingThreads.run({ cached.validators }) {
            if let etag = validators.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let modified = validators.lastModified { request.headers.add(name: "If-Modified-Since", value: modified) }
        }
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await httpClient.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
            body = try await response.body.collect(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw TooLarge(limit: maxBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw Timeout(seconds: timeout)
        }
        let status = Int(response.status.code)
        if status == 304, let cached, let data = try await BlockingThreads.run({ try? Data(contentsOf: cached.body) }) { return data }
        guard (200..<300).contains(status) else {
            if status == 304, let cached { try await BlockingThreads.run { cached.forget() } }     // a 304 for an answer we no longer have: ask again
            throw Status(code: status)
        }
        let data = Data(body.readableBytesView)
        if let cached {
            let etag = response.headers.first(name: "ETag"), lastModified = response.headers.first(name: "Last-Modified")
            try await BlockingThreads.run { cached.keep(data, etag: etag, lastModified: lastModified) }
        }
        return data
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case let status as Status: "HTTP \(status.code)"
        case let timeout as Timeout: "no answer within \(timeout.seconds) s"
        case let large as TooLarge: "the answer is larger than \(large.limit) bytes"
        case let feed as FeedError: feed.description
        default: NetworkErrorText.describe(error).text
        }
    }

    static func encode(_ road: String) -> String {
        road.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? road
    }

    // MARK: - Conditional requests

    private struct CachedAnswer: Sendable {
        struct Validators: Codable { var etag: String?; var lastModified: String? }
        let body: URL
        let meta: URL
        var validators: Validators? {
            guard FileManager.default.fileExists(atPath: body.path), let data = try? Data(contentsOf: meta) else { return nil }
            return try? JSONDecoder().decode(Validators.self, from: data)
        }

        func keep(_ data: Data, etag: String?, lastModified: String?) {
            guard etag != nil || lastModified != nil else { return forget() }
            try? FileManager.default.createDirectory(at: body.deletingLastPathComponent(), withIntermediateDirectories: true)
            // The body first: validators without their body would turn a 304 into an error.
            guard (try? data.write(to: body, options: .atomic)) != nil,
                  let meta = try? JSONEncoder().encode(Validators(etag: etag, lastModified: lastModified)) else { return }
            try? meta.write(to: self.meta, options: .atomic)
        }

        func forget() {
            try? FileManager.default.removeItem(at: meta)
            try? FileManager.default.removeItem(at: body)
        }
    }

    private func cache(for url: String) -> CachedAnswer? {
        guard let cacheDirectory else { return nil }
        var hash = StableHash()
        hash.combine(url)
        let name = String(hash.int64, radix: 16)
        return CachedAnswer(body: cacheDirectory.appendingPathComponent(name + ".json"),
                            meta: cacheDirectory.appendingPathComponent(name + ".validators"))
    }
}

/// What one fetch of the Autobahn API brought: each document read, and each that failed.
public struct AutobahnSnapshot: Sendable {
    public struct Document: Sendable {
        public var road: String
        public var service: String
        public var body: Data
        public var part: String { road + "/" + service }
    }

    public struct Failure: Sendable, CustomStringConvertible {
        public var road: String
        public var service: String
        public var reason: String
        public var part: String { road + "/" + service }
        public var description: String { "\(part): \(reason)" }
    }

    public var roads: [String]
    public var documents: [Document]
    public var failures: [Failure]

    /// The parts read whole: what a snapshot ingest may end incidents of.
    public var completeParts: Set<String> { Set(documents.map(\.part)) }
}
