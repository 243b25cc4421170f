import Foundation
import GRDB
import TrafficGeoModel
import TrafficGeoSupport

/// Inserts or updates incidents inside an open write transaction: finds the stored copy by
/// (source, feed id), compares change hashes, keeps a position found earlier while the words stay
/// the same, and keeps the spatial index (`BlockIndexWriter`) right for updated rows.
///
/// New incidents are held back (packed, `PendingInserts`) and stored by `CurveOrderedInserter`
/// in Hilbert-curve order of their positions, so that nearby incidents get consecutive ids and
/// the index can cover them as blocks. `finish()` must be called before the transaction commits.
final class IncidentWriter {
    /// What the writer did so far; entries of the feed that repeat an id count as updates.
    struct Counts { var inserted = 0, updated = 0, unchanged = 0 }
    private(set) var counts = Counts()
    /// Stored incidents this writer changed (or reopened), in order, each once: the change feed's
    /// `updated` events.
    private(set) var updatedIDs: [Int64] = []
    private var updatedSet: Set<Int64> = []
    /// The ids given to new incidents (consecutive runs, one per flush).
    private(set) var insertedRanges: [Range<Int64>] = []
    /// With `tracksSeen`, every stored incident the feed named (changed or not): what a snapshot keeps.
    private(set) var seenIDs: Set<Int64> = []
    private let tracksSeen: Bool

    private typealias Field = IncidentRowLayout.Field
    private let now: Double
    private let index: BlockIndexWriter
    private let sources: SourceRegistry
    private let inserter: CurveOrderedInserter
    private let findStatement: Statement
    private let updateStatement: Statement
    private let resetGeocodeStatus: Statement
    private let reopenStatement: Statement
    private var pending = PendingInserts()
    /// At most this many pending incidents are held (about 100 bytes each for short entries).
    /// More go into an empty table through an external sort (`SpilledRuns`), so that the whole
    /// feed is one curve-ordered run; into a table that has rows, they are stored in chunks.
    private let flushThreshold: Int
    /// The runs of the external sort, once a big feed goes into an empty table.
    private var spilled: SpilledRuns?
    private let db: Database

    init(db: Database, now: Date, flushThreshold: Int = 1 << 20, tracksSeen: Bool = false) throws {
        self.db = db
        self.tracksSeen = tracksSeen
        // Whole seconds: SQLite stores an integral REAL in 4 bytes instead of 8 (8 bytes a row for both columns).
        self.now = now.timeIntervalSince1970.rounded(.down)
        self.flushThreshold = max(1, flushThreshold)
        index = try BlockIndexWriter(db: db)
        sources = SourceRegistry(db: db)
        let columns = IncidentRowLayout.fieldColumns.joined(separator: ", ")
        // Column 0 the hash, 1 the store id, 2 when it ended, then the fields (`storedField`).
        findStatement = try db.makeStatement(sql: "SELECT content_hash, id, ended, \(columns) FROM incidents WHERE source_id = ? AND external_id = ?")
        let assignments = IncidentRowLayout.fieldColumns.map { "\($0) = ?" }.joined(separator: ", ")
        updateStatement = try db.makeStatement(sql: "UPDATE incidents SET \(assignments), content_hash = ?, last_changed = ? WHERE id = ?")
        // A feed that lists an incident again reopens it if it had ended.
        reopenStatement = try db.makeStatement(sql: "UPDATE incidents SET ended = NULL, last_changed = ? WHERE id = ?")
        resetGeocodeStatus = try db.makeStatement(sql: "UPDATE incidents SET geocode_status = NULL, geocode_error = NULL WHERE id = ?")
        inserter = try CurveOrderedInserter(db: db, index: index, now: self.now) { [findStatement] source, id in
            try Row.fetchOne(findStatement, arguments: [source, id])
        }
    }

    /// Where field `f` is in a `findStatement` row.
    private static func storedField(_ f: Field) -> Int { 3 + f.rawValue }

    /// Stores the incidents still pending; call before the transaction commits.
    func finish() throws {
        if let spilled {
            try spill(into: spilled)
            try storeMerged(spilled)
            self.spilled = nil
        } else {
            try flush()
        }
    }

    func upsert(_ incident: Incident) throws {
        var list = IncidentRowLayout.values(of: incident)
        let key = PendingInserts.key(source: incident.source, id: incident.id)
        if let slot = pending.slot(of: key) {
            // The feed repeats an id not stored yet: the later entry wins, as for stored ones.
            let earlier = pending.values(at: slot)
            Self.carryPosition(into: &list) { earlier[PendingInserts.firstField + $0.rawValue] }
            let hash = Self.hash(list)
            if earlier.last == hash.databaseValue { counts.unchanged += 1; return }
            // The position as stored (possibly carried over from the earlier entry), not as read.
            pending.replace(slot, with: [earlier[0], incident.id.databaseValue] + list + [hash.databaseValue],
                            position: IncidentRowLayout.position(list))
            counts.updated += 1
            return
        }
        let source = try sources.id(of: incident.source)
        if try !sources.isFresh(source), let existing = try Row.fetchOne(findStatement, arguments: [source, incident.id]) {
            return try update(existing, with: &list, reopening: incident.endedAt == nil)
        }
        pending.append(key: key, values: [source.databaseValue, incident.id.databaseValue] + list + [Self.hash(list).databaseValue],
                       position: incident.position)
        counts.inserted += 1
        if pending.count >= flushThreshold { try flushChunk() }
    }

    /// Updates a stored incident (`existing`: a `findStatement` row) to the field values `list`.
    /// `reopening`: an ended incident listed again reopens, unless the feed says it is still over.
    private func update(_ existing: Row, with list: inout [DatabaseValue], reopening: Bool = true) throws {
        let rowID: Int64 = existing[1]
        if tracksSeen { seenIDs.insert(rowID) }
        Self.carryPosition(into: &list) { existing[Self.storedField($0)] as DatabaseValue }
        let hash = Self.hash(list)
        let hadEnded = reopening && !(existing[2] as DatabaseValue).isNull
        if existing[0] as Int64 == hash {
            if hadEnded {
                try reopenStatement.execute(arguments: [now, rowID])
                noteUpdated(rowID)
            } else {
                counts.unchanged += 1
            }
            return
        }
        try updateStatement.execute(arguments: StatementArguments(list + [hash.databaseValue, now.databaseValue, rowID.databaseValue]))
        if hadEnded { try reopenStatement.execute(arguments: [now, rowID]) }
        let position = IncidentRowLayout.position(list)
        try index.positionChanged(id: rowID, to: position)
        // New words without a position: worth asking the geocoder again.
        if position == nil { try resetGeocodeStatus.execute(arguments: [rowID]) }
        noteUpdated(rowID)
    }

    private func noteUpdated(_ id: Int64) {
        counts.updated += 1
        // Changed twice by one feed (a repeated id): one event.
        if updatedSet.insert(id).inserted { updatedIDs.append(id) }
    }

    /// A full chunk of pending incidents: sorted into a run if the table is empty (or a run is
    /// already out), else stored.
    private func flushChunk() throws {
        if spilled == nil, try CurveOrderedInserter.tableIsEmpty(db) { spilled = SpilledRuns(besideDatabaseOf: db) }
        if let spilled { try spill(into: spilled) } else { try flush() }
    }

    private func spill(into runs: SpilledRuns) throws {
        guard pending.count > 0 else { return }
        try runs.spill(pending)
        pending = PendingInserts()
    }

    /// Stores the runs merged, as one curve-ordered run. When the feed repeats an id across
    /// runs (the identity index cannot be built), that is undone and the runs are stored one
    /// after another instead, where a repeated id becomes an update.
    private func storeMerged(_ runs: SpilledRuns) throws {
        do {
            try db.inSavepoint {
                try inserter.storeSorted(locatedCount: runs.locatedCount) { body in try runs.merge(body) }
                return .commit
            }
            if !inserter.lastStoredIDs.isEmpty { insertedRanges.append(inserter.lastStoredIDs) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            for run in runs.runs {
                try run.rewind()
                while let header = try run.next() {
                    run.withCurrent { _, values in pending.appendRecord(header, values: values) }
                }
                try flush()
            }
        }
    }

    /// Stores the pending incidents (`CurveOrderedInserter`). A row an earlier flush of this
    /// ingest already stored (a repeated id in a big feed) is updated instead.
    private func flush() throws {
        guard pending.count > 0 else { return }
        let repeated = try inserter.store(pending)
        if !inserter.lastStoredIDs.isEmpty { insertedRanges.append(inserter.lastStoredIDs) }
        for (existing, values) in repeated {
            counts.inserted -= 1
            var list = Array(values[PendingInserts.firstField ..< PendingInserts.firstField + IncidentRowLayout.fieldColumns.count])
            try update(existing, with: &list)
        }
        pending = PendingInserts()
    }

    /// Replaces the stored fields of an existing incident (a geocoder found its position) and
    /// re-indexes it; the content hash follows, so re-reading the feed later counts it unchanged.
    func replacePosition(storeID: Int64, with incident: Incident) throws {
        let list = IncidentRowLayout.values(of: incident)
        try updateStatement.execute(arguments: StatementArguments(list + [Self.hash(list).databaseValue, now.databaseValue, storeID.databaseValue]))
        try index.positionChanged(id: storeID, to: incident.position)
    }

    /// The feed still says the same words and has no coordinates: keep the position found
    /// earlier (by a geocoder, or by an earlier entry). `earlier(f)` is the earlier value of field f.
    private static func carryPosition(into list: inout [DatabaseValue], earlier: (Field) -> DatabaseValue) {
        func at(_ f: Field) -> DatabaseValue { list[f.rawValue] }
        guard at(.latitude).isNull, !earlier(.latitude).isNull,
              earlier(.title) == at(.title), earlier(.summary) == at(.summary) else { return }
        for f in [Field.latitude, .longitude] + IncidentRowLayout.positionFields { list[f.rawValue] = earlier(f) }
        if at(.segment).isNull { list[Field.segment.rawValue] = earlier(.segment) }
    }

    /// The change hash of the field values: 47 bits, which SQLite stores in 6 bytes instead of 8.
    /// The measures' numbers are left out: they are read from the properties, which are in,
    /// and a store that gains a measure then finds its rows unchanged (no "update" for every
    /// incident of a feed read again).
    static func hash(_ list: [DatabaseValue]) -> Int64 {
        var hash = StableHash()
        for (k, value) in list.enumerated() where !IncidentRowLayout.measurePositions.contains(k) { hash.combine(column: value) }
        return hash.int64 & (1 << 47 - 1)
    }
}
