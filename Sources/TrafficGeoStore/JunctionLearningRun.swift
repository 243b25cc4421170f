import Foundation
import NIOConcurrencyHelpers
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// Learning junction positions from the positioned messages of one ingest, alongside it: each
/// message the store keeps new or changed is handed over as it is stored, parsed on other threads
/// in batches while the ingest goes on (parsing is the cost: the ingest itself keeps about one and
/// a half cores busy), and the store writes the estimates (`results()`) in the ingest's
/// transaction at its end, so that knowledge and incidents commit together. Both stores use it.
///
/// Each message's estimates are filed under an observer key of its source and feed id
/// (`observer(source:externalID:)`): reading the message again replaces them instead of adding more.
package final class JunctionLearningRun {
    package struct Input: Sendable {
        package var source: String
        package var externalID: String
        package var title: String
        package var summary: String?
        package var road: String?
        package var position: Coordinate
        package var segment: [Coordinate]?

        package init(source: String, externalID: String, title: String, summary: String?, road: String?, position: Coordinate, segment: [Coordinate]?) {
            self.source = source
            self.externalID = externalID
            self.title = title
            self.summary = summary
            self.road = road
            self.position = position
            self.segment = segment
        }
    }

    /// One message, parsed: what it teaches, or why its position is doubted instead.
    package struct Checked: Sendable {
        package var input: Input
        package var observations: [JunctionObservation]
        package var conflict: PositionConflict?
    }

    static let batchSize = 256
    /// The store's junctions before this ingest, by road and key: a position far from its own
    /// well-attested junction is checked, not learned.
    private let known: [String: KnownJunction]
    private var batch: [Input] = []
    /// The parsing of the batches, on store threads while the ingest goes on.
    private let parsing = SharedWork()
    /// What the parsing threads found, in any order (the store sorts what needs an order).
    private let checked = NIOLockedValueBox<[Checked]>([])

    /// `known`: the store's junctions on named roads.
    package init(known junctions: [KnownJunction]) {
        var known: [String: KnownJunction] = [:]
        for j in junctions where !j.road.isEmpty { known[j.road + "\u{1F}" + j.key] = j }
        self.known = known
    }

    /// A stored incident worth learning from: positioned by its feed, on a named road.
    package static func isLearnable(_ incident: Incident) -> Bool {
        guard incident.position != nil, incident.road != nil, incident.positionSource?.kind != .geocoder else { return false }
        if let segment = incident.segment, segment.count >= 2 { return true }
        // A point alone teaches only a junction it is at (JunctionLearner): without such words
        // there is nothing to learn, and no message is parsed for nothing (a feed of 100,000
        // points would otherwise cost the ingest twice its time).
        guard let text = incident.summary else { return false }
        return pointMarkers.occurs(in: text[...])
    }

    /// Words that put a junction at a point: an offset, "bei", "Höhe", "an der" (one pass over the
    /// text: this runs on the ingest's writer thread for every entry).
    static let pointMarkers = ByteNeedles(["km hinter", "km vor", "km nach", "bei ", "Bei ", "Höhe ", "Hoehe ", "an der "])

    package func add(_ incident: Incident) {
        guard let position = incident.position else { return }
        add(Input(source: incident.source, externalID: incident.id, title: incident.title, summary: incident.summary,
                  road: incident.road, position: position, segment: incident.segment))
    }

    package func add(_ input: Input) {
        batch.append(input)
        if batch.count >= Self.batchSize { dispatch() }
    }

    private func dispatch() {
        let work = batch
        batch = []
        let known = self.known, checked = self.checked
        parsing.offer {
            var out: [Checked] = []
            out.reserveCapacity(work.count)
            for input in work {
                let message = TrafficMessageParser.parseJunctions(title: input.title, text: input.summary)
                let observations = JunctionLearner.observations(message, road: input.road, position: input.position, segment: input.segment, origin: "feed")
                var conflict = PositionCheck.check(observations, message: message, road: input.road, position: input.position,
                                                   segment: input.segment, known: known)
                conflict?.id = input.externalID
                out.append(Checked(input: input, observations: conflict == nil ? observations : [], conflict: conflict))
            }
            checked.withLockedValue { $0 += out }
        }
    }

    /// Waits for the parsing and returns every message's outcome (in no particular order).
    package func results() -> [Checked] {
        if !batch.isEmpty { dispatch() }
        parsing.finish()
        return checked.withLockedValue { $0 }
    }

    /// The observer under which a message's estimates are filed.
    package static func observer(source: String, externalID: String) -> String {
        var hash = StableHash()
        hash.combine(source)
        hash.combine(externalID)
        return "entry:" + hash.hex
    }

    /// The incident with its position and segment given the other way round (a conflict that
    /// found latitude and longitude swapped), with a note saying so.
    package static func swapped(_ incident: Incident, conflict: PositionConflict) -> Incident? {
        guard let p = incident.position else { return nil }
        var incident = incident
        incident.position = Coordinate(latitude: p.longitude, longitude: p.latitude)
        incident.segment = incident.segment?.map { Coordinate(latitude: $0.longitude, longitude: $0.latitude) }
        incident.properties["position_note"] = "latitude and longitude swapped: the feed's reading lay \(Int(conflict.distanceKm.rounded())) km from \(conflict.junction)"
        return incident
    }
}
