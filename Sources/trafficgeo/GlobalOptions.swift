import ArgumentParser
import Foundation
import TrafficGeoSupport
import Logging
import TrafficGeo
import TrafficGeoStore

/// Options every command shares: the database and how chatty to be.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The incident database.", valueName: "path"))
    var db: String?

    @Flag(name: [.short, .long], help: "Print what is being done (debug messages on stderr).")
    var verbose = false

    @Flag(name: [.short, .long], help: "Print only errors on stderr.")
    var quiet = false

    @Option(name: .customLong("log-format"), help: ArgumentHelp("Messages on stderr as text lines (for people) or json (one object a line: time, level, message, fields; for journald, Loki, Elasticsearch).", valueName: "text|json"))
    var logFormat: LogFormat = .text

    func validate() throws {
        if verbose && quiet { throw ValidationError("--verbose and --quiet exclude each other.") }
    }

    var databasePath: String { db ?? StoreOpening.defaultLocation() }

    /// Sets up swift-log for stderr at the level the flags ask for, in the format asked for;
    /// call once per run.
    func bootstrapLogging() {
        Terminal.logFormat = logFormat
        Terminal.quiet = quiet
        let level: Logger.Level = verbose ? .debug : (quiet ? .error : .info)
        LoggingSystem.bootstrap { label in
            var handler = StderrLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }

    func openStore(readOnly: Bool = false) async throws -> any IncidentStore {
        try await StoreOpening.open(databasePath, readOnly: readOnly)
    }
}

/// Plain "trafficgeo: message" lines on stderr (swift-log's stream handler adds timestamps and
/// labels a user of a command-line tool does not need, except with --verbose).
struct StderrLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if Terminal.logFormat == .json {
            var fields = metadata
            if let extra = event.metadata { fields.merge(extra) { $1 } }
            Terminal.writeJSON(level: event.level, message: "\(event.message)", label: label, fields: Terminal.jsonFields(fields))
            return
        }
        let prefix: String
        switch event.level {
        case .warning: prefix = "warning: "
        case .error, .critical: prefix = "error: "
        case .debug, .trace: prefix = "debug: "
        default: prefix = ""
        }
        // A library's log line names the setting that helps; the command line names its option.
        let setting = (event.metadata?[Setting.logKey] ?? metadata[Setting.logKey]).flatMap { Setting(rawValue: "\($0)") }
        Terminal.printError("trafficgeo: \(prefix)\(TrafficGeoExit.with(setting, "\(event.message)"))")
    }
}

/// How messages are written on stderr (`--log-format`).
enum LogFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, json
}

enum Terminal {
    /// Set once, by `GlobalOptions.bootstrapLogging`, before anything is printed.
    nonisolated(unsafe) static var logFormat = LogFormat.text
    /// `--quiet`: only errors on stderr. Set with `logFormat`.
    nonisolated(unsafe) static var quiet = false

    /// A message on stderr: as it is in text, or as a JSON object whose level is read from the
    /// message's "trafficgeo: error: " / "warning: " prefix, with `fields` (JSON only).
    static func printError(_ line: String, fields: [String: Any] = [:]) {
        let (level, message) = level(of: line)
        guard logFormat == .json else {
            FileHandle.standardError.write(Data((journalPrefix(level) + line + "\n").utf8))
            return
        }
        writeJSON(level: level, message: String(message), label: "trafficgeo", fields: fields)
    }

    /// The level a "trafficgeo: warning: …" line has, and its message without the prefixes.
    private static func level(of line: String) -> (Logger.Level, Substring) {
        var message = Substring(line.trimmingCharacters(in: .whitespacesAndNewlines))
        if message.hasPrefix("trafficgeo: ") { message = message.dropFirst("trafficgeo: ".count) }
        for (prefix, level) in [("error: ", Logger.Level.error), ("warning: ", .warning), ("debug: ", .debug)] where message.hasPrefix(prefix) {
            return (level, message.dropFirst(prefix.count))
        }
        return (.info, message)
    }

    /// One JSON object on one line: time (UTC, milliseconds), level, message, the logger's
    /// label, and `fields` (numbers as numbers).
    static func writeJSON(level: Logger.Level, message: String, label: String, fields: [String: Any]) {
        var object: [String: Any] = ["time": jsonTime(Date()), "level": level.rawValue, "message": message, "logger": label]
        if !fields.isEmpty { object["fields"] = fields }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        FileHandle.standardError.write(Data(journalPrefix(level).utf8) + data + Data("\n".utf8))
    }

    /// swift-log metadata as JSON values: numbers stay numbers (serve's status and ms).
    static func jsonFields(_ metadata: Logger.Metadata) -> [String: Any] {
        metadata.mapValues { value -> Any in
            switch value {
            case let .string(text): return text
            case let .stringConvertible(x as Int): return x
            case let .stringConvertible(x as Double): return x
            case let .stringConvertible(x as Bool): return x
            default: return "\(value)"
            }
        }
    }

    /// Under systemd, stderr is the journal: a "<4>" before a line gives it its priority
    /// (journald's SyslogLevelPrefix), so `journalctl -p warning` finds the warnings. Only when
    /// $JOURNAL_STREAM names this very stderr (systemd's own test for it).
    private static func journalPrefix(_ level: Logger.Level) -> String {
        guard stderrIsJournal else { return "" }
        switch level {
        case .critical: return "<2>"
        case .error: return "<3>"
        case .warning: return "<4>"
        case .notice: return "<5>"
        case .info: return "<6>"
        case .debug, .trace: return "<7>"
        }
    }

    private static let stderrIsJournal: Bool = {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return stream == "\(status.st_dev):\(status.st_ino)"
    }()

    private static func jsonTime(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    /// The width of the terminal stdout is, nil when it is none ($COLUMNS wins, as for other tools).
    static var columns: Int? {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let n = Int(text), n > 0 { return n }
        guard stdoutIsTerminal else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
    /// False with --log-format json: no progress line is rewritten in place among JSON lines.
    static var stderrIsTerminal: Bool { logFormat == .text && isatty(STDERR_FILENO) != 0 }

    /// Colour only on a terminal and when NO_COLOR (no-color.org) is unset or empty.
    static var useColor: Bool {
        stdoutIsTerminal && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
    }
}

extension StopRequest {
    /// The command line's stop: says on stderr what stopping keeps, and that a second Ctrl-C quits.
    static func onSignals(saying message: String) -> StopRequest {
        onSignals { second in
            if second { Terminal.printError("trafficgeo: stopped") } else if !Terminal.quiet {
                // A new line after the terminal's ^C; none in a log file, where the stop was a
                // service manager's SIGTERM more often than a Ctrl-C.
                let atTerminal = isatty(STDERR_FILENO) != 0 && Terminal.logFormat == .text
                let hint = atTerminal ? "Ctrl-C again to quit now" : "a second SIGTERM or SIGINT quits now"
                Terminal.printError("\(atTerminal ? "\n" : "")trafficgeo: stopping; \(message) (\(hint))")
            }
        }
    }
}
