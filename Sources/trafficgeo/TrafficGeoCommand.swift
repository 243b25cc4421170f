import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoSupport

@main
struct TrafficGeoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trafficgeo",
        abstract: "Locate and query road-traffic incidents from Atom, RSS, Autobahn API, GeoJSON, CSV, DATEX II, WZDx and Open511 feeds.",
        discussion: """
            Incidents are kept in an SQLite database (--db, $TRAFFICGEO_DB, default \
            ~/.local/share/trafficgeo/incidents.sqlite) with an R*Tree spatial index.

            Examples:
              trafficgeo ingest data/sample/lmst.de_DE.xml
              trafficgeo near --lat 50.94 --lon 6.96 --limit 5
              trafficgeo near Köln --limit 5 --format table
              trafficgeo within --lat 51.5 --lon -0.12 --radius 600km -o from-london.geojson
              trafficgeo export --active-at now -o incidents.geojson
              trafficgeo serve --port 8080

            Messages go to stderr, data to stdout. Exit status: 0 done (an empty answer too), 2 a place not found, 3 partly \
            done, 64 usage, 65 bad input data, 66 no input file, 69 a server unreachable, \
            73 output not writable, 1 other errors (docs/errors.md).
            """,
        version: TrafficGeoVersion.string,
        subcommands: [
            IngestCommand.self, NearCommand.self, WithinCommand.self, BoundingBoxCommand.self, AlongCommand.self, ExportCommand.self,
            ChangesCommand.self, WatchCommand.self, ServeCommand.self, GeocodeCommand.self, ReverseCommand.self, JunctionsCommand.self, StatsCommand.self,
            EventsCommand.self, PruneCommand.self, CopyCommand.self, ParseCommand.self,
        ]
    )
}

extension TrafficGeoCommand {
    /// An unknown first word is named as an unknown command, with the nearest real one:
    /// the parser alone complained about the options after it (`neer --lat` said
    /// "Unknown option '--lat'").
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let word = arguments.first, !word.hasPrefix("-") {
            let known = configuration.subcommands.map { $0._commandName }
            if !known.contains(word) && word != "help" {
                let guess = CommandSuggestion.nearest(to: word, among: known).map { " Did you mean '\($0)'?" } ?? ""
                Terminal.printError("Error: '\(word)' is not a trafficgeo command.\(guess)\n"
                                    + "Commands: \(known.joined(separator: ", ")). See 'trafficgeo --help'.")
                Foundation.exit(64)
            }
        }
        await main(arguments)
    }
}

/// The command a mistyped word most likely meant.
enum CommandSuggestion {
    /// The known word that begins with the word, or within two edits of it; nil when none is that close.
    static func nearest(to word: String, among known: [String]) -> String? {
        let lower = word.lowercased()
        if lower.count >= 2, let prefixed = known.first(where: { $0.hasPrefix(lower) }) { return prefixed }
        guard let (best, distance) = known.map({ ($0, editDistance(lower, $0)) }).min(by: { $0.1 < $1.1 }),
              distance <= min(2, max(1, best.count / 3)) else { return nil }
        return best
    }

    /// Levenshtein distance (insertions, deletions, substitutions).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
