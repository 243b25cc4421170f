import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// The junction names of one road's messages, their candidates and the neighbour pairs.
struct RoadGraph {
    enum Evidence: Equatable {
        case known(wellAttested: Bool)
        case geocoderJunction
        case town
        case interpolated
        case none

        var precision: GeocodePrecision {
            switch self {
            case .known, .geocoderJunction: .junction
            case .town: .town
            case .interpolated, .none: .road
            }
        }
    }

    struct Candidate {
        var coordinate: Coordinate
        var kind: PlaceKind
        var population: Int
        var known: KnownJunction?
        var provider: String?

        init(known: KnownJunction) {
            coordinate = known.coordinate
            kind = .junction
            population = 0
            self.known = known
            provider = "store:" + known.learnedFrom
        }

        init(geocoded c: GeocodeCandidate, provider: String) {
            coordinate = c.coordinate
            kind = c.kind
            population = c.population ?? 0
            self.provider = c.provider ?? provider
        }
    }

    struct Node {
        var index: Int
        var key: String
        var mention: JunctionMention
        var candidates: [Candidate] = []
        var fixed = false
        var chosen: Int?
        var position: Coordinate?
        var evidence = Evidence.none
        /// Has a neighbour within a few km: the choice is corroborated by the road.
        var corroborated = false
        var queries: [String] = []
        var provider: String?
        var error: GeocodingError?
        /// The routes (pairs of direction places, indices into `destinations`) of the messages
        /// that name it: the road runs from one to the other through this junction.
        var routes: Set<[Int]> = []

        var baseConfidence: Double {
            switch evidence {
            case let .known(well): return well ? 0.95 : 0.8
            case .geocoderJunction: return corroborated ? 0.9 : 0.75
            case .town: return corroborated ? 0.65 : (candidates.count > 1 ? 0.4 : 0.5)
            case .interpolated: return 0.3
            case .none: return 0
            }
        }
    }

    struct Destination {
        var name: String
        var coordinate: Coordinate?
    }

    var nodes: [Node] = []
    private var byKey: [String: Int] = [:]
    /// (node, node) → number of messages naming them as a pair.
    var edges: [Int: [Int: Double]] = [:]
    var destinations: [Destination] = []
    private var destinationByKey: [String: Int] = [:]

    mutating func add(_ message: TrafficMessage) {
        let from = message.from.map { addNode($0) }
        let to = message.to.map { addNode($0) }
        let previous = message.comingFrom.map { addNode(JunctionMention(name: $0, kind: .unspecified)) }
        if let from, let to, from != to { link(from, to) }
        if let previous, let from, previous != from { link(previous, from) }
        var ends: [Int] = []
        for end in message.routeEnds {
            let key = TextFolding.fold(end)
            if destinationByKey[key] == nil {
                destinationByKey[key] = destinations.count
                destinations.append(Destination(name: end))
            }
            ends.append(destinationByKey[key]!)
        }
        if ends.count == 2, ends[0] != ends[1] {
            for i in [from, to, previous].compactMap({ $0 }) { nodes[i].routes.insert(ends.sorted()) }
        }
    }

    private mutating func addNode(_ mention: JunctionMention) -> Int {
        let key = JunctionName.key(mention.osmStyleName)
        if let i = byKey[key] {
            // A later mention may say the kind the first one did not.
            if nodes[i].mention.kind == .unspecified, mention.kind != .unspecified {
                nodes[i].mention.kind = mention.kind
                nodes[i].mention.name = mention.name
            }
            return i
        }
        byKey[key] = nodes.count
        nodes.append(Node(index: nodes.count, key: key, mention: JunctionMention(name: mention.name, kind: mention.kind)))
        return nodes.count - 1
    }

    private mutating func link(_ a: Int, _ b: Int) {
        edges[a, default: [:]][b, default: 0] += 1
        edges[b, default: [:]][a, default: 0] += 1
    }

    func node(for mention: JunctionMention) -> Node? {
        byKey[JunctionName.key(mention.osmStyleName)].map { nodes[$0] }
    }

    func node(forName name: String) -> Node? {
        byKey[JunctionName.key(name)].map { nodes[$0] }
    }

    func destination(_ name: String) -> Coordinate? {
        destinationByKey[TextFolding.fold(name)].flatMap { destinations[$0].coordinate }
    }

    func hasPlacedNeighbour(_ i: Int, within distance: Double) -> Bool {
        guard let p = nodes[i].position else { return false }
        return (edges[i] ?? [:]).keys.contains { j in nodes[j].position.map { Geodesic.distance(from: p, to: $0) <= distance } ?? false }
    }

    // MARK: Costs

    /// Neighbours further apart than a typical stretch cost more, up to a cap, so that one wrong
    /// neighbour cannot drag a node away.
    static func pairCost(_ d: Double) -> Double {
        min(4, max(0, d - RoadResolver.neighbourSlack) / RoadResolver.neighbourSlack)
    }

    /// How much longer than allowed the way over `c` is between the ends of the node's best
    /// fitting route (negative: within). A road from A to B through c is at most about a quarter
    /// longer than the straight line, plus some slack for short routes. Nil without routes.
    func routeExcess(_ i: Int, _ c: Coordinate) -> Double? {
        var best: Double?
        for route in nodes[i].routes {
            guard let a = destinations[route[0]].coordinate, let b = destinations[route[1]].coordinate else { continue }
            let direct = Geodesic.distance(from: a, to: b)
            let detour = Geodesic.distance(from: a, to: c) + Geodesic.distance(from: c, to: b) - direct
            let excess = detour - (RoadResolver.routeSlack + RoadResolver.routeDetourShare * direct)
            if best == nil || excess < best! { best = excess }
        }
        return best
    }

    /// Off the road's known positions, or off the node's routes: the cost of being there.
    func placePenalty(_ i: Int, _ c: Coordinate, context: RoadContext) -> Double {
        var cost = context.penalty(c)
        if let excess = routeExcess(i, c) { cost += min(4, max(0, excess) / 20_000) }
        return cost
    }

    /// Without neighbours to vouch for it, a candidate must lie near the road's known positions,
    /// or, where none are known, on the way between its messages' direction places.
    func isPlausible(_ i: Int, _ c: Coordinate, context: RoadContext) -> Bool {
        if context.hasPositions { return (context.distanceToRoad(c) ?? .infinity) <= RoadResolver.maxOffRoad }
        if let excess = routeExcess(i, c) { return excess <= RoadResolver.maxRouteExcess }
        return true
    }

    func unary(_ i: Int, _ c: Candidate, context: RoadContext) -> Double {
        var cost = placePenalty(i, c.coordinate, context: context)
        if c.known != nil { cost -= 0.6 } else if c.kind == .junction { cost -= 0.3 }
        if c.population > 0 { cost -= min(0.3, log10(Double(c.population)) / 20) }
        return cost
    }

    // MARK: Joint choice

    /// Iterated conditional modes from an optimistic start: each node first takes the candidate
    /// whose neighbours could lie closest, then, in turns, the best given its neighbours' choices.
    mutating func choose(context: RoadContext) {
        let unaries = nodes.map { n in n.candidates.map { unary(n.index, $0, context: context) } }
        for i in nodes.indices where !nodes[i].candidates.isEmpty {
            var best = (cost: Double.infinity, index: 0)
            for (ci, c) in nodes[i].candidates.enumerated() {
                var cost = unaries[i][ci]
                for (j, w) in edges[i] ?? [:] where !nodes[j].candidates.isEmpty {
                    cost += w * nodes[j].candidates.map { Self.pairCost(Geodesic.distance(from: c.coordinate, to: $0.coordinate)) }.min()!
                }
                if cost < best.cost { best = (cost, ci) }
            }
            nodes[i].chosen = best.index
        }
        for _ in 0..<6 {
            var changed = false
            for i in nodes.indices where nodes[i].candidates.count > 1 {
                var best = (cost: Double.infinity, index: nodes[i].chosen ?? 0)
                for (ci, c) in nodes[i].candidates.enumerated() {
                    var cost = unaries[i][ci]
                    for (j, w) in edges[i] ?? [:] {
                        guard let cj = nodes[j].chosen else { continue }
                        cost += w * Self.pairCost(Geodesic.distance(from: c.coordinate, to: nodes[j].candidates[cj].coordinate))
                    }
                    if cost < best.cost - 1e-9 { best = (cost, ci) }
                }
                if best.index != nodes[i].chosen { nodes[i].chosen = best.index; changed = true }
            }
            if !changed { break }
        }
        for i in nodes.indices {
            guard let ci = nodes[i].chosen else { continue }
            let c = nodes[i].candidates[ci]
            nodes[i].position = c.coordinate
            if let known = c.known {
                nodes[i].evidence = .known(wellAttested: known.isWellAttested && nodes[i].fixed)
                nodes[i].provider = c.provider
            } else {
                nodes[i].evidence = c.kind == .junction ? .geocoderJunction : .town
            }
        }
    }

    /// Drops chosen candidates that nothing around them supports. First where the road is known
    /// to run: a candidate off it stays only if a neighbour that is on it lies close by. Then
    /// between neighbours: a node far from all its placed neighbours is dropped, the least
    /// plausible first (furthest off the road, then the most ambiguous name), so that of two
    /// neighbours that do not fit together the better one stays.
    mutating func dropImplausible(context: RoadContext) {
        let movable = nodes.indices.filter { !nodes[$0].fixed && nodes[$0].position != nil }
        let suspect = Set(movable.filter { !isPlausible($0, nodes[$0].position!, context: context) })
        for i in suspect {
            let p = nodes[i].position!
            let vouched = (edges[i] ?? [:]).keys.contains { j in
                !suspect.contains(j) && nodes[j].position.map { Geodesic.distance(from: p, to: $0) <= 15_000 } ?? false
            }
            if !vouched { drop(i) }
        }
        let order = movable.filter { nodes[$0].position != nil }.sorted { a, b in
            let pa = placePenalty(a, nodes[a].position!, context: context), pb = placePenalty(b, nodes[b].position!, context: context)
            return pa != pb ? pa > pb : nodes[a].candidates.count > nodes[b].candidates.count
        }
        for i in order {
            guard let p = nodes[i].position else { continue }
            let nearest = (edges[i] ?? [:]).keys.compactMap { nodes[$0].position }.map { Geodesic.distance(from: p, to: $0) }.min()
            if let nearest, nearest > RoadResolver.maxNeighbourDistance, !context.isOnRoad(p) { drop(i) }
        }
        for i in nodes.indices {
            guard let p = nodes[i].position else { continue }
            nodes[i].corroborated = (edges[i] ?? [:]).keys.contains { j in
                nodes[j].position.map { Geodesic.distance(from: p, to: $0) <= 15_000 } ?? false
            }
        }
    }

    private mutating func drop(_ i: Int) {
        nodes[i].position = nil
        nodes[i].chosen = nil
        nodes[i].evidence = .none
        nodes[i].corroborated = false
    }

    /// A name no candidate fits is put where its placed neighbours are (the middle of them).
    mutating func interpolateUnknown() {
        for _ in 0..<2 {
            var updates: [(Int, Coordinate)] = []
            for i in nodes.indices where nodes[i].position == nil {
                let neighbours = (edges[i] ?? [:]).keys.filter { nodes[$0].position != nil && nodes[$0].evidence != .interpolated }
                    .map { nodes[$0].position! }
                guard !neighbours.isEmpty else { continue }
                // Neighbours far apart do not bracket one junction: take the first only.
                let spread = neighbours.dropFirst().map { Geodesic.distance(from: neighbours[0], to: $0) }.max() ?? 0
                let used = spread <= 60_000 ? neighbours : [neighbours[0]]
                let lat = used.map(\.latitude).reduce(0, +) / Double(used.count)
                let lon = used.map(\.longitude).reduce(0, +) / Double(used.count)
                updates.append((i, Coordinate(latitude: lat, longitude: lon)))
            }
            for (i, c) in updates {
                nodes[i].position = c
                nodes[i].evidence = .interpolated
            }
            if updates.isEmpty { break }
        }
    }
}
