import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoConflation
import TrafficGeoModel
import TrafficGeoStore

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "How reports are merged into events: the settings, and merging the stored reports anew.",
        discussion: """
            Every incident a feed gives is a report. Reports that describe one real-world event (the \
            same road and carriageway, close along the road for how precisely each is placed, \
            overlapping in time, of compatible kinds, from different feeds) are one event: what \
            near, within, bbox, export, serve, the map, changes and watch answer with (--reports \
            answers with the reports). Ingest and geocoding merge as reports arrive, by the settings \
            the database keeps; docs/conflation.md says what each is for.

            Without options: the settings, and how many reports make how many events.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("set"), help: ArgumentHelp("Change a setting, the value with its unit (feed-reach=800m, time-slack=45m, merging=off); repeat for several.", valueName: "name=value"))
    var assignments: [String] = []

    @Flag(help: "Go back to the default settings.")
    var reset = false

    @Flag(help: "Merge every stored report into events anew by the settings (after changing them, or for a database written before events).")
    var rebuild = false

    @Option(parsing: .upToNextOption, help: ArgumentHelp("Say whether two reports are one event by the rule, and why: each as SOURCE#ID (a --reports answer's source and id) or a store id.", valueName: "report report"))
    var explain: [String] = []

    func validate() throws {
        if !explain.isEmpty, explain.count != 2 { throw ValidationError("--explain takes two reports (SOURCE#ID or a store id).") }
        var settings = ConflationSettings()
        for assignment in assignments {
            do { try settings.set(assignment) } catch { throw ValidationError("--set \(error)") }
        }
    }

    /// A report by its store id, or by "SOURCE#ID" (the last # splits: a source may hold one).
    static func report(named name: String, in store: any StoreReader) async throws -> StoredIncident? {
        if let id = Int64(name) { return try await store.incident(id: id) }
        guard let hash = name.lastIndex(of: "#") else { return nil }
        var filter = IncidentFilter(source: String(name[..<hash]))
        filter.reports = true
        let id = String(name[name.index(after: hash)...])
        return try await StoreThreads.run { [filter] in
            var match: StoredIncident?
            try store.all(filter: filter, locatedOnly: false) { if $0.incident.id == id { match = $0.stored } }
            return match
        }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let changing = reset || !assignments.isEmpty || rebuild
            let store = try await global.openStore(readOnly: !changing)
            var settings = reset ? ConflationSettings() : try await store.conflationSettings()
            if explain.count == 2 {
                var found: [StoredIncident] = []
                for name in explain {
                    guard let report = try await Self.report(named: name, in: store) else {
                        Terminal.printError("trafficgeo: no report \(name) (give SOURCE#ID, as a --reports answer names it, or a store id)")
                        throw TrafficGeoExit.notFound
                    }
                    found.append(report)
                }
                print(SameEventRule(settings: settings).explain(found[0], found[1]))
                return
            }
            if reset || !assignments.isEmpty {
                for assignment in assignments { try settings.set(assignment) }
                try await store.setConflationSettings(settings)
            }
            if rebuild {
                let changes = try await store.rebuildEvents()
                Terminal.printError("trafficgeo: merged every report anew by these settings: \(changes.joined) joined an event of others (counts below)")
            }
            for setting in ConflationSettings.settings {
                print("\(setting.name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(settings.text(of: setting).padding(toLength: 10, withPad: " ", startingAt: 0)) \(setting.help)")
            }
            let s = try await store.statistics()
            print("\n\(s.reports) reports make \(s.total) events; \(s.mergedEvents) events have more than one report.")
        }
    }
}
