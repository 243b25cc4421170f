import Foundation
import TrafficGeoModel

/// What a watch remembers between runs: the last change-feed event it handled, and which
/// incidents each standing query holds. Saved after each batch of events is delivered, so a
/// restarted watch goes on from there and neither repeats nor misses events.
public struct WatchState: Codable, Sendable, Equatable {
    /// What a standing query remembers of an incident inside it: enough to say it left after
    /// it was deleted, and when it expires.
    public struct Member: Codable, Sendable, Equatable {
        public var id: String
        public var source: String
        public var title: String
        public var road: String?
        public var category: String?
        public var latitude: Double
        public var longitude: Double
        public var expires: Date?
    }

    public var version = 1
    /// The last change-feed event handled; nil before the first run.
    public var lastSequence: Int64?
    /// Per standing query (by name): store id → member.
    public var inside: [String: [Int64: Member]] = [:]
    /// A fingerprint of the standing queries: other queries start over (`WatchMatcher`).
    public var queries: String?

    public init() {}

    public static func load(from url: URL) throws -> WatchState? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(WatchState.self, from: data)
    }

    /// Writes the state atomically (a crash leaves the old or the new file, never half of one).
    public func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(self).write(to: url, options: .atomic)
    }
}

extension WatchState.Member {
    init(_ incident: Incident, at position: Coordinate) {
        self.init(id: incident.id, source: incident.source, title: incident.title, road: incident.road,
                  category: incident.category?.rawValue, latitude: position.latitude, longitude: position.longitude,
                  expires: incident.expires)
    }

    /// The incident as far as the member knows it.
    var incident: Incident {
        Incident(source: source, id: id, title: title, expires: expires, road: road,
                 category: category.flatMap(IncidentCategory.init(rawValue:)),
                 position: Coordinate(latitude: latitude, longitude: longitude))
    }
}
