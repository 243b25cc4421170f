import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoFeeds
import TrafficGeoStore
import TrafficGeoHTTP

/// How live sources are read (`ingest`, `watch --source`): snapshots, the Autobahn API, and how
/// long the change feed keeps its events.
struct LiveSourceOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: "Each read of a feed is its source's whole current state: its incidents the feed no longer lists end (autobahn: always is). Default: on for a loop (--every, watch --source), off for one ingest.")
    var snapshot: Bool?

    @Option(name: .customLong("autobahn-url"), help: ArgumentHelp("Where the Autobahn API is (for autobahn: sources).", valueName: "url"))
    var autobahnURL = AutobahnAPI.defaultBaseURL

    @Option(name: .customLong("autobahn-timeout"), help: ArgumentHelp("Give up on one Autobahn API request after this long (retried twice).", valueName: "duration"))
    var autobahnTimeout = "20s"

    @Option(name: .customLong("keep-changes"), help: ArgumentHelp("Keep change-feed events this long (a watch stopped for longer starts over from the current state).", valueName: "duration"))
    var keepChanges = "7d"

    @Option(name: .customLong("max-backoff"), help: ArgumentHelp("With --every: the longest wait before trying a failing source again (the wait doubles with each failure, with jitter).", valueName: "duration"))
    var maxBackoff = "15m"

    @Option(name: .customLong("tmc-table"), help: ArgumentHelp("A TMC location table in the exchange format (a folder with POINTS.DAT, POFFSETS.DAT, …): DATEX II records located only by ALERT-C codes get positions from it.", valueName: "dir"))
    var tmcTable: String?

    func validate() throws {
        if let tmcTable {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: tmcTable, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--tmc-table '\(tmcTable)' is not a folder (a TMC location table in the exchange format: POINTS.DAT, POFFSETS.DAT, …).")
            }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: tmcTable)) ?? []
            guard files.contains(where: { $0.uppercased() == "POINTS.DAT" }) else {
                throw ValidationError("--tmc-table '\(tmcTable)' has no POINTS.DAT (the exchange format's point locations).")
            }
        }
        let url = autobahnURL.lowercased()
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), URL(string: autobahnURL) != nil else {
            throw ValidationError("--autobahn-url '\(autobahnURL)' is not an http(s) URL.")
        }
        if let problem = HTTPLocation.problem(autobahnURL) { throw ValidationError("--autobahn-url '\(autobahnURL)': \(problem).") }
        guard try DurationArgument.validated(autobahnTimeout, option: "--autobahn-timeout") > 0 else {
            throw ValidationError("--autobahn-timeout must be positive.")
        }
        _ = try DurationArgument.validated(keepChanges, option: "--keep-changes")
        guard try DurationArgument.validated(maxBackoff, option: "--max-backoff") > 0 else { throw ValidationError("--max-backoff must be positive.") }
    }

    /// `looping`: the sources are read again and again (a loop follows feeds, whose every read
    /// is their state now; one ingest may be a feed's page or an extract).
    func configure(_ ingestor: inout FeedIngestor, looping: Bool) throws {
        ingestor.snapshot = snapshot ?? looping
        if let tmcTable {
            do { ingestor.locationTable = try AlertCLocationTable(directory: tmcTable) } catch {
                throw ValidationError("--tmc-table: \(error)")
            }
        }
        var api = AutobahnAPI(baseURL: autobahnURL)
        api.timeout = DurationArgument.parse(autobahnTimeout) ?? api.timeout
        ingestor.autobahn = api
    }

    /// --keep-changes as a length of time.
    var keepChangesDuration: Duration { DurationArgument.duration(keepChanges, or: 7 * 86400) }

    /// --max-backoff as a length of time.
    var maxBackoffDuration: Duration { DurationArgument.duration(maxBackoff, or: 900) }

    /// Forgets change-feed events older than --keep-changes.
    func pruneChanges(_ store: any IncidentStore, now: Date = Date()) async throws {
        _ = try await store.pruneChanges(before: now.addingTimeInterval(-keepChangesDuration.inSeconds))
    }
}
