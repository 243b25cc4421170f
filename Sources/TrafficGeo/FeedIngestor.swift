import Foundation
import Logging
import NIOConcurrencyHelpers
import TrafficGeoFeeds
import TrafficGeoModel
import TrafficGeoOGR
import TrafficGeoStore
import TrafficGeoSupport

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
    /// Entries warned of one by one (skipped, or their position ignored); the rest are counted
    /// (the summary names the reasons).
    public var maxEntryWarnings = 20
    /// After this many entries, a feed with less than 1 % of them readable is not a feed: it is
    /// refused (exit 65) and nothing of it is stored, rather than read on (random bytes with a
    /// comma in the first line were 1.8 M junk rows and 7.6 M warning lines).
    public var plausibilitySample = 1000
    /// Each feed read is its source's whole current state: what it no longer lists ends
    /// (`SnapshotScope`). The `autobahn:` source is always read so.
    public var snapshot = false
    /// Where `autobahn:` locations are fetched from, and how.
    public var autobahn = AutobahnAPI()
    /// Records each fetch's outcome in the store (feed health in `trafficgeo stats`).
    public var recordsHealth = true
    /// The CRS of CSV x/y columns and GeoJSON positions (`--crs`); nil: WGS84.
    public var crs: String?
    /// A TMC location table for DATEX II's ALERT-C locations (`--tmc-table`).
    public var locationTable: AlertCLocationTable?
    /// Which column of a CSV feed is which field (`title=advisorymessage`); the rest are
    /// recognised by their names and contents, and what was recognised is logged.
    public var fields: [CSVColumns.Role: String] = [:]
    /// With neither `fields` nor `crs` given, a source is read with the ones an earlier ingest of
    /// it gave (`SourceReading`, kept in the store); given, they replace what was kept. When this
    /// is set, what was kept is dropped and not used (`--forget-reading`).
    public var forgetsKeptReading = false
    /// A download (an http(s) source) that has not finished after this long fails.
    public var fetchTimeout: Duration = .seconds(60)
    /// Where each location's reads were filed, shared by the copies of this ingestor (a loop
    /// reads its sources side by side).
    private let filedAs = FiledSources()
    /// An Open511 URL whose answer names a next page is followed this many pages at most.
    public var maxPages = 100

    public init(store: any IncidentStore, format: FeedFormat? = nil, sourceName: String? = nil) {
        self.store = store
        self.format = format
        self.sourceName = sourceName
    }

    /// Reads a location: a file, `-` (stdin), an http(s) URL, or `autobahn:[ROAD,…]`.
    public func ingest(_ location: String) async throws -> IngestSummary {
        if let roads = AutobahnAPI.roads(inLocation: location) {
            return try await ingestAutobahn(roads: roads)
        }
        let input: FeedInput
        do {
            input = try await FeedInput.open(location, maxBytes: maxFeedBytes, timeout: fetchTimeout)
        } catch {
            await record(.failure(source: failureSource(location), error: "\(error)"))
            throw error
        }
        defer { input.discard() }
        // An Open511 API answers in pages: the pages together are the feed (one snapshot).
        var pages: [FeedInput] = []
        defer { for page in pages { page.discard() } }
        if location.lowercased().hasPrefix("http"), (try? FeedReading.format(of: input, forced: format)) == .open511 {
            var page = input
            var seen: Set<String> = [location]
            // Finding the next page reads and parses the whole page: on a thread for blocking work.
            while pages.count + 1 < maxPages, let next = try await BlockingThreads.run({ [page] in Open511Pages.nextURL(in: page, base: location) }),
                  seen.insert(next).inserted {
                do {
                    page = try await FeedInput.open(next, maxBytes: maxFeedBytes, timeout: fetchTimeout)
                } catch {
                    await record(.failure(source: failureSource(location), error: "\(error)"))
                    throw error
                }
                pages.append(page)
            }
        }
        // Parsing and storing block: on a store thread, not the task's.
        let summary = try await StoreThreads.run { [pages] in try ingest(input, continuedBy: pages) }
        filedAs.remember(summary.source, for: location)
        return summary
    }

    /// The source a failed read of `location` is recorded under in feed health: the name its
    /// last read was filed under (an Atom feed's own id, say), so that a feed's failures and
    /// successes are one source; before any read in this process, the location's own name.
    private func failureSource(_ location: String) -> String {
        sourceName ?? filedAs.source(for: location) ?? FeedIdentity.sourceName(forLocation: location)
    }

    /// Ingests an already opened input (and the pages that continue it, read as one feed).
    @available(*, noasync, message: "blocks its thread: use ingest(_ location:) or StoreThreads.run in async code")
    public func ingest(_ input: FeedInput, continuedBy pages: [FeedInput] = []) throws -> IngestSummary {
        let format = try FeedReading.format(of: input, forced: self.format)
        let note: (FeedNote) -> Void = { [logger] in logger.info("\(input.location): \($0.text)", metadata: [Setting.logKey: "\($0.setting.rawValue)"]) }
        let source = sourceName ?? FeedIdentity.sourceName(of: input, format: format)
        let (fields, crs, keep) = try reading(for: source, note: note)
        // A GIS file through GDAL (TrafficGeoOGR); every other format has its native reader.
        let reader: FeedReader = format == .gis
            ? GISOrRecordsReader(gis: OGRFeedReader(crs: crs, fields: fields, note: note),
                                 records: FeedReading.reader(for: .records, crs: crs, fields: fields, note: note))
            : FeedReading.reader(for: format, crs: crs, locationTable: locationTable, fields: fields, note: note)
        // A DATEX II supplier publishes several feeds (situations, roadworks) under its one name:
        // each URL is a part of the source, so that a snapshot of one ends nothing of another's.
        // (Files saved one per fetch are the same publication: whole snapshots.)
        let part = format == .datex2 && sourceName == nil && input.location.contains("://")
            && source != FeedIdentity.sourceName(forLocation: input.location) ? input.location : nil
        // What older versions filed this location under becomes this source, so that a store
        // written by them gains no copies of what it holds.
        let formerNames = FeedIdentity.formerNames(forLocation: input.location)
        logger.debug("reading \(input.location) as \(format) into source '\(source)'")
        var count = 0, readable = 0, warned = 0
        // Records a TMC location table would place: said once the feed is read.
        var alertCOnly = 0, alertCTables: Set<String> = []
        func warn(_ message: @autoclosure () -> String) {
            warned += 1
            if warned <= maxEntryWarnings { logger.warning("\(message())") }
        }
        func readFeed(_ emit: (FeedEvent) throws -> Void) throws {
            defer {
                if warned > maxEntryWarnings {
                    logger.warning("\(input.location): … and \(warned - maxEntryWarnings) more entries skipped or with their position ignored (the summary counts them)")
                }
            }
            try ReadAhead.run(read: { handle in
                try reader.read(input, source: source, handle: handle)
                for page in pages { try reader.read(page, source: source, handle: handle) }
            }) { event in
                if count >= maxEntries {
                    throw FeedError.tooManyEntries(input.location, format: format, limit: maxEntries)
                }
                switch event {
                case let .skipped(entry):
                    warn("\(input.location): skipped \(entry)")
                case let .incident(incident):
                    readable += 1
                    if locationTable == nil, incident.position == nil, let reference = incident.properties[AlertCReference.property] {
                        alertCOnly += 1
                        // The table is what a user looks for.
                        if alertCTables.count < 3, let table = AlertCReference.table(inDescription: reference) { alertCTables.insert(table) }
                    }
                    if let problem = incident.properties[Incident.positionProblemProperty] {
                        warn("\(input.location): \(SkippedEntry(index: count + 1, entryID: incident.id, reason: "position ignored: \(problem)")); it is kept, to be placed from its words")
                    }
                }
                if let part, case var .incident(incident) = event {
                    incident.properties[Incident.snapshotPartProperty] = part
                    try emit(.incident(incident))
                } else {
                    try emit(event)
                }
                count += 1
                if count == plausibilitySample, readable * 100 < count {
                    throw FeedError.malformed(input.location, format: format,
                                              reason: "\(count - readable) of the first \(count) entries are broken; nothing of it was stored",
                                              entriesRead: 0)
                }
                if count % progressInterval == 0 { progress?(count) }
            }
        }
        let summary: IngestSummary
        do {
            summary = try store.ingest(source: source, format: format, adopting: formerNames,
                                       snapshot: snapshot ? (part.map { SnapshotScope(parts: [$0]) } ?? .wholeSource) : nil, read: readFeed)
        } catch {
            record(.failure(source: source, error: "\(error)"))
            throw error
        }
        record(FetchReport(source: source, entries: summary.read, errors: summary.feedError.map { [$0] } ?? []))
        if alertCOnly > 0 {
            note(FeedNote("\(alertCOnly) of its records \(alertCOnly == 1 ? "is" : "are") located only by ALERT-C codes (location table \(alertCTables.sorted().joined(separator: ", "))): "
                + "the country's TMC location table places them; without it their words are geocoded", setting: .locationTable))
        }
        // Kept once the feed was read with it and something stored: a mapping that named no
        // column of it, or with which every entry was skipped, is not.
        if let keep, summary.new + summary.updated + summary.unchanged > 0 { try store.setSourceReading(keep, for: source) }
        return summary
    }

    /// The field mapping and CRS to read `source` with: the ones given to this ingestor, else
    /// those kept for the source (said in a note); and what to keep for it once read (nil: no
    /// change to what is kept).
    @available(*, noasync, message: "reads the store")
    private func reading(for source: String, note: (FeedNote) -> Void) throws
        -> (fields: [CSVColumns.Role: String], crs: String?, keep: SourceReading?) {
        let given = SourceReading(fields: fields, crs: crs)
        if forgetsKeptReading {
            try store.setSourceReading(nil, for: source)
            return (fields, crs, given.isEmpty ? nil : given)
        }
        guard given.isEmpty else {
            return (fields, crs, try store.sourceReading(for: source) == given ? nil : given)
        }
        guard let kept = try store.sourceReading(for: source), !kept.isEmpty else { return ([:], nil, nil) }
        note(FeedNote("read as an earlier ingest of source '\(source)' was told: \(kept.described)", setting: .keptReading))
        return (kept.roles, kept.crs, nil)
    }

    /// Reads the Autobahn API (all roads when `roads` is nil) as one snapshot of the `autobahn`
    /// source: documents that failed are reported in the summary (`feedError`) and their
    /// incidents left as they were; what the others no longer list ends.
    public func ingestAutobahn(roads: [String]?) async throws -> IngestSummary {
        let source = sourceName ?? FeedIdentity.autobahnAPI
        let fetched: AutobahnSnapshot
        do {
            fetched = try await autobahn.snapshot(roads: roads)
        } catch {
            await record(.failure(source: source, error: "\(error)"))
            throw error
        }
        for failure in fetched.failures { logger.warning("autobahn: \(failure) (its incidents are kept as they were)") }
        if fetched.documents.isEmpty, let first = fetched.failures.first {
            // Nothing came: a download failure (exit 69), not a partial ingest; nothing changes.
            let error = FeedError.download(autobahn.baseURL, reason: "every document failed (\(fetched.failures.count)), the first: \(first)")
            await record(.failure(source: source, error: "\(error)"))
            throw error
        }
        var summary = try await store.ingest(source: source, format: .autobahn, snapshot: SnapshotScope(parts: fetched.completeParts)) { emit in
            var count = 0
            try AutobahnAPI.read(fetched, source: source) { event in
                if case let .skipped(entry) = event { logger.warning("autobahn: skipped \(entry)") }
                try emit(event)
                count += 1
                if count % progressInterval == 0 { progress?(count) }
            }
        }
        if !fetched.failures.isEmpty {
            summary.feedError = "\(fetched.failures.count) of \(fetched.failures.count + fetched.documents.count) documents failed: "
                + fetched.failures.map(\.description).joined(separator: "; ")
        }
        await record(FetchReport(source: source, entries: summary.read, errors: fetched.failures.map(\.description),
                                 readSomething: !fetched.documents.isEmpty))
        return summary
    }

    @available(*, noasync)
    private func record(_ report: FetchReport) {
        guard recordsHealth else { return }
        do {
            try store.recordFetch(report)
        } catch {
            logger.warning("could not record how the fetch of \(report.source) went: \(error)")
        }
    }

    /// `record` on a store thread, for the async paths. A download cut short because the task
    /// was cancelled (a loop told to stop) is no failure of the source: not recorded.
    private func record(_ report: FetchReport) async {
        if !report.errors.isEmpty && !report.readSomething && Task.isCancelled { return }
        _ = try? await StoreThreads.runToEnd { record(report) }
    }
}

/// Location → the source its last read was filed under (`FeedIngestor.failureSource`).
final class FiledSources: Sendable {
    private let names = NIOLockedValueBox<[String: String]>([:])

    func remember(_ source: String, for location: String) { names.withLockedValue { $0[location] = source } }
    func source(for location: String) -> String? { names.withLockedValue { $0[location] } }
}

/// A GIS file through GDAL; an XML or JSON document in which GDAL finds no features (a WFS
/// answer of records with GML geometries GDAL's GML reader cannot lay out) read for its records
/// instead, before anything of it was stored.
struct GISOrRecordsReader: FeedReader {
    let gis: FeedReader
    let records: FeedReader

    func read(_ input: FeedInput, source: String, handle: (FeedEvent) throws -> Void) throws {
        var emitted = 0
        do {
            try gis.read(input, source: source) { event in
                emitted += 1
                try handle(event)
            }
        } catch let gisError as FeedError where emitted == 0 && ["XML", "JSON"].contains(FeedFormat.contentFamily((try? input.head()) ?? Data())) {
            do {
                try records.read(input, source: source, handle: handle)
            } catch {
                throw gisError   // GDAL's reason, which names the format the document claims
            }
        }
    }
}
