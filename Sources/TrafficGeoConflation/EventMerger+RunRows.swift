import Foundation
import TrafficGeoModel

/// The rows one merge run reads, each decoded and its words read (`ReportTraits`) once, kept
/// as the run changes them: reports join events, a report of its own becomes an event's first.
final class RunRows {
    private let rows: EventRows
    private let settings: ConflationSettings
    private var stored: [Int64: StoredIncident] = [:]
    private var traitsOf: [Int64: ReportTraits] = [:]
    /// Events' members and lists as stored, with this run's changes.
    private var membersOf: [Int64: EventMembers] = [:]

    init(_ rows: EventRows, settings: ConflationSettings) {
        self.rows = rows
        self.settings = settings
    }

    /// Reads the rows with these ids that are not read yet.
    func load(_ ids: [Int64]) throws {
        let missing = Set(ids).filter { stored[$0] == nil }
        guard !missing.isEmpty else { return }
        let loaded = try rows.rows(ids: missing.sorted())
        for row in loaded { stored[row.storeID] = row }
        // Reports' words are read as they are loaded (an event's row is compared by its reports).
        for traits in Self.traits(of: loaded.filter { $0.role != .event && traitsOf[$0.storeID] == nil }, settings: settings) {
            traitsOf[traits.storeID] = traits
        }
    }

    /// The traits of many reports, read on every core: reading words is most of a merge's time.
    private static func traits(of reports: [StoredIncident], settings: ConflationSettings) -> [ReportTraits] {
        let cores = min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard reports.count >= 64, cores > 1 else { return reports.map { ReportTraits($0, settings: settings) } }
        var read = [ReportTraits?](repeating: nil, count: reports.count)
        read.withUnsafeMutableBufferPointer { buffer in
            // Each stripe writes its own elements only.
            nonisolated(unsafe) let out = buffer
            DispatchQueue.concurrentPerform(iterations: cores) { stripe in
                var k = stripe
                while k < reports.count {
                    out[k] = ReportTraits(reports[k], settings: settings)
                    k += cores
                }
            }
        }
        return read.map { $0! }
    }

    func row(_ id: Int64) -> StoredIncident? { stored[id] }

    func traits(_ id: Int64) -> ReportTraits? {
        if let known = traitsOf[id] { return known }
        guard let row = stored[id] else { return nil }
        let traits = ReportTraits(row, settings: settings)
        traitsOf[id] = traits
        return traits
    }

    func memberIDs(ofEvents ids: some Collection<Int64>) throws -> [Int64: [Int64]] {
        let missing = ids.filter { membersOf[$0] == nil }
        if !missing.isEmpty {
            for (event, members) in try rows.members(ofEvents: missing.sorted()) { membersOf[event] = members }
        }
        var found: [Int64: [Int64]] = [:]
        for id in ids { if let members = membersOf[id], !members.ids.isEmpty { found[id] = members.ids } }
        return found
    }

    /// Each event's reports, whole, in the order they joined it (`EventComposition.joiningOrder`).
    func members(ofEvents ids: [Int64]) throws -> [Int64: [StoredIncident]] {
        let found = try memberIDs(ofEvents: ids)
        try load(found.values.flatMap { $0 })
        return found.reduce(into: [:]) { out, entry in
            out[entry.key] = EventComposition.joiningOrder(entry.value.compactMap { stored[$0] }, listed: membersOf[entry.key]?.listed ?? [])
        }
    }

    func setEvent(ofReport id: Int64, to event: Int64?) {
        if let old = stored[id]?.memberOf { membersOf[old]?.ids.removeAll { $0 == id } }
        stored[id]?.role = event == nil ? .report : .member
        stored[id]?.memberOf = event
        if let event, membersOf[event] != nil, membersOf[event]?.ids.contains(id) == false { membersOf[event]?.ids.append(id) }
    }

    /// The report `id` became the first report of an event (`EventRows.promote`).
    /// `listed`: it leads the event's list (else the list follows when the store first saw each).
    func promoted(_ id: Int64, _ promotion: Promotion, listed: Bool) {
        if promotion.report == id {
            // The event's row was made at an id of its own; the report stayed.
            guard var report = stored[id] else { return }
            report.role = .member
            report.memberOf = promotion.event
            stored[id] = report
            membersOf[promotion.event] = EventMembers(ids: [id], listed: listed ? [ReportReference(report)] : [])
            report.storeID = promotion.event
            report.role = .event
            report.memberOf = nil
            stored[promotion.event] = report
            return
        }
        let newID = promotion.report
        if var report = stored[id] {
            report.storeID = newID
            report.role = .member
            report.memberOf = id
            stored[newID] = report
            if var traits = traitsOf[id] {
                traits.storeID = newID
                traitsOf[newID] = traits
            }
            membersOf[id] = EventMembers(ids: [newID], listed: listed ? [ReportReference(report)] : [])
            // The event's row holds the report's fields until it is composed.
            report.storeID = id
            report.role = .event
            report.memberOf = nil
            stored[id] = report
        } else {
            membersOf[id] = nil
            stored[id] = nil
        }
        traitsOf[id] = nil
    }

    /// The event's row was written anew: its list is the one written.
    func wroteEvent(_ id: Int64, listing reports: [ReportReference]) {
        stored[id] = nil
        membersOf[id]?.listed = reports
    }

    /// Lets go of the rows read, but for those of these events and reports.
    func forget(keeping ids: Set<Int64>) {
        stored = stored.filter { ids.contains($0.key) }
        traitsOf = traitsOf.filter { ids.contains($0.key) }
        membersOf = membersOf.filter { ids.contains($0.key) }
    }
}

/// Places by road and by cells of about `reach` metres, so that a report looks only at the rows
/// around it on its own road. Lines are walked in steps shorter than a cell.
struct PlaceGrid {
    private var cells: [CellKey: [Int]] = [:]
    private let places: [ReportPlace]
    private let cellDegrees: Double
    /// Which places the current `near` has found already (those marked with its `generation`).
    private var seen: [UInt32]
    private var generation: UInt32 = 0

    private struct CellKey: Hashable { var road: String, lat: Int, lon: Int }

    init(_ places: [ReportPlace], reach: Double) {
        self.places = places
        seen = Array(repeating: 0, count: places.count)
        cellDegrees = max(0.01, reach / 111_000)
        for (k, place) in places.enumerated() {
            guard let road = place.road.map(ReportTraits.roadKey) else { continue }
            for key in Set(densified(place.shape).map { cell(road, $0) }) { cells[key, default: []].append(k) }
        }
    }

    /// Cells of longitude around the whole globe, so that the antimeridian is no edge.
    private var longitudeCells: Int { Int((360 / cellDegrees).rounded(.up)) }

    private func cell(_ road: String, _ p: Coordinate) -> CellKey {
        CellKey(road: road, lat: Int((p.latitude / cellDegrees).rounded(.down)),
                lon: Int(((p.longitude + 180) / cellDegrees).rounded(.down)) % longitudeCells)
    }

    /// The shape's points, with points added along lines every half cell.
    private func densified(_ shape: [Coordinate]) -> [Coordinate] {
        guard shape.count >= 2 else { return shape }
        var out = [shape[0]]
        for (a, b) in zip(shape, shape.dropFirst()) {
            let steps = Int((max(abs(b.latitude - a.latitude), abs(b.longitude - a.longitude)) / (cellDegrees / 2)).rounded(.up))
            if steps > 1, steps < 10_000 {
                for k in 1..<steps {
                    let t = Double(k) / Double(steps)
                    out.append(Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude), longitude: a.longitude + t * (b.longitude - a.longitude)))
                }
            }
            out.append(b)
        }
        return out
    }

    /// The places on `road` with a point within about `reach` of `shape` (every place closer
    /// than `reach` is among them; some farther ones too), each once.
    mutating func near(_ shape: [Coordinate], road: String, within reach: Double) -> [ReportPlace] {
        let road = ReportTraits.roadKey(road)
        generation &+= 1
        if generation == 0 {
            seen = Array(repeating: 0, count: places.count)
            generation = 1
        }
        var found: [ReportPlace] = []
        for p in shape.count >= 2 ? densified(shape) : shape {
            let c = cell(road, p)
            // Longitude cells shrink towards the poles: look further across them there.
            let span = Int((1 / max(cos(p.latitude * .pi / 180), 0.05)).rounded(.up))
            for dLat in -1...1 {
                for dLon in -span...span {
                    let lon = ((c.lon + dLon) % longitudeCells + longitudeCells) % longitudeCells
                    for k in cells[CellKey(road: road, lat: c.lat + dLat, lon: lon)] ?? [] where seen[k] != generation {
                        seen[k] = generation
                        found.append(places[k])
                    }
                }
            }
        }
        return found
    }
}
