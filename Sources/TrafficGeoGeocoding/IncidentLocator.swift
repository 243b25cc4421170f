import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// A position found for an incident from its words.
public struct LocatedPosition: Sendable, Equatable {
    public var position: Coordinate
    /// From the first junction (moved by its offset) to the second, when both resolved.
    public var segment: [Coordinate]?
    public var precision: GeocodePrecision
    /// 0…1: how sure the resolution is (junction pairs that fit together score high).
    public var confidence: Double
    public var provider: String
    /// The questions asked, in order, for the record.
    public var queries: [String]
}

/// Turns a traffic message into a position: parses the title and text, asks the geocoder for the
/// junctions and route ends, and picks the candidates that fit together.
///
/// Germany has three places called Krombach; the A4's is a village of Kreuztal beside Wenden. The
/// locator resolves the junctions jointly: the pair of candidates that lie close together, near the
/// line between the route ends, wins. "2.0 km hinter AS X" on the way to Y is 2.0 km from X
/// towards Y.
///
///     let locator = IncidentLocator(service: service)
///     let found = try await locator.locate(title: "A4 : Koeln - Olpe", text: "Zwischen AS Wenden und AS Krombach ...")
public struct IncidentLocator: Sendable {
    public let service: GeocodingService
    /// Where to search (ISO codes); Autobahn feeds are German, route ends may lie abroad.
    public var countryCodes: [String] = ["de"]
    /// Candidates considered per name.
    public var candidatesPerName = 8

    /// Junctions further apart than this are not a pair (the longest stretches between exits).
    static let maxPairDistance = 60_000.0

    public init(service: GeocodingService) { self.service = service }

    public func locate(title: String, text: String?) async throws -> LocatedPosition? {
        try await locate(TrafficMessageParser.parse(title: title, text: text))
    }

    public func locate(_ message: TrafficMessage) async throws -> LocatedPosition? {
        var queries: [String] = []
        var provider = ""

        // Route ends anchor the search: big places, the most populous match wins.
        var anchors: [Coordinate?] = []
        for end in message.routeEnds.prefix(2) {
            let found = try await candidates(for: end, purpose: .place, queries: &queries, provider: &provider)
            anchors.append(found.first?.coordinate)
        }
        var from: [GeocodeCandidate] = [], to: [GeocodeCandidate] = [], comingFrom: [GeocodeCandidate] = []
        if let j = message.from { from = try await junctionCandidates(j, queries: &queries, provider: &provider) }
        if let j = message.to { to = try await junctionCandidates(j, queries: &queries, provider: &provider) }
        if let name = message.comingFrom {
            // "aus Richtung X" names the previous junction.
            comingFrom = try await junctionCandidates(JunctionMention(name: name, kind: .unspecified), queries: &queries, provider: &provider)
        }

        let corridor = Corridor(anchors: anchors.compactMap { $0 })
        guard let choice = choose(from: from, to: to, corridor: corridor) else {
            // No junction resolved: the route alone says roughly which road.
            let resolved = anchors.compactMap { $0 }
            guard resolved.count == 2, Geodesic.distance(from: resolved[0], to: resolved[1]) < 250_000 else { return nil }
            let (d, bearing) = Geodesic.inverse(from: resolved[0], to: resolved[1])
            return LocatedPosition(position: Geodesic.direct(from: resolved[0], bearing: bearing, distance: d / 2), segment: nil,
                                   precision: .road, confidence: 0.15, provider: provider, queries: queries)
        }

        let a = choice.from.coordinate
        var position = a
        var segment: [Coordinate]?
        if let fromMention = message.from, let km = fromMention.offsetKm, km > 0 {
            // The direction the offset points: to the second junction; "vor X, aus Richtung Y" back towards Y.
            let target: Coordinate?
            switch fromMention.relation {
            case .after, .at:
                target = choice.to?.coordinate
                    ?? (message.isDirected && anchors.count == 2 ? anchors[1] : nil)
            case .before:
                target = nearest(comingFrom.map(\.coordinate), to: a)
                    ?? (message.isDirected ? anchors.first ?? nil : nil)
            }
            if let target {
                let (d, bearing) = Geodesic.inverse(from: a, to: target)
                position = Geodesic.direct(from: a, bearing: bearing, distance: min(km * 1000, d))
            }
        }
        if let b = choice.to?.coordinate {
            var end = b
            if let km = message.to?.offsetKm, km > 0 {
                let (d, bearing) = Geodesic.inverse(from: b, to: a)
                end = Geodesic.direct(from: b, bearing: bearing, distance: min(km * 1000, d))
            }
            if Geodesic.distance(from: position, to: end) > 1 { segment = [position, end] }
        }
        let precision: GeocodePrecision = choice.from.kind == .junction ? .junction : .town
        var confidence = precision == .junction ? 0.9 : 0.6
        confidence *= choice.to != nil ? 1 : (message.to == nil ? 0.9 : 0.7)   // a second junction that did not fit lowers it
        confidence *= min(1, max(0.3, 1 - choice.cost / 4))
        return LocatedPosition(position: position, segment: segment, precision: precision,
                               confidence: (confidence * 100).rounded() / 100, provider: choice.from.provider ?? provider, queries: queries)
    }

    // MARK: - Candidates

    /// Junction candidates: junctions of that name if the geocoder knows junctions, else places.
    /// A junction is often mapped under part of the message's name ("Heidelberg/Dossenheim" is
    /// "Dossenheim" in OpenStreetMap), so up to two shorter spellings are tried before places.
    func junctionCandidates(_ j: JunctionMention, queries: inout [String], provider: inout String) async throws -> [GeocodeCandidate] {
        let variants = [(j.osmStyleName, 1.0)] + NameVariants.of(j.name).filter { TextFolding.fold($0.name) != TextFolding.fold(j.osmStyleName) }
        var towns: [GeocodeCandidate] = []
        for (variant, _) in variants.prefix(3) {
            let found = try await candidates(for: variant, purpose: .junction, queries: &queries, provider: &provider)
            let wanted = Set([TextFolding.fold(variant), TextFolding.fold(j.name), TextFolding.fold(j.osmStyleName)])
            let matching = found.filter { $0.kind == .junction && wanted.contains(TextFolding.fold($0.name)) }
            if !matching.isEmpty { return matching }
            if towns.isEmpty { towns = found.filter { $0.kind == .town } }
        }
        if !towns.isEmpty { return towns }
        return try await candidates(for: j.name, purpose: .place, queries: &queries, provider: &provider).filter { $0.kind != .road }
    }

    func candidates(for name: String, purpose: GeocodeQuery.Purpose, queries: inout [String],
                            provider: inout String) async throws -> [GeocodeCandidate] {
        let query = GeocodeQuery(name, purpose: purpose, countryCodes: purpose == .place ? [] : countryCodes, limit: candidatesPerName)
        queries.append("\(purpose.rawValue):\(name)")
        let answer = try await service.search(query)
        if !answer.candidates.isEmpty, provider.isEmpty { provider = answer.provider }
        return answer.candidates
    }

    // MARK: - Joint choice

    struct Choice {
        var from: GeocodeCandidate
        var to: GeocodeCandidate?
        var cost: Double
    }

    /// The pair (or, failing that, the single candidate) with the lowest cost: junctions close
    /// together, near the route's corridor, big places preferred among equals.
    func choose(from: [GeocodeCandidate], to: [GeocodeCandidate], corridor: Corridor) -> Choice? {
        func own(_ c: GeocodeCandidate) -> Double {
            var cost = corridor.penalty(c.coordinate)
            if c.kind == .junction { cost -= 0.3 }
            if let p = c.population { cost -= min(0.3, log10(Double(max(p, 1))) / 20) }
            return cost
        }
        var best: Choice?
        for a in from.prefix(candidatesPerName) {
            for b in to.prefix(candidatesPerName) {
                let d = Geodesic.distance(from: a.coordinate, to: b.coordinate)
                guard d <= Self.maxPairDistance else { continue }
                let cost = own(a) + own(b) + max(0, d - 20_000) / 20_000
                if best == nil || cost < best!.cost { best = Choice(from: a, to: b, cost: cost) }
            }
        }
        if let best { return best }
        // No pair fits: the best single junction, the first if it resolved, else the second.
        let singles = (from.isEmpty ? to : from).prefix(candidatesPerName)
        return singles.map { Choice(from: $0, to: nil, cost: own($0) + 0.5) }.min { $0.cost < $1.cost }
    }

    private func nearest(_ points: [Coordinate], to c: Coordinate) -> Coordinate? {
        points.filter { Geodesic.distance(from: $0, to: c) < Self.maxPairDistance }
            .min { Geodesic.distance(from: $0, to: c) < Geodesic.distance(from: $1, to: c) }
    }
}

/// The stretch between the route ends: a candidate off this corridor is unlikely on the road.
struct Corridor {
    var anchors: [Coordinate]

    /// 0 on the straight line between two anchors, growing with the detour; with one anchor, the
    /// distance from it counts mildly; without anchors, nothing.
    func penalty(_ c: Coordinate) -> Double {
        switch anchors.count {
        case 0: return 0
        case 1: return Geodesic.distance(from: anchors[0], to: c) / 300_000
        default:
            let direct = Geodesic.distance(from: anchors[0], to: anchors[1])
            let detour = Geodesic.distance(from: anchors[0], to: c) + Geodesic.distance(from: c, to: anchors[1]) - direct
            return detour / 40_000
        }
    }
}
