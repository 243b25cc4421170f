import Foundation
import Logging
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoStore

/// Reads feeds into the store: opens the input (file, stdin or URL), detects its format, streams
/// its entries into one store transaction, and reports what happened.
///
///     let ingestor = FeedIngestor(store: store)
///     let summary = try await ingestor.ingest("data/sample/lmst.de_DE.xml")
public struct FeedIngestor: Sendable {
    public let store: any IncidentStore
    public var format: FeedFormat?
    /// Overrides the source name incidents are filed under (default: the feed's own identity,
    /// else the location's name; see `FeedIdentity`).
    public var sourceName: String?
    public var maxFeedBytes: Int64 = FeedInput.defaultMaxBytes
    /// Entries read from one feed at most; past it, the feed counts as broken (the entries before
    /// are kept, like a truncated feed's).
    public var maxEntries = FeedIngestor.defaultMaxEntries
    public static let defaultMaxEntries = 10_000_000
    public var logger = Logger(label: "trafficgeo.ingest")
    /// Called with the number of entries read so far, every `progressInterval` entries.
    public var progress: (@Sendable (Int) -> Void)?
    public var progressInterval = 1000

    public init(store: any IncidentStore, format: FeedFormat? = nil, sourceName: String? = nil) {
        self.store = store
        self.format = format
        self.sourceName = sourceName
    }

    public func ingest(_ location: String) async throws -> IngestSummary {
        let input = try await FeedInput.open(location, maxBytes: maxFeedBytes)
        defer { input.discard() }
        return try ingest(input)
    }

    /// Ingests an already opened input.
    public func ingest(_ input: FeedInput) throws -> IngestSummary {
        let format = try FeedReading.format(of: input, forced: self.format)
        let reader = FeedReading.reader(for: format)
        let source = sourceName ?? FeedIdentity.sourceName(of: input, format: format)
        // What older versions filed this location under becomes this source, so that a store
        // written by them gains no copies of what it holds.
        let formerNames = FeedIdentity.formerNames(forLocation: input.location)
        logger.debug("reading \(input.location) as \(format) into source '\(source)'")
        var count = 0
        return try store.ingest(source: source, format: format, adopting: formerNames) { emit in
            try ReadAhead.run(read: { handle in try reader.read(input, source: source, handle: handle) }) { event in
                if count >= maxEntries {
                    throw FeedError.malformed(input.location, format: format,
                                              reason: "more than \(maxEntries) entries (--max-entries); the first \(maxEntries) were kept",
                                              entriesRead: count)
                }
                switch event {
                case let .skipped(entry):
                    logger.warning("\(input.location): skipped \(entry)")
                case let .incident(incident):
                    if let problem = incident.properties[Incident.positionProblemProperty] {
                        logger.warning("\(input.location): \(SkippedEntry(index: count + 1, entryID: incident.id, reason: "position ignored: \(problem)")); it is geocoded from its words instead")
                    }
                }
                try emit(event)
                count += 1
                if count % progressInterval == 0 { progress?(count) }
            }
        }
    }
}
