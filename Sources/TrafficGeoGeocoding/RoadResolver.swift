import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles

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
                        return (index, [], queries, provider, .connection(provider: provider, detail: String(describing: error), underlying: error))
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
