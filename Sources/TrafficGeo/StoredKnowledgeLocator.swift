import Foundation
import TrafficGeoGeocoding
import TrafficGeoRoadTitles
import TrafficGeoStore

/// Locates one traffic message the way ingest does: with what the store knows of its road (the
/// junctions it learned, the positions of the road's incidents) before any geocoder is asked.
/// A message without a road reference goes through `IncidentLocator` alone.
///
///     let locator = StoredKnowledgeLocator(store: store, locator: IncidentLocator(service: service))
///     let found = try await locator.locate(title: "A4 | Krombach - Wenden", text: "A4: Olpe -> Köln, zwischen 0.2 km hinter AS Krombach …")
public struct StoredKnowledgeLocator: Sendable {
    public let store: any IncidentStore
    public let locator: IncidentLocator

    public init(store: any IncidentStore, locator: IncidentLocator) {
        self.store = store
        self.locator = locator
    }

    public func locate(title: String, text: String?) async throws -> LocatedPosition? {
        let message = TrafficMessageParser.parse(title: title, text: text)
        guard let road = message.road else { return try await locator.locate(message) }
        let knowledge = RoadKnowledge(road: road, junctions: try await store.knownJunctions(roads: [road]),
                                      positions: try await store.roadPositions(road: road))
        let outcome = await RoadResolver(locator: locator).resolve(road: road, items: [RoadResolver.Item(id: 0, message: message)],
                                                                   knowledge: knowledge)
        return try outcome.results[0]?.get() ?? nil
    }
}
