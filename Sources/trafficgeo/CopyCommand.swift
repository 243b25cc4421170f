import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoStore

/// `trafficgeo copy`: a whole store into a new one, an SQLite file to PostGIS or back.
struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a whole store into a new, empty one: an SQLite file to PostGIS, or back.",
        discussion: """
            Everything moves: incidents with their store ids and times, ended incidents, geocoding \
            status, feed health, the change feed and its numbering, the geocoder's answer cache and \
            the junction knowledge. The target must be empty (a new file, or a PostgreSQL database \
            without incidents); the copy is one transaction there, so a copy that fails leaves \
            nothing behind.

            Examples:
              trafficgeo copy --from incidents.sqlite --to postgresql://traffic@db.example/traffic
              trafficgeo copy --from postgresql://traffic@db.example/traffic --to backup.sqlite
            """)

    @Option(help: ArgumentHelp("The store to copy: an SQLite file, or postgresql://user@host:port/dbname.", valueName: "path|url"))
    var from: String

    @Option(help: ArgumentHelp("The new store: a file that does not exist yet, or an empty PostgreSQL database.", valueName: "path|url"))
    var to: String

    @Flag(name: [.short, .long], help: "Print only errors on stderr.")
    var quiet = false

    func validate() throws {
        if from == to { throw ValidationError("--from and --to name the same store.") }
    }

    func run() async throws {
        try await TrafficGeoExit.run {
            let start = ContinuousClock.now
            guard let source = try await StoreOpening.open(from, readOnly: true) as? any TransferableStore else {
                throw ValidationError("\(from) cannot be copied from.")
            }
            let targetIsNewFile = !StoreOpening.isServer(to) && !FileManager.default.fileExists(atPath: to)
            let summary: TransferSummary
            var targetLocation = to
            do {
                guard let target = try await StoreOpening.open(to) as? any TransferableStore else {
                    throw ValidationError("\(to) cannot be copied into.")
                }
                targetLocation = target.location
                // The copy blocks on both stores: on a store thread (StoreThreads), not the task's.
                summary = try await StoreThreads.run {
                    var incidents = 0
                    return try target.importRecords { emit in
                        try source.exportRecords { record in
                            try emit(record)
                            if case .incident = record {
                                incidents += 1
                                if !quiet, incidents % 100_000 == 0 { Terminal.printError("trafficgeo: \(incidents) incidents copied") }
                            }
                        }
                    }
                }
            } catch {
                // A new file that the copy could not fill goes again, so a second try starts clean.
                if targetIsNewFile { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: to + suffix) } }
                throw error
            }
            if !quiet {
                let seconds = (ContinuousClock.now - start).inSeconds
                Terminal.printError("""
                    trafficgeo: copied \(source.location) to \(targetLocation) in \(String(format: "%.1f", seconds)) s: \
                    \(summary.incidents) incidents, \(summary.sources) sources, \(summary.changes) change events, \
                    \(summary.geocodeAnswers) cached geocoder answers, \(summary.junctionObservations) junction observations, \(summary.junctions) junctions
                    """)
            }
        }
    }
}
