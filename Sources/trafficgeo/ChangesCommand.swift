import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoOutput
import TrafficGeoStore
import TrafficGeoSupport

struct ChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Print the change feed: what ingests made new, updated or ended, with sequence numbers.",
        discussion: """
            Every ingest records each new, updated and ended incident (and prune each removed one) \
            with a sequence number that only rises. A script follows the store by remembering the \
            last number it saw: `trafficgeo changes --since 1234` prints what came after. Each \
            event shows the incident as it is now (null once deleted); filters apply to that state. \
            The last sequence number printed goes to stderr. Events are kept for `ingest \
            --keep-changes` (7 days by default).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Events after this sequence number, or recorded at or after this time ('-1h', ISO 8601). Default: all kept.", valueName: "seq|time"))
    var since: String?

    @OptionGroup(title: "Filters (on the incident as it is now)") var filters: ContentFilterOptions

    enum Format: String, ExpressibleByArgument, CaseIterable { case ndjson, geojsonseq }

    @Option(name: .shortAndLong, help: "ndjson (one JSON object a line) or geojsonseq (RFC 8142 GeoJSON text sequences).")
    var format: Format = .ndjson

    @Option(help: "Print at most this many events.")
    var limit: Int?

    func validate() throws {
        if let since, let sequence = Int64(since), sequence < 0 {
            throw ValidationError("--since \(since): sequence numbers start at 1 (0 for everything kept).")
        }
        if let since, Int64(since) == nil, TimeExpression.parse(since) == nil {
            throw ValidationError("--since '\(since)' is neither a sequence number nor a time ('-1h', 'today', ISO 8601).")
        }
        if let limit, limit <= 0 { throw ValidationError("--limit must be positive.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore(readOnly: true)
            var after: Int64 = 0
            if let since {
                if let sequence = Int64(since) {
                    after = sequence
                } else if let time = TimeExpression.parse(since) {
                    if let first = try await store.firstChange(atOrAfter: time) {
                        after = first - 1
                    } else {
                        after = try await store.changeFeedBounds().latest
                    }
                }
            }
            let bounds = try await store.changeFeedBounds()
            if after > bounds.latest {
                // A number from the future (another database, or one that was recreated): what
                // comes next is numbered from the feed's end, so that is where to follow from.
                // Echoing the number back would skip every event up to it forever.
                if !global.quiet {
                    Terminal.printError("trafficgeo: warning: --since \(after) is past the newest event (\(bounds.latest)); is this the database you followed? Continuing from \(bounds.latest)")
                }
                after = bounds.latest
            }
            if after + 1 < bounds.first && !global.quiet {
                Terminal.printError("trafficgeo: warning: events \(after + 1) … \(bounds.first - 1) are no longer kept; starting at \(bounds.first)")
            }
            let filter = try filters.filter()
            let sink = TextSink()
            var printed = 0
            var last = after
            reading: while true {
                let changes = try await store.changes(after: last, limit: 10_000)
                guard !changes.isEmpty else { break }
                let current = try await store.incidents(ids: changes.map(\.storeID))
                for change in changes {
                    last = change.sequence
                    let stored = current[change.storeID]
                    if !filter.isEmpty {
                        guard let stored, filter.matches(stored) else { continue }
                    }
                    try sink.write(format == .ndjson ? ChangeText.ndjson(change, stored) + "\n" : ChangeText.geojsonSequence(change, stored))
                    printed += 1
                    if let limit, printed >= limit { break reading }
                }
            }
            try sink.commit()
            if !global.quiet {
                Terminal.printError("trafficgeo: \(printed) events; up to seq \(last) (next: --since \(last))")
            }
        }
    }
}
