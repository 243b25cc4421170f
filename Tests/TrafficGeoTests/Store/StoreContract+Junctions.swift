import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoPostGIS
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoTestSupport

/// The store contract's junction knowledge, error kinds and renamed sources: `StoreContract` (the
/// suites in StoreContractTests.swift run each on both stores).
extension StoreContract {
    // MARK: - Junction knowledge

    static func junctionKnowledgeIsLearnedAndReplaced(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        // Messages with segments that name their junctions teach where those are.
        var messages: [Incident] = []
        for k in 0..<3 {
            var i = incident("m\(k)", title: "A4 : Köln - Olpe", lat: 50.95, lon: 7.80 + Double(k) * 0.001)
            i.summary = "zwischen AS Wenden und AS Krombach Baustelle"
            i.positionSource = PositionSource(kind: .feed)
            i.segment = [Coordinate(latitude: 50.95, longitude: 7.80 + Double(k) * 0.001), Coordinate(latitude: 50.97, longitude: 7.95)]
            messages.append(i)
        }
        let summary = try ingest(store, messages)
        #expect(summary.junctionObservations > 0)
        let learned = try store.knownJunctions(roads: ["A4"])
        #expect(learned.contains { $0.name.contains("Wenden") })
        let relearned = try store.relearnJunctions()
        #expect(relearned.observations == summary.junctionObservations)
        #expect(try store.knownJunctions(roads: ["A4"]) == learned)
        // Imports: replacing removes the earlier import's rows.
        let observations = [JunctionObservation(road: "A45", name: "AS Olpe", kind: .exit, coordinate: Coordinate(latitude: 51.03, longitude: 7.85), origin: "import:x"),
                            JunctionObservation(road: "A45", name: "AS Olpe", kind: .exit, coordinate: Coordinate(latitude: 51.031, longitude: 7.851), origin: "import:x")]
        try store.recordJunctionObservations(observations, observer: "import:x", replacing: true)
        let olpe = try #require(try store.knownJunctions(roads: ["A45"]).first)
        #expect(olpe.support == 2)
        try store.recordJunctionObservations([], observer: "import:x", replacing: true)
        #expect(try store.knownJunctions(roads: ["A45"]).isEmpty)
        #expect(try store.statistics().knownJunctions == learned.count)
        #expect(try store.roadPositions(road: "A4").count == 3)
    }

    // MARK: - Source readings

    /// A source's `--field`/`--crs` are kept by name, replaced, and forgotten; another source's
    /// are its own.
    static func aSourceReadingIsKept(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        #expect(try store.sourceReading(for: "dgt") == nil)
        let reading = SourceReading(fields: [.title: "aviso", .road: "carretera"], crs: "EPSG:25830")
        try store.setSourceReading(reading, for: "dgt")
        #expect(try store.sourceReading(for: "dgt") == reading)
        #expect(try store.sourceReading(for: "dgt")?.roles == [.title: "aviso", .road: "carretera"])
        #expect(try store.sourceReading(for: "other") == nil)
        let replaced = SourceReading(fields: [.starts: "fecha"])
        try store.setSourceReading(replaced, for: "dgt")
        #expect(try store.sourceReading(for: "dgt") == replaced)
        try store.setSourceReading(nil, for: "dgt")
        #expect(try store.sourceReading(for: "dgt") == nil)
    }

    // MARK: - Errors

    /// A failure says what kind it is on both stores, with the database's own error under it:
    /// a caller tells a missing database from a busy one without reading the words.
    static func failuresSayTheirKind(_ backend: StoreBackend) throws {
        let missing: String
        switch backend {
        case .sqlite: missing = TestSupport.temporaryDirectory().appendingPathComponent("none.sqlite").path
        case .postgis: missing = try PostgresAdministration.url(try #require(PostgresTestServer.url), database: "tg_missing_\(UInt32.random(in: 0...UInt32.max))")
        }
        do {
            _ = try StoreOpening.open(missing, readOnly: true)
            Issue.record("a missing database opened")
        } catch let error as StoreError {
            #expect(error.code == .cannotOpen, "\(error)")
            #expect(error.kind == .missing, "\(error)")
            if backend == .postgis { #expect(error.underlying != nil, "the server's error is kept") }
        }
    }

    // MARK: - Sources an older version named

    /// Adopting a source an older version filed the feed under (renamed, or merged where the new
    /// name already holds copies) keeps one copy of each incident and counts its junction
    /// knowledge once (`SourceMergePlan`): before, both stores kept the old name's observations,
    /// so every junction the feed named counted twice.
    static func adoptingAFormerSourceCountsItsJunctionKnowledgeOnce(_ backend: StoreBackend) throws {
        let (store, _, cleanup) = try backend.makeStore()
        defer { cleanup() }
        func messages(_ source: String, summary: String = "zwischen AS Wenden und AS Krombach Baustelle") -> [Incident] {
            (0..<3).map { k in
                var i = incident("m\(k)", title: "A4 : Köln - Olpe", lat: 50.95, lon: 7.80 + Double(k) * 0.001, source: source)
                i.summary = summary
                i.positionSource = PositionSource(kind: .feed)
                i.segment = [Coordinate(latitude: 50.95, longitude: 7.80 + Double(k) * 0.001), Coordinate(latitude: 50.97, longitude: 7.95)]
                return i
            }
        }
        func support() throws -> [String: Int] {
            Dictionary(try store.knownJunctions(roads: ["A4"]).map { ($0.name, $0.support) }, uniquingKeysWith: +)
        }
        let t0 = Date(timeIntervalSince1970: 1_750_000_000)
        let old = "/srv/feeds/a4.xml", renamedTo = "a4.xml", mergedInto = "a4-merged.xml"
        // Renamed: the old name's incidents and observations become the new name's.
        try ingest(store, messages(old), source: old, now: t0)
        let once = try support()
        #expect(!once.isEmpty && once.values.allSatisfy { $0 == 3 }, "\(once)")
        _ = try store.ingest(source: renamedTo, adopting: FormerSourceNames(given: [old], migrated: []), now: t0.addingTimeInterval(60)) { emit in
            for i in messages(renamedTo) { try emit(.incident(i)) }
        }
        #expect(try store.allIncidents().map(\.incident.source) == Array(repeating: renamedTo, count: 3))
        #expect(try support() == once)
        // Merged: the new name already holds copies (changed later: they stay).
        try ingest(store, messages(mergedInto, summary: "zwischen AS Wenden und AS Krombach Stau"), source: mergedInto, now: t0.addingTimeInterval(120))
        let twice = try support()
        #expect(twice.values.allSatisfy { $0 == 6 }, "two sources, two copies each: \(twice)")
        _ = try store.ingest(source: mergedInto, adopting: FormerSourceNames(given: [renamedTo], migrated: []), now: t0.addingTimeInterval(180)) { emit in
            for i in messages(mergedInto, summary: "zwischen AS Wenden und AS Krombach Stau") { try emit(.incident(i)) }
        }
        let kept = try store.allIncidents()
        #expect(kept.count == 3 && kept.allSatisfy { $0.incident.source == mergedInto && $0.incident.summary?.hasSuffix("Stau") == true })
        #expect(try support() == once)
        #expect(try store.relearnJunctions().observations == once.values.reduce(0, +))
        #expect(try support() == once)
    }
}
