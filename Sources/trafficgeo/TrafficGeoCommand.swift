import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoSupport

@main
struct TrafficGeoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trafficgeo",
        abstract: "Locate and query road-traffic incidents from Atom, RSS, Autobahn API, GeoJSON and CSV feeds.",
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

            Messages go to stderr, data to stdout. Exit status: 0 done, 2 nothing found, 3 partly \
            done, 64 usage, 65 bad input data, 66 no input file, 69 a server unreachable, \
            73 output not writable, 1 other errors (docs/errors.md).
            """,
        version: TrafficGeoVersion.string,
        subcommands: [
            IngestCommand.self, NearCommand.self, WithinCommand.self, BoundingBoxCommand.self, ExportCommand.self,
            ChangesCommand.self, WatchCommand.self, ServeCommand.self, GeocodeCommand.self, ReverseCommand.self, JunctionsCommand.self, StatsCommand.self,
            PruneCommand.self, CopyCommand.self, ParseCommand.self,
        ]
    )
}
