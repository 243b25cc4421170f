import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore

/// One page of an items answer and how many incidents match in all.
struct ItemsPage: Sendable {
    var results: [QueryResult]
    var numberMatched: Int
}

/// Runs an `ItemsQuery` on the query engine: along a route (`route`), nearest (`nearest=k`),
/// within (`radius`), a box, or the whole collection; then the order and the page. Store order (by store id) is stable, so
/// walking the pages with `offset` visits every incident once.
enum ItemsSearch {
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    static func page(_ q: ItemsQuery, engine: QueryEngine) throws -> ItemsPage {
        let keep = q.offset + q.limit
        if let remainder = q.remainder { return try pageCheckingEach(q, remainder, engine: engine) }
        if let corridor = q.corridor {
            let met = try engine.along(corridor.course, buffer: corridor.buffer, filter: q.filter)
            let ordered = q.sort.map { QueryEngine.sort(met, by: $0) } ?? met
            return ItemsPage(results: slice(ordered, q), numberMatched: ordered.count)
        }
        if let reference = q.reference, let k = q.nearest {
            let found = try engine.nearest(to: reference, limit: k, maxDistance: q.radius, filter: q.filter)
            let ordered = q.sort.map { QueryEngine.sort(found, by: $0) } ?? found
            return ItemsPage(results: slice(ordered, q), numberMatched: ordered.count)
        }
        if let reference = q.reference, let radius = q.radius {
            var found: [QueryResult] = []
            try engine.within(radius: radius, of: reference, filter: q.filter) { r in
                if let box = q.bbox, let p = r.incident.position, !box.contains(p) { return }
                found.append(r)
            }
            let ordered = QueryEngine.sort(found, by: q.sort ?? .distance)
            return ItemsPage(results: slice(ordered, q), numberMatched: ordered.count)
        }
        // Distances from lat/lon over the whole collection: the nearest `keep` by the index,
        // counted in one pass.
        if let reference = q.reference, q.bbox == nil, (q.sort ?? .distance) == .distance {
            let count = try engine.store.count(filter: q.filter, locatedOnly: true)
            let found = keep > 0 ? try engine.nearest(to: reference, limit: min(keep, count), filter: q.filter) : []
            return ItemsPage(results: slice(found, q), numberMatched: count)
        }
        // Everything in store order: the store counts and pages (a whole-collection page of a
        // million incidents decoded them all: seconds a page).
        if q.bbox == nil, q.reference == nil, q.sort == nil {
            let count = try engine.store.count(filter: q.filter, locatedOnly: false)
            let page = q.offset < count ? try engine.store.all(filter: q.filter, locatedOnly: false, offset: q.offset, limit: q.limit) : []
            return ItemsPage(results: page, numberMatched: count)
        }
        // A box in store order or by distance from lat/lon (a map's view): the store's ids and
        // positions only, counted and ranked here; then only the page's incidents are read. A
        // national view of 100,000 incidents decoded every one of them to show 500: 1.7 s.
        if let box = q.bbox, (q.sort ?? .distance) == .distance {
            let inBox = try engine.session { try $0.boxNeighbours(box, filter: q.filter) }
            let ranked = q.reference.map { nearestFirst(inBox, from: $0, keep: keep) } ?? Array(inBox.prefix(keep))
            let page = q.offset < ranked.count ? Array(ranked[q.offset..<min(ranked.count, keep)]) : []
            let stored = try engine.store.incidents(ids: page.map(\.storeID))
            // One removed since the ranking (an ingest between the two reads) is left out of the page.
            let results = page.compactMap { n in stored[n.storeID].map { QueryResult(stored: $0).measured(from: q.reference) } }
            return ItemsPage(results: results, numberMatched: inBox.count)
        }
        // A box, or an order: stream in store order, keeping only what the page needs (the
        // first `keep`, or with an order the best `keep`, trimmed as it goes).
        var count = 0
        var kept: [QueryResult] = []
        let order: QuerySort? = q.sort ?? (q.reference != nil ? .distance : nil)
        func take(_ r: QueryResult) {
            count += 1
            let r = r.measured(from: q.reference)
            if let order {
                kept.append(r)
                if kept.count >= 2 * keep + 1024 { kept = Array(QueryEngine.sort(kept, by: order).prefix(keep)) }
            } else if count <= keep {
                kept.append(r)
            }
        }
        if let box = q.bbox {
            try engine.inBoundingBox(west: box.west, south: box.south, east: box.east, north: box.north, filter: q.filter, handle: take)
        } else {
            try engine.all(filter: q.filter, locatedOnly: false, handle: take)
        }
        if let order { kept = QueryEngine.sort(kept, by: order) }
        return ItemsPage(results: slice(kept, q), numberMatched: count)
    }

    /// A question with a part the store was not asked (a CQL2 filter's OR, NOT, LIKE, polygon):
    /// every incident the store answers for the rest is checked, then ordered and paged as the
    /// other paths do. Nearest without a radius checks the whole collection.
    @available(*, noasync, message: "blocks its thread: use it on a store thread")
    private static func pageCheckingEach(_ q: ItemsQuery, _ remainder: IncidentPredicate, engine: QueryEngine) throws -> ItemsPage {
        var found: [QueryResult] = []
        func take(_ r: QueryResult) {
            guard remainder.matches(r.stored) else { return }
            if let box = q.bbox, q.corridor != nil || q.reference != nil && q.radius != nil,
               let p = r.incident.position, !box.contains(p) { return }
            found.append(q.corridor == nil ? r.measured(from: q.reference) : r)
        }
        if let corridor = q.corridor {
            try engine.along(corridor.course, buffer: corridor.buffer, filter: q.filter).forEach(take)
        } else if let reference = q.reference, let radius = q.radius {
            try engine.within(radius: radius, of: reference, filter: q.filter, handle: take)
        } else if let box = q.bbox {
            try engine.inBoundingBox(box, filter: q.filter, handle: take)
        } else {
            try engine.all(filter: q.filter, locatedOnly: q.reference != nil, handle: take)
        }
        if q.nearest != nil || (q.reference != nil && q.corridor == nil && q.sort == nil) { found = QueryEngine.sort(found, by: .distance) }
        if let k = q.nearest { found = Array(found.prefix(k)) }
        if let order = q.sort { found = QueryEngine.sort(found, by: order) }
        return ItemsPage(results: slice(found, q), numberMatched: found.count)
    }

    /// The `keep` nearest of `candidates` to `reference`, nearest first (ties by store id), with
    /// exact geodesic distances: ordered by the chord first (cheap, and never longer than the
    /// geodesic), the exact distance only for those whose chord can still beat the `keep`th.
    /// Ranking a national view of 100,000 by geodesic alone was half of its answer's time.
    static func nearestFirst(_ candidates: [Neighbour], from reference: Coordinate, keep: Int) -> [Neighbour] {
        guard keep > 0 else { return [] }
        let q = GeocentricPoint(reference)
        var byChord = candidates.indices.map { (chord: q.chord(to: GeocentricPoint(candidates[$0].position)), index: $0) }
        byChord.sort { $0.chord < $1.chord }
        var best: [Neighbour] = []
        best.reserveCapacity(min(keep, candidates.count) + 1)
        func precedes(_ a: Neighbour, _ b: Neighbour) -> Bool { QueryResult.precedes((a.distance, a.storeID), (b.distance, b.storeID)) }
        for (chord, index) in byChord {
            if best.count == keep, chord > best[keep - 1].distance { break }
            var n = candidates[index]
            n.distance = Geodesic.distance(from: reference, to: n.position)
            if best.count == keep {
                guard precedes(n, best[keep - 1]) else { continue }
                best.removeLast()
            }
            var low = 0, high = best.count
            while low < high {
                let mid = (low + high) / 2
                if precedes(best[mid], n) { low = mid + 1 } else { high = mid }
            }
            best.insert(n, at: low)
        }
        return best
    }

    private static func slice(_ results: [QueryResult], _ q: ItemsQuery) -> [QueryResult] {
        guard q.offset < results.count else { return [] }
        return Array(results[q.offset..<min(results.count, q.offset + q.limit)])
    }
}

extension QueryResult {
    /// With the distance and bearing from `reference` (the request's lat/lon), when both it and
    /// the incident's position are known; as it is otherwise.
    func measured(from reference: Coordinate?) -> QueryResult {
        guard let reference, let p = incident.position else { return self }
        var r = self
        (r.distance, r.bearing) = Geodesic.inverse(from: reference, to: p)
        return r
    }
}
