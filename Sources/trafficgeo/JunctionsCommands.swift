import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoGeocoding
import TrafficGeoOutput
import TrafficGeoRoadTitles
import TrafficGeoStore

struct JunctionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "junctions",
        abstract: "What the database knows of where junctions are.",
        discussion: """
            Every ingested message that carries a position and names its junctions ("zwischen 0.2 km \
            hinter AS Krombach und 0.5 km vor AS Wenden") teaches where those junctions are; geocoding \
            asks this knowledge before any geocoder. See docs/geocoding.md.

            Examples:
              trafficgeo junctions list --road A4
              trafficgeo junctions export -o junctions.geojson
              osmium tags-filter germany.osm.pbf n/highway=motorway_junction -o j.osm.pbf
              osmium export j.osm.pbf -o j.geojson
              trafficgeo junctions import j.geojson
            """,
        subcommands: [JunctionsListCommand.self, JunctionsExportCommand.self, JunctionsImportCommand.self, JunctionsLearnCommand.self],
        defaultSubcommand: JunctionsListCommand.self
    )
}

/// `--road` of the commands that read junctions: one road, or all.
struct JunctionSelection: ParsableArguments {
    @Option(help: ArgumentHelp("Only the junctions of this road (A4 = a4 = A 4 = BAB 4).", valueName: "road"))
    var road: String?

    func validate() throws {
        if let road, RoadReference.normalize(road) == nil { throw ValidationError("--road '\(road)' is not a road reference such as A4 or B54.") }
    }

    /// The road's junctions and those known without a road; every junction without --road.
    func junctions(in store: any StoreReader) async throws -> [KnownJunction] {
        try await store.knownJunctions(roads: road.flatMap(RoadReference.normalize).map { [$0] })
    }
}

struct JunctionsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the known junctions (a table).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: JunctionSelection

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let junctions = try await selection.junctions(in: try await global.openStore(readOnly: true))
                .filter { selection.road == nil || !$0.road.isEmpty }
            let rows = [["ROAD", "KIND", "LAT", "LON", "SUPPORT", "SPREAD", "FROM", "NAME"]] + junctions.map { j in
                [j.road.isEmpty ? "-" : j.road, j.kind.label, String(format: "%.5f", j.coordinate.latitude), String(format: "%.5f", j.coordinate.longitude),
                 String(j.support), Annotation.formatDistance(j.spreadMeters), j.learnedFrom, j.name]
            }
            let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
            for row in rows {
                print(row.enumerated().map { c, v in c == row.count - 1 ? v : v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
                    .joined(separator: "  "))
            }
            if !global.quiet { Terminal.printError("trafficgeo: \(junctions.count) junctions") }
        }
    }
}

struct JunctionsExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Write the known junctions as GeoJSON or CSV.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: JunctionSelection

    @Option(name: .shortAndLong, help: "geojson or csv (default: from the -o file's extension, else geojson).")
    var format: JunctionExchange.Format?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (atomically) instead of stdout.", valueName: "file"))
    var output: String?

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let junctions = try await selection.junctions(in: try await global.openStore(readOnly: true))
            let chosen = format ?? (output?.lowercased().hasSuffix(".csv") == true ? .csv : .geojson)
            let text = chosen == .csv ? JunctionExport.csv(junctions) : JunctionExport.geoJSON(junctions)
            if let output {
                do {
                    try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    Terminal.printError("trafficgeo: error: cannot write \(output): \(error.localizedDescription)")
                    throw TrafficGeoExit.cannotCreate
                }
                if !global.quiet { Terminal.printError("trafficgeo: wrote \(junctions.count) junctions to \(output)") }
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }
}

struct JunctionsImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add junction positions from GeoJSON or CSV (an OSM motorway_junction export too).",
        discussion: """
            GeoJSON: Point features with a "name" (and "road", "kind" when known) — trafficgeo's own \
            export, or OpenStreetMap's highway=motorway_junction nodes as `osmium export` writes them \
            (kept with their ODbL attribution; OSM nodes do not name their road, so they are candidates \
            for every road). CSV/TSV: columns name, latitude (lat), longitude (lon), optionally road and kind. \
            Importing the same file again replaces its rows.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The file to read.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The road of rows that name none.", valueName: "road"))
    var road: String?

    @Option(help: "geojson or csv (default: from the extension or the content).")
    var format: JunctionExchange.Format?

    func validate() throws {
        if let road, RoadReference.normalize(road) == nil { throw ValidationError("--road '\(road)' is not a road reference such as A4 or B54.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            guard let data = FileManager.default.contents(atPath: file) else {
                Terminal.printError("trafficgeo: error: cannot read \(file) (does it exist and is it readable?)")
                throw TrafficGeoExit.noInput
            }
            let name = URL(fileURLWithPath: file).lastPathComponent
            let observations: [JunctionObservation]
            do {
                observations = try JunctionExchange.read(data, format: format ?? JunctionExchange.detect(path: file, data: data),
                                                         road: road.flatMap(RoadReference.normalize), origin: "import:\(name)")
            } catch let error as JunctionExchange.ReadError {
                Terminal.printError("trafficgeo: error: \(file): \(error.description)")
                throw TrafficGeoExit.dataError
            }
            let store = try await global.openStore()
            try await store.recordJunctionObservations(observations, observer: "import:\(name)", replacing: true)
            if !global.quiet {
                let osm = observations.contains { $0.origin == "import:osm" } ? " (\(JunctionExchange.osmAttribution))" : ""
                Terminal.printError("trafficgeo: imported \(observations.count) junction positions from \(file)\(osm)")
            }
        }
    }
}

struct JunctionsLearnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "Learn junction positions again from every positioned incident in the database.",
        discussion: "Ingest learns as it goes; this rebuilds what a store written by an older version, or an interrupted run, lacks."
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore()
            let learning = try await store.relearnJunctions()
            for conflict in learning.conflicts.prefix(20) { Terminal.printError("trafficgeo: warning: \(conflict)") }
            if !global.quiet {
                Terminal.printError("trafficgeo: learned \(learning.observations) junction positions from the stored incidents; \(learning.conflicts.count) positions contradict their junctions")
            }
        }
    }
}

extension JunctionExchange.Format: ExpressibleByArgument {}
