import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles

/// Turns a positioned message into estimates of where its junctions are, by undoing the
/// kilometre offsets along the direction of travel.
///
/// The Autobahn API's `extent` runs from the incident's start to its end in the direction of
/// travel, and its `coordinate` is the start. "zwischen 0.2 km hinter AS X und 0.5 km vor AS Y"
/// puts X 0.2 km before the start and Y 0.5 km past the end:
///
///     JunctionLearner.observations(message, position: start, segment: [start, end], origin: "feed")
///
/// Without a segment (a GeoRSS point) the direction is unknown: only a junction the message puts
/// at the position is learned — "0.2 km hinter AS X" (offset ≤ 0.5 km) or "bei AS X" — never the
/// ends of "zwischen X und Y", which may lie kilometres from a point somewhere between them.
public enum JunctionLearner {
    /// Offsets larger than this are not undone (the road bends; the estimate would be poor).
    static let maxOffsetKm = 15.0
    /// Undirected estimates are taken only this close to the position.
    static let maxUndirectedOffsetKm = 0.5

    public static func observations(_ message: TrafficMessage, road: String?, position: Coordinate, segment: [Coordinate]?,
                                    origin: String) -> [JunctionObservation] {
        guard let road = message.road ?? road, !road.isEmpty else { return [] }
        let start = position
        let end = segment?.last
        var travel: Double?
        if let end, Geodesic.distance(from: start, to: end) > 50 {
            travel = Geodesic.inverse(from: start, to: end).bearing
        }
        var out: [JunctionObservation] = []
        func add(_ mention: JunctionMention, at anchor: Coordinate) {
            let name = mention.osmStyleName
            let km = mention.offsetKm ?? 0
            var place = anchor
            if travel == nil, mention.offsetKm == nil, !(mention.relation == .at && message.to == nil) { return }
            if km > 0 {
                guard km <= maxOffsetKm else { return }
                if let travel {
                    // "vor X": X lies ahead of the anchor; "hinter X": behind it.
                    let ahead = mention.relation == .before
                    place = Geodesic.direct(from: anchor, bearing: ahead ? travel : travel + 180, distance: km * 1000)
                } else if km > maxUndirectedOffsetKm {
                    return
                }
            }
            let observation = JunctionObservation(road: road, name: name, kind: JunctionName.kind(of: name, fallback: mention.kind),
                                                  coordinate: place, origin: origin)
            if !observation.key.isEmpty { out.append(observation) }
        }
        if let from = message.from { add(from, at: start) }
        if let to = message.to {
            // The second junction hangs on the end of the stretch; a point-only message has none.
            if let end, travel != nil { add(to, at: end) }
            else if message.from == nil { add(to, at: start) }
        }
        // Two names for one place ("Forst - Forst"): keep the first.
        var seen = Set<String>()
        return out.filter { seen.insert($0.key).inserted }
    }

    /// The robust position of one junction from its observations: the coordinate-wise median,
    /// then the median again over the observations within reach of it, so that a few far-off
    /// estimates (a wrong extent, a namesake) neither move it nor widen its spread.
    public static func aggregate(_ observations: [JunctionObservation]) -> KnownJunction? {
        guard let first = observations.first else { return nil }
        func median(_ values: [Double]) -> Double {
            let s = values.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        func centre(_ obs: [JunctionObservation]) -> Coordinate {
            Coordinate(latitude: median(obs.map(\.coordinate.latitude)), longitude: median(obs.map(\.coordinate.longitude)))
        }
        var c = centre(observations)
        var kept = observations
        if observations.count >= 3 {
            let distances = observations.map { Geodesic.distance(from: c, to: $0.coordinate) }
            let reach = max(2_000, 3 * median(distances))
            kept = zip(observations, distances).filter { $0.1 <= reach }.map(\.0)
            if kept.isEmpty { kept = observations }
            c = centre(kept)
        }
        let spread = median(kept.map { Geodesic.distance(from: c, to: $0.coordinate) })
        var kinds: [JunctionMention.Kind: Int] = [:]
        var origins: [String: Int] = [:]
        for o in kept {
            if o.kind != .unspecified { kinds[o.kind, default: 0] += 1 }
            origins[o.origin, default: 0] += 1
        }
        let kind = kinds.max { $0.value < $1.value || ($0.value == $1.value && $0.key.rawValue > $1.key.rawValue) }?.key ?? .unspecified
        let origin = origins.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? first.origin
        return KnownJunction(road: first.road, name: first.name, kind: kind, coordinate: c, support: kept.count,
                             spreadMeters: (spread * 10).rounded() / 10, learnedFrom: origin)
    }
}

/// What learning from an ingest found.
public struct JunctionLearning: Sendable, Equatable {
    /// Junction positions learned.
    public var observations = 0
    /// Feed positions far from where their own junctions are known to be (not learned from).
    public var conflicts: [PositionConflict] = []
    public init() {}
}

/// A feed position its own words contradict: the junction it names is well known, and the
/// position lies far from it.
public struct PositionConflict: Sendable, Equatable, CustomStringConvertible {
    /// The feed's id of the entry.
    public var id: String
    public var junction: String
    public var distanceKm: Double
    /// Latitude and longitude were swapped, which put it where its junction is.
    public var swapped: Bool

    public var description: String {
        swapped
            ? "entry \(id): latitude and longitude swapped (as given it lay \(Int(distanceKm.rounded())) km from \(junction), which it names)"
            : "entry \(id): its position lies \(Int(distanceKm.rounded())) km from \(junction), which it names (kept as given, not learned from)"
    }
}

/// Checks a feed position against the junctions its message names.
package enum PositionCheck {
    /// Farther than this from a well-attested junction it names, a position is in conflict.
    static let conflictDistance = 25_000.0
    /// A swapped reading must land this close to the junction to be taken.
    static let swapFit = 5_000.0

    package static func check(_ observations: [JunctionObservation], message: TrafficMessage, road: String?, position: Coordinate,
                      segment: [Coordinate]?, known: [String: KnownJunction]) -> PositionConflict? {
        func nearestKnown(_ obs: [JunctionObservation]) -> (KnownJunction, Double)? {
            obs.compactMap { o -> (KnownJunction, Double)? in
                guard let k = known[o.road + "\u{1F}" + o.key], k.isWellAttested else { return nil }
                return (k, Geodesic.distance(from: o.coordinate, to: k.coordinate))
            }.min { $0.1 < $1.1 }
        }
        guard let (junction, distance) = nearestKnown(observations), distance > conflictDistance else { return nil }
        var conflict = PositionConflict(id: "", junction: junction.name, distanceKm: distance / 1000, swapped: false)
        if let swapped = try? Coordinate(validatingLatitude: position.longitude, longitude: position.latitude) {
            let swappedSegment = segment?.map { Coordinate(latitude: $0.longitude, longitude: $0.latitude) }
            let again = JunctionLearner.observations(message, road: road, position: swapped, segment: swappedSegment, origin: "feed")
            if let (_, d) = nearestKnown(again), d <= swapFit { conflict.swapped = true }
        }
        return conflict
    }
}
