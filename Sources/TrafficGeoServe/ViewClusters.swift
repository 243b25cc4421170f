import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// `/collections/incidents/clusters`: how many incidents a map's view holds, cell by cell of a
/// grid over its box, for a view with more incidents than a page shows (a national desk's
/// 100,000). Each non-empty cell is one Point at the mean position of its incidents, with their
/// count; the filters are the items' own. Counted from the store's ids and positions
/// (`NeighbourSearch.boxNeighbours`), no incident decoded.
struct ViewClusters: Sendable, Equatable {
    static let defaultColumns = 24, defaultRows = 16
    static let maxCells = 64

    var box: LonLatBox
    var filter: IncidentFilter
    /// A CQL2 filter's part the store is not asked (`ItemsQuery.remainder`).
    var remainder: IncidentPredicate?
    var columns = defaultColumns
    var rows = defaultRows

    /// The query model's fields a clusters request takes: the items' conditions on what an
    /// incident is and when (the box is the view; no centre, route, order or reports).
    static let fields = ItemsQuery.modelFields.filter { ![.lat, .lon, .radius, .bbox, .route, .buffer, .sort, .reports].contains($0) }
    /// What a clusters request may give: the box (required), the grid, and the items' filters.
    static let parameters: Set<String> = Set(["bbox", "cells", "f", "datetime", "filter", "filter-lang", "filter-crs"])
        .union(fields.map { $0.name(on: .parameter) })

    init(_ p: QueryParameters, now: Date = Date()) throws(Problem) {
        try p.allowOnly(Self.parameters)
        let query = try ItemsQuery(p, allowed: Self.parameters, now: now)
        guard let box = query.bbox else {
            throw Problem.badParameter("bbox", "bbox is required: the view to count, west,south,east,north in degrees.")
        }
        self.box = box
        filter = query.filter
        remainder = query.remainder
        if let text = try p.single("cells") {
            let parts = text.lowercased().split(separator: "x").map { Int($0) }
            guard parts.count == 2, let c = parts[0], let r = parts[1], (1...Self.maxCells).contains(c), (1...Self.maxCells).contains(r) else {
                throw Problem.badParameter("cells", "cells='\(text)' must be COLUMNSxROWS, each 1 … \(Self.maxCells) (such as 24x16).")
            }
            (columns, rows) = (c, r)
        }
    }

    struct Cell: Equatable {
        var count = 0
        var latitudeSum = 0.0, longitudeSum = 0.0
    }

    /// The non-empty cells, west to east within south to north.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    func cells(engine: QueryEngine) throws -> (cells: [Cell], total: Int) {
        var inBox: [Neighbour] = []
        if let remainder {
            // Decoded and checked, as the items' page is (ItemsSearch.pageCheckingEach).
            try engine.inBoundingBox(box, filter: filter) { r in
                guard remainder.matches(r.stored), let p = r.incident.position else { return }
                inBox.append(Neighbour(storeID: r.stored.storeID, id: r.incident.id, distance: 0, position: p))
            }
        } else {
            inBox = try engine.session { try $0.boxNeighbours(box, filter: filter) }
        }
        var grid = [Cell](repeating: Cell(), count: columns * rows)
        let span = box.longitudeSpan, height = max(box.north - box.south, 1e-9)
        for n in inBox {
            // Longitudes east of the box's west edge, so a box across the antimeridian is one grid.
            var east = n.position.longitude - box.west
            if east < 0 { east += 360 }
            let column = min(columns - 1, max(0, Int(east / max(span, 1e-9) * Double(columns))))
            let row = min(rows - 1, max(0, Int((n.position.latitude - box.south) / height * Double(rows))))
            grid[row * columns + column].count += 1
            grid[row * columns + column].latitudeSum += n.position.latitude
            grid[row * columns + column].longitudeSum += box.west + east
        }
        return (grid.filter { $0.count > 0 }, inBox.count)
    }

    /// The cells as a GeoJSON FeatureCollection: Points with `count`, and `numberMatched`, the whole view's.
    static func featureCollection(_ cells: [Cell], total: Int) -> String {
        var out = "{\"type\":\"FeatureCollection\",\"features\":["
        for (i, cell) in cells.enumerated() {
            if i > 0 { out += ",\n" }
            var longitude = cell.longitudeSum / Double(cell.count)
            if longitude > 180 { longitude -= 360 }
            let latitude = cell.latitudeSum / Double(cell.count)
            out += "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(JSONObjectText.number(longitude, digits: 5)),\(JSONObjectText.number(latitude, digits: 5))]},"
            out += "\"properties\":{\"count\":\(cell.count)}}"
        }
        return out + "],\"numberMatched\":\(total),\"numberReturned\":\(cells.count)}"
    }
}
