import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TrafficGeoSupport
import TrafficGeoHTTP

/// A feed's bytes in a local file, whatever they came from (a file, stdin or an http(s) URL).
///
/// Readers stream from the file, so memory does not grow with the feed; stdin and downloads are
/// spooled to a temporary file first so that the format can be detected from the first bytes.
///
///     let input = try await FeedInput.open("https://host/lmst.de_DE.xml")
///     defer { input.discard() }
public struct FeedInput: Sendable {
    /// What the user named: a path, `-` for stdin, or a URL.
    public let location: String
    /// The local file holding the bytes.
    public let fileURL: URL
    private let isTemporary: Bool

    public init(localFile path: String, location: String? = nil) {
        self.location = location ?? path
        self.fileURL = URL(fileURLWithPath: path)
        self.isTemporary = false
    }

    private init(location: String, temporaryFile: URL) {
        self.location = location
        self.fileURL = temporaryFile
        self.isTemporary = true
    }

    /// The first bytes, for format detection.
    public func head(_ count: Int = 8192) throws -> Data {
        guard let handle = try? FileHandle(forReadingFrom: fileURL) else {
            throw FeedError.unreadable(location, reason: "cannot open \(fileURL.path)")
        }
        defer { try? handle.close() }
        return try handle.read(upToCount: count) ?? Data()
    }

    /// A stream over the whole feed.
    public func makeStream() throws -> InputStream {
        guard let stream = InputStream(url: fileURL) else {
            throw FeedError.unreadable(location, reason: "cannot open \(fileURL.path)")
        }
        return stream
    }

    /// Removes the spooled copy of stdin or a download; a no-op for a user's file.
    public func discard() {
        if isTemporary { try? FileManager.default.removeItem(at: fileURL) }
    }

    // MARK: - Opening

    /// Resolves a location: `-` reads stdin, `http(s)://` downloads, anything else is a file path.
    public static func open(_ location: String, maxBytes: Int64 = FeedInput.defaultMaxBytes,
                            httpClient: HTTPClient = SharedHTTPClient.client, timeout: TimeAmount = .seconds(60)) async throws -> FeedInput {
        let given = try await openAsGiven(location, maxBytes: maxBytes, httpClient: httpClient, timeout: timeout)
        // Inflating (up to maxBytes) blocks: on the threads for blocking work, not the task's.
        return try await BlockingThreads.run { try given.inflated(maxBytes: maxBytes) }
    }

    /// The same, the download's time limit as a Swift `Duration`.
    public static func open(_ location: String, maxBytes: Int64 = FeedInput.defaultMaxBytes, timeout: Duration) async throws -> FeedInput {
        try await open(location, maxBytes: maxBytes, timeout: .nanoseconds(timeout.nanoseconds))
    }

    /// The document itself: a gzip-compressed feed (a `.gz` file, a download served compressed
    /// without saying so in `Content-Encoding`, which the HTTP client undoes itself) inflated into
    /// a temporary file; any other returned as it is.
    func inflated(maxBytes: Int64) throws -> FeedInput {
        guard GzipInflation.isGzip(try head(2)) else { return self }
        let url = Self.temporaryFile()
        do {
            try GzipInflation.inflate(fileURL, into: url, maxBytes: maxBytes)
        } catch {
            try? FileManager.default.removeItem(at: url)
            discard()
            switch error {
            case .tooLarge: throw FeedError.tooLarge(location, limit: maxBytes)
            case let .corrupt(reason): throw FeedError.corruptCompression(location, reason: reason)
            case let .io(reason): throw FeedError.unreadable(location, reason: "gzip-compressed: \(reason)")
            }
        }
        discard()
        return FeedInput(location: location, temporaryFile: url)
    }

    private static func openAsGiven(_ location: String, maxBytes: Int64, httpClient: HTTPClient, timeout: TimeAmount) async throws -> FeedInput {
        if location == "-" {
            // Reading standard input waits on whoever writes it.
            return try await BlockingThreads.run { try spoolStandardInput(maxBytes: maxBytes) }
        }
        let lower = location.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            if let problem = HTTPLocation.problem(location) { throw FeedError.unreadable(location, reason: problem) }
            return try await download(location, maxBytes: maxBytes, client: httpClient, timeout: timeout)
        }
        // A file URL names a file: file:///path, file://localhost/path, or RFC 8089's short
        // file:/path. Another scheme (ftp://, s3://) is nothing trafficgeo fetches, which
        // "no such file" did not say.
        let path = lower.hasPrefix("file:/") ? Self.fileURLPath(location) ?? location : location
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            if let scheme = Self.urlScheme(of: location), scheme != "file" {
                throw FeedError.unreadable(location, reason: "\(scheme):// is not fetched; trafficgeo reads http:// and https:// URLs, files and standard input (-)")
            }
            throw FeedError.notFound(location)
        }
        if path != location { return try await openAsGiven(path, maxBytes: maxBytes, httpClient: httpClient, timeout: timeout) }
        guard !isDirectory.boolValue else { throw FeedError.unreadable(location, reason: "it is a directory") }
        guard FileManager.default.isReadableFile(atPath: location) else {
            throw FeedError.unreadable(location, reason: "permission denied")
        }
        if let size = (try? FileManager.default.attributesOfItem(atPath: location))?[.size] as? NSNumber,
           size.int64Value > maxBytes {
            throw FeedError.tooLarge(location, limit: maxBytes)
        }
        return FeedInput(localFile: location)
    }

    /// The path of a file URL on this host (no host, or localhost); nil for another host's.
    static func fileURLPath(_ location: String) -> String? {
        guard let url = URL(string: location), url.isFileURL || url.scheme?.lowercased() == "file" else { return nil }
        guard (url.host ?? "").isEmpty || url.host?.lowercased() == "localhost" else { return nil }
        return url.path.isEmpty ? nil : url.path
    }

    /// The scheme of a location written as a URL ("ftp" of ftp://host/x), lower case; nil for a path.
    static func urlScheme(of location: String) -> String? {
        guard let colon = location.range(of: "://") else { return nil }
        let scheme = location[..<colon.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return nil }
        return scheme.lowercased()
    }

    /// 1 GiB: far beyond any real incident feed, small enough to stop a runaway download.
    public static let defaultMaxBytes: Int64 = 1 << 30

    private static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trafficgeo-feed-\(UUID().uuidString)")
    }

    private static func spoolStandardInput(maxBytes: Int64) throws -> FeedInput {
        let url = temporaryFile()
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let out = try? FileHandle(forWritingTo: url) else {
            throw FeedError.unreadable("stdin", reason: "cannot create a temporary file in \(url.deletingLastPathComponent().path)")
        }
        defer { try? out.close() }
        var total: Int64 = 0
        while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 16), !chunk.isEmpty {
            total += Int64(chunk.count)
            if total > maxBytes {
                try? FileManager.default.removeItem(at: url)
                throw FeedError.tooLarge("stdin", limit: maxBytes)
            }
            try out.write(contentsOf: chunk)
        }
        return FeedInput(location: "stdin", temporaryFile: url)
    }

    private static func download(_ location: String, maxBytes: Int64, client: HTTPClient,
                                 timeout: TimeAmount) async throws -> FeedInput {
        let url = temporaryFile()
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let out = try? FileHandle(forWritingTo: url) else {
            throw FeedError.download(location, reason: "cannot create a temporary file")
        }
        defer { try? out.close() }
        do {
            var request = HTTPClientRequest(url: location)
            request.headers.add(name: "User-Agent", value: UserAgent.default)
            request.headers.add(name: "Accept", value: "application/atom+xml, application/rss+xml, application/json, application/geo+json, application/xml, text/xml, text/csv, */*;q=0.5")
            let response = try await client.execute(request, timeout: timeout)
            guard (200..<300).contains(response.status.code) else {
                throw FeedError.httpStatus(location, status: Int(response.status.code))
            }
            var total: Int64 = 0
            for try await buffer in response.body {
                total += Int64(buffer.readableBytes)
                if total > maxBytes { throw FeedError.tooLarge(location, limit: maxBytes) }
                try out.write(contentsOf: Data(buffer.readableBytesView))
            }
        } catch let error as FeedError {
            try? FileManager.default.removeItem(at: url)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw FeedError.download(location, reason: NetworkErrorText.describe(error).text, underlying: error)
        }
        return FeedInput(location: location, temporaryFile: url)
    }
}
