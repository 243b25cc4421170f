import Foundation

/// What the store knows of one road when its messages are geocoded.
public struct RoadKnowledge: Sendable {
    /// The road's learned junctions, by `JunctionName.key`.
    public var junctions: [String: KnownJunction] = [:]
    /// Junctions known without a road (an OSM import) or on other roads (an interchange belongs to
    /// two), by key: candidates, not answers.
    public var elsewhere: [String: [KnownJunction]] = [:]
    /// Positions feeds gave for the road's incidents: where the road runs.
    public var positions: [Coordinate] = []

    public init() {}

    /// Splits the store's junctions into what `road` knows and what is known elsewhere.
    public init(road: String, junctions: [KnownJunction], positions: [Coordinate]) {
        for j in junctions {
            if j.road == road { self.junctions[j.key] = j } else { elsewhere[j.key, default: []].append(j) }
        }
        self.positions = positions
    }
}

/// Geocodes the messages of one road together, the way map matching picks a path.
///
/// Each junction name of the road is one node; the "X - Y" pairs of the messages are edges
/// (neighbours on the road lie close together). A node the store already knows is fixed; the
/// others get candidates from the geocoder chain, and the candidates of all nodes are chosen
/// jointly so that neighbours stay close, near where the road is known to run (its learned
/// junctions, its positioned incidents, the direction signs' places). A candidate far from all of
/// that is dropped — a wrong position is worse than none — and a name nobody knows is placed
/// between its known neighbours.
///
///     let resolver = RoadResolver(locator: IncidentLocator(service: service))
///     let outcome = await resolver.resolve(road: "A4", items: items, knowledge: knowledge)
public struct RoadResolver: Sendable {
    public let locator: IncidentLocator
    /// Requests for candidates in flight at once (the HTTP policy still limits the rate).
    public var concurrency = 8

    public init(locator: IncidentLocator) { self.locator = locator }

    public struct Item: Sendable {
        public var id: Int64
        public var message: TrafficMessage
        public init(id: Int64, message: TrafficMessage) { self.id = id; self.message = message }
    }

    public struct Outcome: Sendable {
        public var results: [Int64: Result<LocatedPosition?, GeocodingError>] = [:]
        /// Junction answers of geocoders that fit the road: knowledge for the store.
        public var learned: [JunctionObservation] = []
    }

    // MARK: - Tuning (set on roads of ../shared/data folds other than those reported; docs/geocoding.md)

    /// Neighbouring names further apart than this cost more (typical exits are 2–15 km apart).
    static let neighbourSlack = 15_000.0
    /// A chosen town farther than this from every placed neighbour is implausible.
    static let maxNeighbourDistance = 40_000.0
    /// A candidate farther than this from everything known of the road is implausible.
    static let maxOffRoad = 25_000.0
    /// The way from one direction place to the other over a junction is at most this much longer
    /// than the straight line (plus the share below) before it costs.
    static let routeSlack = 15_000.0
    static let routeDetourShare = 0.25
    /// Past that allowance by more than this, a candidate is implausible.
    static let maxRouteExcess = 25_000.0

    // MARK: - Resolution

    public func resolve(road: String, items: [Item], knowledge: RoadKnowledge) async -> Outcome {
        var graph = RoadGraph()
        for item in items { graph.add(item.message) }
        await fetchCandidates(&graph, knowledge: knowledge)
        let context = RoadContext(positions: knowledge.positions + knowledge.junctions.values.map(\.coordinate))
        graph.choose(context: context)
        graph.dropImplausible(context: context)
        graph.interpolateUnknown()

        var outcome = Outcome()
        for item in items {
            outcome.results[item.id] = place(item.message, graph: graph)
        }
        for node in graph.nodes where node.evidence == .geocoderJunction {
            guard let c = node.position, graph.hasPlacedNeighbour(node.index, within: 30_000) else { continue }
            outcome.learned.append(JunctionObservation(road: road, name: node.mention.osmStyleName, kind: node.mention.kind,
                                                       coordinate: c, origin: "geocoder:\(node.provider ?? "?")"))
        }
        return outcome
    }

    /// Candidates for every node the road does not know, and the direction places.
    private func fetchCandidates(_ graph: inout RoadGraph, knowledge: RoadKnowledge) async {
        var toAsk: [Int] = []
        for i in graph.nodes.indices {
            let key = graph.nodes[i].key
            if let known = knowledge.junctions[key] {
                graph.nodes[i].candidates = [RoadGraph.Candidate(known: known)]
                graph.nodes[i].fixed = true
            } else {
                graph.nodes[i].candidates = (knowledge.elsewhere[key] ?? []).map(RoadGraph.Candidate.init(known:))
                toAsk.append(i)
            }
        }
        let locator = self.locator
        typealias Answer = (index: Int, candidates: [GeocodeCandidate], queries: [String], provider: String, error: GeocodingError?)
        let mentions = toAsk.map { (index: $0, mention: graph.nodes[$0].mention) }
        let answers: [Answer] = await withTaskGroup(of: Answer.self) { group in
            var next = mentions.makeIterator()
            func addNext() -> Bool {
                guard let (index, mention) = next.next() else { return false }
                group.addTask {
                    var queries: [String] = [], provider = ""
                    do {
                        let found = try await locator.junctionCandidates(mention, queries: &queries, provider: &provider)
                        return (index, found, queries, provider, nil)
                    } catch let error as GeocodingError {
                        return (index, [], queries, provider, error)
                    } catch {
                        return (index, [], queries, provider, .connection(provider: provider, detail: String(describing: error)))
                    }
                }
                return true
            }
            for _ in 0..<max(1, concurrency) where !addNext() { break }
            var all: [Answer] = []
            while let answer = await group.next() {
                all.append(answer)
                _ = addNext()
            }
            return all
        }
        for a in answers {
            graph.nodes[a.index].candidates += a.candidates.prefix(locator.candidatesPerName).map { RoadGraph.Candidate(geocoded: $0, provider: a.provider) }
            graph.nodes[a.index].queries = a.queries
            graph.nodes[a.index].error = a.error
            graph.nodes[a.index].provider = a.provider.isEmpty ? nil : a.provider
        }
        // Direction places ("A6: Heilbronn -> Nürnberg"): big places, the most populous answer.
        for i in graph.destinations.indices {
            var queries: [String] = [], provider = ""
            let name = graph.destinations[i].name
            if let found = try? await locator.candidates(for: name, purpose: .place, queries: &queries, provider: &provider) {
                graph.destinations[i].coordinate = found.first(where: { $0.kind == .town })?.coordinate ?? found.first?.coordinate
            }
        }
    }

    // MARK: - Placing one message

    private func place(_ message: TrafficMessage, graph: RoadGraph) -> Result<LocatedPosition?, GeocodingError> {
        let fromNode = message.from.flatMap { graph.node(for: $0) }
        let toNode = message.to.flatMap { graph.node(for: $0) }
        let queries = [fromNode, toNode].compactMap { $0?.queries }.joined().map { $0 }
        let provider = fromNode?.provider ?? toNode?.provider ?? ""
        let a = fromNode?.position
        let b = toNode?.position
        let origin = message.isDirected && message.routeEnds.count == 2 ? graph.destination(message.routeEnds[0]) : nil
        let ahead = message.isDirected && message.routeEnds.count == 2 ? graph.destination(message.routeEnds[1]) : nil

        if let a, let fromNode, let from = message.from {
            var position = a
            if let km = from.offsetKm, km > 0 {
                // Where the offset points: the second junction; "vor X, aus Richtung Y" back
                // towards Y; without those, the direction of travel's next place.
                let target: Coordinate?
                switch from.relation {
                case .after, .at: target = b ?? ahead
                case .before:
                    target = message.comingFrom.flatMap { graph.node(forName: $0)?.position } ?? origin
                }
                if let target {
                    let (d, bearing) = Geodesic.inverse(from: a, to: target)
                    position = Geodesic.direct(from: a, bearing: bearing, distance: min(km * 1000, d))
                }
            }
            var segment: [Coordinate]?
            var pairFactor = message.to == nil ? 0.95 : 0.8
            if let b {
                let gap = Geodesic.distance(from: a, to: b)
                pairFactor = gap <= 30_000 ? 1 : 0.7
                var end = b
                if let km = message.to?.offsetKm, km > 0 {
                    let (d, bearing) = Geodesic.inverse(from: b, to: a)
                    end = Geodesic.direct(from: b, bearing: bearing, distance: min(km * 1000, d))
                }
                if Geodesic.distance(from: position, to: end) > 1 { segment = [position, end] }
            }
            return .success(LocatedPosition(position: position, segment: segment, precision: fromNode.evidence.precision,
                                            confidence: Self.rounded(fromNode.baseConfidence * pairFactor),
                                            provider: fromNode.provider ?? provider, queries: queries))
        }
        if let b, let toNode {
            // The first junction is unknown: the stretch ends before the second one.
            var position = b
            if let km = message.to?.offsetKm, km > 0, let back = origin {
                let (d, bearing) = Geodesic.inverse(from: b, to: back)
                position = Geodesic.direct(from: b, bearing: bearing, distance: min(km * 1000, d))
            }
            return .success(LocatedPosition(position: position, segment: nil, precision: toNode.evidence == .interpolated ? .road : .town,
                                            confidence: Self.rounded(toNode.baseConfidence * 0.6),
                                            provider: toNode.provider ?? provider, queries: queries))
        }
        if let error = fromNode?.error ?? toNode?.error { return .failure(error) }
        if message.from == nil, message.to == nil, message.routeEnds.count == 2, !message.isDirected,
           let p = graph.destination(message.routeEnds[0]), let q = graph.destination(message.routeEnds[1]) {
            // Only the route ends of a short route: its middle is near enough to say which stretch.
            let (d, bearing) = Geodesic.inverse(from: p, to: q)
            if d <= 40_000 {
                return .success(LocatedPosition(position: Geodesic.direct(from: p, bearing: bearing, distance: d / 2), segment: nil,
                                                precision: .road, confidence: 0.15, provider: provider, queries: queries))
            }
        }
        return .success(nil)
    }

    static func rounded(_ c: Double) -> Double { (min(1, max(0, c)) * 100).rounded() / 100 }
}

// MARK: - The road's graph of names

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

/// Where the road is known to run: the positions of its incidents and junctions.
struct RoadContext {
    /// A grid of known positions (cells of ~0.1°) for nearest look-ups.
    private var cells: [Int64: [Coordinate]] = [:]
    let hasPositions: Bool

    init(positions: [Coordinate]) {
        for p in positions { cells[Self.cell(p), default: []].append(p) }
        hasPositions = positions.count >= 3
    }

    private static func cell(_ c: Coordinate) -> Int64 { cell(Int64((c.latitude * 10).rounded(.down)), Int64((c.longitude * 10).rounded(.down))) }
    private static func cell(_ a: Int64, _ b: Int64) -> Int64 { a &* 100_000 &+ b }

    /// The distance to the nearest known position of the road, if one lies within ~50 km.
    func distanceToRoad(_ c: Coordinate) -> Double? {
        guard hasPositions else { return nil }
        let a = Int64((c.latitude * 10).rounded(.down)), b = Int64((c.longitude * 10).rounded(.down))
        var best: Double?
        for da in -4...4 {
            for db in -7...7 {
                for p in cells[Self.cell(a + Int64(da), b + Int64(db))] ?? [] {
                    let d = Geodesic.distance(from: c, to: p)
                    if best == nil || d < best! { best = d }
                }
            }
        }
        return best
    }

    func penalty(_ c: Coordinate) -> Double {
        guard hasPositions else { return 0 }
        let d = distanceToRoad(c) ?? 60_000
        return min(5, max(0, d - 8_000) / 8_000)
    }

    func isOnRoad(_ c: Coordinate) -> Bool {
        hasPositions && (distanceToRoad(c) ?? .infinity) <= 5_000
    }
}
