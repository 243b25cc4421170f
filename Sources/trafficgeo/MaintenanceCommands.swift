import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoSupport

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "What the database holds.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Also check the database file and that the R*Tree matches the incidents.")
    var check = false

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Option(help: "text for people, json for scripts.")
    var format: Format = .text

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore(readOnly: true)
            let s = try await store.statistics()
            if format == .json {
                let problems = check ? try await store.checkIntegrity() : nil
                print(try s.jsonText(check: problems))
                if let problems, !problems.isEmpty { throw TrafficGeoExit.failure }
                return
            }
            func date(_ d: Date?) -> String { d.map(TimestampParser.format) ?? "-" }
            print("database:        \(s.path) (\(ByteCountFormatter.string(fromByteCount: s.fileBytes, countStyle: .file)))")
            print("index CRS:       \(s.indexCRS) (\(s.indexKind))")
            print("incidents:       \(s.total) (\(s.located) located, \(s.total - s.located) without position)")
            print("active now:      \(s.active), upcoming: \(s.upcoming), expired: \(s.expired), ended: \(s.ended), unconfirmed: \(s.unconfirmed)")
            if s.hasBlockIndex { print("spatial index:   \(s.indexBlocks) blocks, \(s.indexSingles) single incidents") }
            print("updated:         \(date(s.oldestUpdate)) … \(date(s.newestUpdate))")
            print("geocode cache:   \(s.geocodeCacheEntries) answers")
            print("junctions:       \(s.knownJunctions) known on \(s.junctionRoads) roads (trafficgeo junctions list)")
            print("change feed:     " + (s.changeFeed.latest == 0 ? "empty" : "seq \(s.changeFeed.first) … \(s.changeFeed.latest) kept (trafficgeo changes)"))
            for (title, counts) in [("sources", s.bySource), ("categories", s.byCategory), ("roads (top 10)", s.byRoad), ("positions from", s.byPositionSource)] where !counts.isEmpty {
                print("\(title):")
                for (key, n) in counts { print("  \(String(n).padding(toLength: 8, withPad: " ", startingAt: 0)) \(key)") }
            }
            if !s.feedHealth.isEmpty {
                print("feed health:")
                for h in s.feedHealth {
                    var line = "  \(h.source): last success \(date(h.lastSuccess))"
                    if let n = h.lastEntries { line += " (\(n) entries)" }
                    // A snapshot vouches for what it lists (docs/feeds.md "When a report is in effect").
                    if let snapshot = h.lastSnapshot { line += ", last snapshot \(date(snapshot))" }
                    if h.failureStreak > 0 { line += ", \(h.failureStreak) failed in a row" }
                    if h.emptyStreak > 0 { line += ", \(h.emptyStreak) empty in a row" }
                    if let error = h.lastError { line += "\n    last error \(date(h.lastErrorAt)): \(error.count > 300 ? String(error.prefix(300)) + " …" : error)" }
                    print(line)
                }
            }
            if check {
                let problems = try await store.checkIntegrity()
                if problems.isEmpty {
                    print("check:           ok (integrity_check, rtreecheck, every located incident indexed once)")
                } else {
                    problems.forEach { Terminal.printError("trafficgeo: error: \($0)") }
                    throw TrafficGeoExit.failure
                }
            }
        }
    }
}

struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "prune", abstract: "Delete incidents that are over.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Delete incidents whose expiry time has passed.")
    var expired = false

    @Flag(help: "Delete incidents that ended (a snapshot of their source stopped listing them).")
    var ended = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Count as over what expired or ended before TIME (default now; ISO 8601, or -7d: ended more than a week ago).", valueName: "time"))
    var before: String?

    func validate() throws {
        guard expired || ended else { throw ValidationError("Say what to prune: --expired, --ended, or both.") }
        if let before, TimeExpression.parse(before) == nil { throw ValidationError("--before '\(before)' is not a time.") }
    }

    func run() async throws {
        global.bootstrapLogging()
        try await TrafficGeoExit.run {
            let store = try await global.openStore()
            let date = before.flatMap { TimeExpression.parse($0) } ?? Date()
            if expired {
                let count = try await store.pruneExpired(before: date)
                if !global.quiet { Terminal.printError("trafficgeo: pruned \(count) expired incidents") }
            }
            if ended {
                let count = try await store.pruneEnded(before: date)
                if !global.quiet { Terminal.printError("trafficgeo: pruned \(count) ended incidents") }
            }
        }
    }
}
