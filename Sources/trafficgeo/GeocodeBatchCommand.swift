import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoOutput
import TrafficGeoSupport

struct GeocodeBatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Geocode a CSV, TSV or JSON Lines file: every input column kept, the position columns added.",
        discussion: """
            Output columns added: latitude, longitude, precision, confidence, provider, status \
            (found, not-found, failed, empty, pending), error. Each distinct query is sent once; answers \
            are cached in the database (--db), so an interrupted run continues where it stopped when run \
            again, without asking answered queries again. Ctrl-C gives the queries in flight 2 s, \
            then writes a complete output (unanswered rows: status pending, asked next run); a second \
            Ctrl-C quits at once. A geocoder of the chain that refuses connections is left out after \
            3 tries, said once on stderr.

            Exit status: 0 every row answered (found, not found or empty), 3 some rows failed or are \
            pending (run again to complete), 64 bad arguments, 65 unreadable input.

              trafficgeo geocode batch roads.csv --column title -o roads-geocoded.csv
              trafficgeo geocode batch addresses.tsv --template "{street} {number}, {city}" --geocoder nominatim=http://127.0.0.1:8088
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var geocoding: GeocoderOptions

    @Argument(help: ArgumentHelp("The input file (default or -: stdin).", valueName: "input")) var input: String?
    @Option(name: .shortAndLong, help: ArgumentHelp("Write here (atomically) instead of stdout.", valueName: "file")) var output: String?
    @Option(help: ArgumentHelp("The column (or JSON key) holding the query (default: the first column).", valueName: "name")) var column: String?
    @Option(help: ArgumentHelp("Build the query from columns, e.g. \"{road} {junction}, {city}\".", valueName: "template")) var template: String?
    @Option(help: ArgumentHelp("With traffic titles: the column holding the message text.", valueName: "name")) var textColumn: String?
    @Option(help: "Input format (default: from the file name, else the content).") var inputFormat: BatchTable.Format?
    @Option(help: "auto: traffic titles through the junction resolver, the rest as plain queries; query; title.") var mode: BatchMode = .auto
    @Option(help: ArgumentHelp("Only results in these countries (ISO codes, comma-separated).", valueName: "codes")) var country: String?
    @Flag(help: "Read and de-duplicate, report what would be sent, send nothing.") var dryRun = false

    func validate() throws {
        if column != nil && template != nil { throw ValidationError("--column and --template exclude each other.") }
        if let template, !template.contains("{") { throw ValidationError("--template needs {column} placeholders.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            // Standard input may block for as long as its writer takes: on a thread for blocking work.
            let (data, name) = try await BlockingThreads.run { try readInput() }
            let format = inputFormat ?? BatchTable.Format.detect(path: input, head: data.prefix(4096))
            let table: BatchTable
            do {
                table = try BatchTable(data: data, format: format)
            } catch {
                Terminal.printError("trafficgeo: error: \(name): \(error)")
                throw TrafficGeoExit.dataError
            }
            for needed in [column, textColumn].compactMap({ $0 }) where format != .jsonl && !table.columns.contains(needed) {
                throw ValidationError("\(name) has no column '\(needed)'; its columns: \(table.columns.joined(separator: ", ")).")
            }
            let queries = (0..<table.rows.count).map { table.query(row: $0, column: column, template: template) }
            let texts: [String?]? = textColumn.map { c in (0..<table.rows.count).map { table.value(c, row: $0) } }
            let store = try await global.openStore()
            var batch = BatchGeocoder(service: try geocoding.makeService(cache: store))
            batch.mode = mode
            batch.concurrency = geocoding.concurrency ?? 8
            batch.countryCodes = country.map { $0.lowercased().split(separator: ",").map(String.init) } ?? []

            if dryRun {
                let plan = batch.plan(queries: queries, texts: texts)
                Terminal.printError("trafficgeo: dry run: \(table.rows.count) rows, \(plan.unique) distinct queries, \(plan.empty) empty; "
                                    + "nothing sent. Geocoder chain: \((try? geocoding.configuration().entries.map { "\($0)" }.joined(separator: ", ")) ?? "?")")
                return
            }

            let stop = StopRequest.onSignals(saying: "the rows not answered yet are asked next run")
            let sink = try output.map { try TextSink(path: $0) } ?? TextSink()
            if let header = table.outputHeader() { try sink.write(header) }
            let progress = Self.progressReporter(quiet: global.quiet)
            let summary: BatchSummary
            do {
                summary = try await batch.run(queries: queries, texts: texts, until: stop, progress: progress) { row, result in
                    try sink.write(table.outputLine(row: row, result: result.fields))
                }
                try sink.commit()
            } catch {
                sink.abandon()
                throw error
            }
            if !global.quiet {
                if Terminal.stderrIsTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
                let seconds = summary.elapsed.inSeconds
                Terminal.printError("trafficgeo: \(summary.rows) rows, \(summary.unique) distinct queries: \(summary.found) found, "
                                    + "\(summary.notFound) not found, \(summary.failed) failed, \(summary.empty) empty, \(summary.pending) pending; "
                                    + "\(summary.requests) sent, \(summary.fromCache) from cache; " + String(format: "%.1f s", seconds))
                if stop.isRequested { Terminal.printError("trafficgeo: interrupted: run the same command again to complete the pending rows") }
            }
            if !summary.isComplete { throw TrafficGeoExit.partial }
        }
    }

    private func readInput() throws -> (Data, String) {
        guard let input, input != "-" else {
            return (FileHandle.standardInput.readDataToEndOfFile(), "stdin")
        }
        guard FileManager.default.fileExists(atPath: input) else { throw FeedError.notFound(input) }
        guard let data = FileManager.default.contents(atPath: input) else { throw FeedError.unreadable(input, reason: "permission denied?") }
        return (data, input)
    }

    /// Terminal: a line with count, rate, ETA and failures; otherwise a log line every 10 seconds.
    static func progressReporter(quiet: Bool) -> (@Sendable (BatchProgress) -> Void)? {
        if quiet { return nil }
        let lastLog = LockedValue(ContinuousClock.now)
        let terminal = Terminal.stderrIsTerminal
        return { p in
            let seconds = max(0.001, p.elapsed.inSeconds)
            let rate = Double(p.done) / seconds
            let eta = rate > 0 ? Double(p.total - p.done) / rate : 0
            let line = String(format: "… %d/%d rows, %.1f/s, ETA %@, %d failed", p.done, p.total, rate, Self.duration(eta), p.failed)
            if terminal {
                FileHandle.standardError.write(Data("\r\(line)\u{1B}[K".utf8))
            } else if lastLog.update({ ContinuousClock.now - $0 >= .seconds(10) ? ContinuousClock.now : nil }) {
                Terminal.printError("trafficgeo: \(line)")
            }
        }
    }

    static func duration(_ s: Double) -> String {
        s >= 3600 ? String(format: "%dh%02dm", Int(s) / 3600, Int(s) % 3600 / 60)
            : s >= 60 ? String(format: "%dm%02ds", Int(s) / 60, Int(s) % 60) : String(format: "%ds", Int(s))
    }
}

extension BatchTable.Format: ExpressibleByArgument {}
extension BatchMode: ExpressibleByArgument {}

/// A value behind a lock, for progress callbacks that run on any thread.
final class LockedValue<T: Sendable>: Sendable {
    private let value: NIOLockedValueBox<T>
    init(_ value: T) { self.value = NIOLockedValueBox(value) }

    /// Replaces the value with what `change` returns, if anything; says whether it did.
    func update(_ change: (T) -> T?) -> Bool {
        value.withLockedValue { value in
            guard let new = change(value) else { return false }
            value = new
            return true
        }
    }
}
