import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import Logging
import NIOCore
import TrafficGeoModel
import TrafficGeoHTTP
import TrafficGeoOutput
import TrafficGeoSupport

/// Where a watch's events go. A destination that fails is reported and the watch goes on: one
/// broken receiver must not stop the others or the watch.
public protocol WatchDelivery: Sendable {
    func deliver(_ event: WatchEvent) async
}

/// stdout: a readable line on a terminal, NDJSON otherwise.
public struct ConsoleDelivery: WatchDelivery {
    public enum Style: Sendable { case lines, ndjson }
    public var style: Style
    /// Called when stdout is gone (the reader of a pipe quit), with SIGPIPE ignored.
    public var onClosed: @Sendable () -> Void

    public init(style: Style, onClosed: @escaping @Sendable () -> Void = { exit(0) }) {
        self.style = style
        self.onClosed = onClosed
    }

    public func deliver(_ event: WatchEvent) async {
        let text = (style == .lines ? event.line : event.jsonText) + "\n"
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        } catch {
            onClosed()
        }
    }
}

/// Runs a shell command per event, the event's JSON on its stdin (`--exec`); the event's kind
/// and watch are also in `TRAFFICGEO_EVENT` and `TRAFFICGEO_WATCH`. The caller ignores SIGPIPE
/// (`trafficgeo watch` does): a command that exits without reading its input must not end the watch.
public struct ExecDelivery: WatchDelivery {
    public var command: String
    public var logger: Logger

    public init(command: String, logger: Logger = Logger(label: "trafficgeo.watch")) {
        self.command = command
        self.logger = logger
    }

    public func deliver(_ event: WatchEvent) async {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["TRAFFICGEO_EVENT"] = event.kind.rawValue
        environment["TRAFFICGEO_WATCH"] = event.watch
        environment["TRAFFICGEO_EVENT_KEY"] = event.key
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        let end = ProcessEnd()
        process.terminationHandler = { _ in end.happened() }
        do {
            try process.run()
            try input.fileHandleForWriting.write(contentsOf: Data((event.jsonText + "\n").utf8))
            try input.fileHandleForWriting.close()
            await end.awaited()
            if process.terminationStatus != 0 {
                logger.warning("the command '\(command)' exited with status \(process.terminationStatus) for a \(event.kind.rawValue) event")
            }
        } catch {
            logger.warning("the command '\(command)' could not be run: \(error)")
        }
    }
}

/// A process's end, told by its termination handler: the delivery's task awaits it and no
/// thread waits. Not cut short by cancellation: the status is read only once it has ended.
private final class ProcessEnd: Sendable {
    private let state = NIOLockedValueBox<(ended: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func happened() {
        let waiter = state.withLockedValue { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func awaited() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ended = state.withLockedValue { state in
                if !state.ended { state.waiter = waiter }
                return state.ended
            }
            if ended { waiter.resume() }
        }
    }
}

/// POSTs JSON to a URL, retrying with backoff on connection errors, timeouts, 429 and 5xx.
struct JSONPoster: Sendable {
    var attempts = 4
    var backoff = 0.5
    var timeout = 10.0
    var httpClient: HTTPClient = SharedHTTPClient.client
    var logger: Logger

    /// Whether the receiver took it (a 2xx).
    /// `key`: sent as `Idempotency-Key`, the same on every retry and every repeat after a restart.
    @discardableResult
    func post(_ body: String, to url: String, what: String, key: String? = nil) async -> Bool {
        if let problem = HTTPLocation.problem(url) {
            logger.warning("\(what) to \(Redaction.redact(url)) failed: \(problem)")
            return false
        }
        var attempt = 0
        while true {
            attempt += 1
            var problem: String
            var retry = true
            do {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "User-Agent", value: UserAgent.default)
                request.headers.add(name: "Content-Type", value: "application/json")
                if let key { request.headers.add(name: "Idempotency-Key", value: key) }
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await httpClient.execute(request, timeout: .milliseconds(Int64(timeout * 1000)))
                _ = try? await response.body.collect(upTo: 1 << 20)
                let status = Int(response.status.code)
                if (200..<300).contains(status) { return true }
                problem = "HTTP \(status)"
                retry = status == 429 || status >= 500
            } catch {
                problem = NetworkErrorText.describe(error).text
            }
            guard retry, attempt < attempts, !Task.isCancelled else {
                logger.warning("\(what) to \(Redaction.redact(url)) failed: \(problem)\(retry ? " (after \(attempt) tries)" : "")")
                return false
            }
            try? await Task.sleep(for: .milliseconds(Int(Backoff.delay(first: backoff, attempt: attempt) * 1000)))
        }
    }
}

/// POSTs each event's JSON to a URL (`--webhook`), retried.
public struct WebhookDelivery: WatchDelivery {
    public var url: String
    var poster: JSONPoster

    public init(url: String, logger: Logger = Logger(label: "trafficgeo.watch"), backoff: Double = 0.5) {
        self.url = url
        poster = JSONPoster(backoff: backoff, logger: logger)
    }

    public func deliver(_ event: WatchEvent) async {
        await poster.post(event.jsonText, to: url, what: "webhook", key: event.key)
    }
}

/// Publishes each event to an ntfy topic (`--ntfy https://ntfy.sh/mytopic`) in ntfy's JSON
/// publishing format: a POST to the server's root with topic, title, message, priority (from the
/// category), tags (shown as emoji) and click (the incident's weblink).
public struct NtfyDelivery: WatchDelivery {
    public let server: String
    public let topic: String
    var poster: JSONPoster

    /// Nil when the URL names no topic (`https://ntfy.sh/` alone).
    public init?(url: String, logger: Logger = Logger(label: "trafficgeo.watch"), backoff: Double = 0.5) {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        var path = components.path.split(separator: "/").map(String.init)
        guard let topic = path.popLast(), !topic.isEmpty else { return nil }
        components.path = path.isEmpty ? "" : "/" + path.joined(separator: "/")
        components.query = nil
        guard let server = components.string else { return nil }
        self.server = server
        self.topic = topic
        poster = JSONPoster(backoff: backoff, logger: logger)
    }

    public func deliver(_ event: WatchEvent) async {
        await poster.post(Self.message(event, topic: topic), to: server.hasSuffix("/") ? server : server + "/", what: "ntfy")
    }

    /// The ntfy JSON message for an event.
    static func message(_ event: WatchEvent, topic: String) -> String {
        let i = event.incident
        var o = JSONObjectText()
        o.add("topic", topic)
        let prefix = event.kind == .enter ? "" : event.kind == .change ? "Update: " : "Over: "
        o.add("title", prefix + i.title)
        var lines: [String] = []
        if let summary = i.summary { lines.append(summary) }
        var facts: [String] = []
        if let distance = event.distance { facts.append(Annotation.formatDistance(distance) + " away") }
        if let category = i.category { facts.append(category.rawValue) }
        if let reason = event.reason { facts.append(reason) }
        facts.append("watch \(event.watch)")
        lines.append(facts.joined(separator: " · "))
        o.add("message", lines.joined(separator: "\n"))
        o.add("priority", Double(priority(event)))
        o.add(raw: "tags", "[" + tags(event).map(JSONObjectText.string).joined(separator: ",") + "]")
        o.add("click", i.weblink)
        return o.closed()
    }

    /// ntfy's 1 (min) … 5 (max): danger high, traffic default, roadworks low, an end lower still.
    static func priority(_ event: WatchEvent) -> Int {
        if event.kind == .leave { return 2 }
        switch event.incident.category ?? .other {
        case .wrongWayDriver: return 5
        case .accident, .closure, .obstacle, .danger: return 4
        case .queue, .standstill, .slowTraffic, .weather, .detour, .event, .other: return 3
        case .roadworks, .restriction: return 2
        }
    }

    /// Tags ntfy shows as emoji, then the event kind and road.
    static func tags(_ event: WatchEvent) -> [String] {
        let emoji: String
        if event.kind == .leave {
            emoji = "white_check_mark"
        } else {
            switch event.incident.category ?? .other {
            case .wrongWayDriver, .accident: emoji = "rotating_light"
            case .closure: emoji = "no_entry"
            case .obstacle, .danger, .weather: emoji = "warning"
            case .roadworks: emoji = "construction"
            case .detour: emoji = "arrow_right_hook"
            case .restriction: emoji = "no_entry_sign"
            case .event: emoji = "tada"
            case .queue, .standstill, .slowTraffic, .other: emoji = "car"
            }
        }
        return [emoji, event.kind.rawValue] + (event.incident.road.map { [$0] } ?? [])
    }
}
