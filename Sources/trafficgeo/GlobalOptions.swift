import ArgumentParser
import Foundation
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

    func validate() throws {
        if verbose && quiet { throw ValidationError("--verbose and --quiet exclude each other.") }
    }

    var databasePath: String { db ?? StoreOpening.defaultLocation() }

    /// Sets up swift-log for stderr at the level the flags ask for; call once per run.
    func bootstrapLogging() {
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
        let prefix: String
        switch event.level {
        case .warning: prefix = "warning: "
        case .error, .critical: prefix = "error: "
        case .debug, .trace: prefix = "debug: "
        default: prefix = ""
        }
        Terminal.printError("trafficgeo: \(prefix)\(event.message)")
    }
}

enum Terminal {
    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
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
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// Colour only on a terminal and when NO_COLOR (no-color.org) is unset or empty.
    static var useColor: Bool {
        stdoutIsTerminal && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
    }
}

extension StopSignal {
    /// The command line's stop: says on stderr what stopping keeps, and that a second Ctrl-C quits.
    static func install(saying message: String) -> StopSignal {
        install { second in
            if second { Terminal.printError("trafficgeo: stopped") } else {
                Terminal.printError("\ntrafficgeo: stopping; \(message) (Ctrl-C again to quit now)")
            }
        }
    }
}
