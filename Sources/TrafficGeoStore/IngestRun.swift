import Foundation
import TrafficGeoConflation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel

/// What an ingest does, written once for every store (`IngestRun.run`); each store supplies
/// the steps with its own statements (`IngestSteps`), inside its one transaction.
///
/// The rules kept here: every event counts as read; a skipped entry is reported and, under a
/// snapshot, ends nothing it might name; a feed that broke off keeps what came before the break
/// (one refused before any entry was read is an error, and nothing is stored); positioned,
/// learnable messages that are new or changed teach where their junctions are; a snapshot ends
/// what the source no longer lists only when the feed was read to its end; what the feed itself
/// says is over ends once; new, changed and ended reports are placed into events; every new,
/// changed, ended and merged-away event goes into the change feed.
package protocol IngestSteps: AnyObject {
    /// Makes the sources an older version filed this feed under part of `source`
    /// (`SourceMergePlan`), then gets ready to write. The first step. Returns the reports the
    /// adoption took out of their events, to be placed again with this ingest's (`mergeEvents`).
    func begin(adopting formerNames: FormerSourceNames, into source: String) throws -> ReleasedReports
    /// Stores one incident (insert, or update by source and feed id): true when it was stored
    /// unchanged, false when new or changed, nil when the store cannot tell yet (it compares
    /// in batches, as PostGIS does).
    func upsert(_ incident: Incident) throws -> Bool?
    /// Writes what is pending; how many incidents were inserted, updated and left unchanged.
    func finishWrites() throws -> (inserted: Int, updated: Int, unchanged: Int)
    /// A junction-learning run over the junctions known now.
    func startLearning() throws -> JunctionLearningRun
    /// Writes what the run learned (and swaps back positions given the wrong way round).
    func finishLearning(_ run: JunctionLearningRun, now: Date) throws -> JunctionLearning
    /// Ends the source's open incidents in `scope` that the ingest neither named nor skipped.
    func endMissing(source: String, scope: SnapshotScope, skippedIDs: Set<String>, now: Date) throws -> [Int64]
    /// Ends the incidents the feed itself said are over (`Incident.endedAt`), where not ended yet.
    func endAsTold(_ told: [(source: String, id: String, at: Date)]) throws -> [Int64]
    /// Places the ingest's new and updated reports, and the `ended` ones, into events
    /// (`EventMerger`, by the store's settings); what happened to events.
    func mergeEvents(source: String, ended: [Int64], released: ReleasedReports, now: Date) throws -> EventChanges
    /// Records what happened to events in the change feed; the sequence numbers used.
    func recordChanges(_ changes: EventChanges, now: Date) throws -> ClosedRange<Int64>?
    /// Lets the store's helpers go idle, whether the ingest succeeded or not (the last step).
    func close()
}

package enum IngestRun {
    /// Runs one ingest through `steps` (inside the caller's transaction).
    package static func run(_ steps: some IngestSteps, source: String, format: FeedFormat?, adopting formerNames: FormerSourceNames,
                            snapshot: SnapshotScope?, now: Date, read: ((FeedEvent) throws -> Void) throws -> Void) throws -> IngestSummary {
        defer { steps.close() }
        guard source != EventRole.eventSourceName else {
            throw StoreError.writeFailed("", reason: StoreFailure(.other, "\(source) is the name events are filed under: read the feed under another source name"))
        }
        var summary = IngestSummary(source: source, format: format)
        let released = try steps.begin(adopting: formerNames, into: source)
        var learner: JunctionLearningRun?
        var endedByFeed: [(source: String, id: String, at: Date)] = []
        do {
            try read { event in
                summary.read += 1
                switch event {
                case let .skipped(entry):
                    summary.skipped.append(entry)
                case let .incident(incident):
                    let unchanged = try steps.upsert(incident)
                    if let endedAt = incident.endedAt { endedByFeed.append((incident.source, incident.id, min(endedAt, now))) }
                    if incident.position == nil {
                        summary.withoutPosition += 1
                        if incident.properties[Incident.positionProblemProperty] != nil { summary.positionsIgnored += 1 }
                    } else if JunctionLearningRun.isLearnable(incident), unchanged != true {
                        // New or changed (or not known to be unchanged), positioned by the feed:
                        // it teaches where its junctions are. A message read again replaces its
                        // own observations, so one learned twice counts once.
                        learner = try learner ?? steps.startLearning()
                        learner?.add(incident)
                    }
                }
            }
        } catch let error as FeedError {
            guard error.entriesKept != nil else { throw error }
            summary.feedError = error.description
            summary.feedFailure = error
        }
        let counts = try steps.finishWrites()
        if let learner {
            let learning = try steps.finishLearning(learner, now: now)
            summary.junctionObservations = learning.observations
            summary.positionConflicts = learning.conflicts
        }
        summary.new = counts.inserted
        summary.updated = counts.updated
        summary.unchanged = counts.unchanged
        var ended: [Int64] = []
        if let snapshot, summary.feedError == nil {
            ended = try steps.endMissing(source: source, scope: snapshot, skippedIDs: Set(summary.skipped.compactMap(\.entryID)), now: now)
        }
        ended += try steps.endAsTold(endedByFeed)
        summary.ended = ended.count
        // Reports into events, and the events' changes into the change feed, in the same
        // transaction as the changes.
        let events = try steps.mergeEvents(source: source, ended: ended, released: released, now: now)
        summary.merged = events.joined
        summary.changes = try steps.recordChanges(events, now: now)
        return summary
    }
}
