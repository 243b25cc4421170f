import Foundation
import Testing
import TrafficGeoModel
import TrafficGeoPROJ
import TrafficGeoProjection
import TrafficGeoTestSupport

/// Positions in other CRSs through PROJ, checked against PROJ's own command-line tool.
@Suite("Other CRSs through PROJ")
struct OtherCRSTests {
    /// A few hundred points over Germany and its neighbours (where these CRSs are used).
    static func points(_ count: Int = 300) -> [Coordinate] {
        var generator = SplitMix64(seed: 20)
        return (0..<count).map { _ in
            Coordinate(latitude: Double.random(in: 47...55.1, using: &generator), longitude: Double.random(in: 5.8...15.1, using: &generator))
        }
    }

    /// cs2cs's answers for `points` (it reads latitude first for EPSG:4326 and writes the target
    /// CRS's own axis order: northing first for Gauss-Krüger).
    static func cs2cs(_ target: String, _ points: [Coordinate]) throws -> [(Double, Double)] {
        let input = points.map { String(format: "%.10f %.10f", $0.latitude, $0.longitude) }.joined(separator: "\n") + "\n"
        let r = try TestSupport.run(TestSupport.which("cs2cs")!, ["-f", "%.6f", "EPSG:4326", target], stdin: input)
        try #require(r.status == 0, Comment(rawValue: r.stderr))
        return r.stdout.split(separator: "\n").map { line in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            return (f[0], f[1])
        }
    }

    @Test(.enabled(if: TestSupport.which("cs2cs") != nil, "cs2cs is not installed (apt install proj-bin)"),
          arguments: [("EPSG:25832", false), ("EPSG:31467", true), ("EPSG:3857", false)])
    func roundTripsAgreeWithCs2cs(target: String, northingFirst: Bool) throws {
        let points = Self.points()
        let projector = try Projector(target: target)
        let reference = try Self.cs2cs(target, points)
        var worstAgainstCs2cs = 0.0, worstRoundTrip = 0.0
        for (p, expected) in zip(points, reference) {
            let q = try projector.forward(p)
            let (east, north) = northingFirst ? (expected.1, expected.0) : expected
            worstAgainstCs2cs = max(worstAgainstCs2cs, abs(q.x - east), abs(q.y - north))
            let back = try projector.inverse(q)
            worstRoundTrip = max(worstRoundTrip, Geodesic.distance(from: p, to: back))
        }
        print("\(target): largest difference from cs2cs \(worstAgainstCs2cs) m, round trip \(worstRoundTrip) m over \(points.count) points")
        #expect(worstAgainstCs2cs < 1e-3)
        #expect(worstRoundTrip < 1e-3)
    }

    @Test func aCRSIsDescribedForOutput() throws {
        let utm = try #require(try Projector(target: "EPSG:25832").description)
        #expect(utm.authority?.name == "EPSG" && utm.authority?.code == "25832")
        #expect(utm.name.contains("UTM zone 32N"))
        #expect(utm.columnNames == ("easting", "northing"))
        #expect(!utm.isGeographic)
        #expect(utm.wkt1?.hasPrefix("PROJCS[") == true)
        // Gauss-Krüger names northing first; the columns still come east first, as the values do.
        let gk = try #require(try Projector(target: "EPSG:31467").description)
        #expect(gk.axes.first?.direction.lowercased() == "north")
        #expect(gk.columnNames == ("easting", "northing"))
        let etrs = try #require(try Projector(target: "EPSG:4258").description)
        #expect(etrs.isGeographic && etrs.columnNames == ("longitude", "latitude"))
        // Germany lies in the UTM zone's area of use (widened by 3°), Lisbon and Tokyo do not.
        #expect(utm.covers(Coordinate(latitude: 51.0, longitude: 14.9)))
        #expect(!utm.covers(Coordinate(latitude: 38.7, longitude: -9.1)))
        #expect(!utm.covers(Coordinate(latitude: 35.7, longitude: 139.7)))
        // A PROJ string has no authority code.
        let custom = try #require(try Projector(target: "+proj=utm +zone=33 +ellps=GRS80 +units=m +no_defs +type=crs").description)
        #expect(custom.authority == nil)
    }

    @Test func badCRSInputSaysWhatIsWrong() {
        for bad in ["EPSG:999999", "not a crs", "+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad"] {
            #expect(throws: ProjectionError.self, "\(bad)") { try Projector(target: bad) }
            do { _ = try Projector(target: bad) } catch {
                #expect(error.description.contains(String(bad.prefix(20))), "\(error)")
            }
        }
    }
}
