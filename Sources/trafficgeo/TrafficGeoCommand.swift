import ArgumentParser
import Foundation
import TrafficGeo

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
              trafficgeo within --lat 50.94 --lon 6.96 --radius 25km --format geojson > near-cologne.geojson
              trafficgeo export --active-at now -o incidents.geojson
            """,
        version: TrafficGeoVersion.string,
        subcommands: [
            IngestCommand.self, NearCommand.self, WithinCommand.self, BoundingBoxCommand.self, ExportCommand.self,
            GeocodeCommand.self, ReverseCommand.self, JunctionsCommand.self, StatsCommand.self, PruneCommand.self, ParseCommand.self,
        ]
    )
}
