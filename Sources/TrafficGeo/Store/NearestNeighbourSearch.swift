import GRDB
import GRDBSQLite

/// The R*Tree query callback `knn(x, y, z, maxChord)` that makes SQLite's R*Tree search best-first
/// by distance, registered on every connection of the store.
///
///     SELECT id FROM incident_index WHERE id MATCH knn(:x, :y, :z, :maxChord)
///
/// returns entries in increasing order of the straight-line (chord) distance from the geocentric
/// point (x, y, z) to their box, and skips every box farther than `maxChord`. The chord is a lower
/// bound of the geodesic distance, so a caller that re-ranks by geodesic distance can stop as soon
/// as the next chord exceeds its k-th best geodesic: the result is exact, after a few hundred node
/// visits instead of a scan. The callback keeps no state: everything comes through its parameters.
enum NearestNeighbourSearch {
    static let functionName = "knn"

    static func register(on db: Database) throws {
        let code = sqlite3_rtree_query_callback(db.sqliteConnection, functionName, chordScore, nil, nil)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot register the R*Tree knn callback")
        }
    }

    /// The lower-bound distance of a 3-D box to the query point, as the entry's `rScore`.
    private static let chordScore: @convention(c) (UnsafeMutablePointer<sqlite3_rtree_query_info>?) -> Int32 = { info in
        guard let info, info.pointee.nParam >= 4, info.pointee.nCoord == 6,
              let p = info.pointee.aParam, let c = info.pointee.aCoord else { return SQLITE_ERROR }
        let dx = Swift.max(c[0] - p[0], 0, p[0] - c[1])
        let dy = Swift.max(c[2] - p[1], 0, p[1] - c[3])
        let dz = Swift.max(c[4] - p[2], 0, p[2] - c[5])
        let chord = (dx * dx + dy * dy + dz * dz).squareRoot()
        if chord > p[3] {
            info.pointee.eWithin = NOT_WITHIN
        } else {
            info.pointee.eWithin = PARTLY_WITHIN
            info.pointee.rScore = chord
        }
        return SQLITE_OK
    }

    /// The chord from a point to a box given as (minX, maxX, minY, maxY, minZ, maxZ).
    @inline(__always)
    static func chord(from p: ProjectedPoint, toBox b: (Double, Double, Double, Double, Double, Double)) -> Double {
        let dx = Swift.max(b.0 - p.x, 0, p.x - b.1)
        let dy = Swift.max(b.2 - p.y, 0, p.y - b.3)
        let dz = Swift.max(b.4 - p.z, 0, p.z - b.5)
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }
}
