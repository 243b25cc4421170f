import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
import TrafficGeoTestSupport
@testable import TrafficGeoPROJ

@Suite("PROJ projection and WGS84 geodesics")
struct ProjectionTests {
    static let points: [Coordinate] = [
        Coordinate(latitude: 50.94, longitude: 6.96), Coordinate(latitude: 0, longitude: 0),
        Coordinate(latitude: -33.87, longitude: 151.21), Coordinate(latitude: 89.9999, longitude: 45),
        Coordinate(latitude: -90, longitude: 0), Coordinate(latitude: 10, longitude: 180), Coordinate(latitude: -10, longitude: -179.9999),
    ]

    @Test func geocentricRoundTrip() throws {
        let projector = try Projector(target: "EPSG:4978")
        for p in Self.points {
            let back = try projector.inverse(try projector.forward(p))
            #expect(abs(back.latitude - p.latitude) < 1e-9, "\(p)")
            if abs(p.latitude) < 90 {
                #expect(abs(remainder(back.longitude - p.longitude, 360)) < 1e-9, "\(p)")
            }
        }
    }

    @Test(.enabled(if: TestSupport.which("cs2cs") != nil, "cs2cs is not installed (apt install proj-bin)"))
    func geocentricMatchesCs2cs() throws {
        let projector = try Projector(target: "EPSG:4978")
        // cs2cs reads "lat lon h" for EPSG:4326 (its authority axis order) and prints x y z.
        let input = Self.points.map { "\($0.latitude) \($0.longitude) 0" }.joined(separator: "\n") + "\n"
        let run = try TestSupport.run(TestSupport.which("cs2cs")!, ["-f", "%.6f", "EPSG:4326", "EPSG:4978"], stdin: input)
        let lines = run.stdout.split(separator: "\n")
        try #require(lines.count == Self.points.count, "cs2cs said: \(run.stderr)")
        for (p, line) in zip(Self.points, lines) {
            let xyz = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            let mine = try projector.forward(p)
            #expect(abs(mine.x - xyz[0]) < 1e-3 && abs(mine.y - xyz[1]) < 1e-3 && abs(mine.z - xyz[2]) < 1e-3, "\(p)")
        }
    }

    @Test func directPipelineEqualsPROJsOwnChoice() throws {
        let direct = try Projector(target: "EPSG:4978")
        let viaDatabase = try Projector(source: "EPSG:4326", target: "EPSG:4978", allowDirectPipeline: false)
        for p in Self.points {
            let a = try direct.forward(p), b = try viaDatabase.forward(p)
            #expect(abs(a.x - b.x) < 1e-6 && abs(a.y - b.y) < 1e-6 && abs(a.z - b.z) < 1e-6, "\(p)")
            let back = try direct.inverse(a)
            #expect(abs(back.latitude - p.latitude) < 1e-9)
        }
    }

    @Test func nationalCRSRoundTrip() throws {
        let projector = try Projector(target: "EPSG:25832")
        let cologne = Coordinate(latitude: 50.94, longitude: 6.96)
        let back = try projector.inverse(try projector.forward(cologne))
        #expect(abs(back.latitude - cologne.latitude) < 1e-9 && abs(back.longitude - cologne.longitude) < 1e-9)
    }

    @Test(.enabled(if: TestSupport.which("cs2cs") != nil, "cs2cs is not installed (apt install proj-bin)"))
    func nationalCRSMatchesCs2cs() throws {
        let p = try Projector(target: "EPSG:25832").forward(Coordinate(latitude: 50.94, longitude: 6.96))
        let run = try TestSupport.run(TestSupport.which("cs2cs")!, ["-f", "%.4f", "EPSG:4326", "EPSG:25832"], stdin: "50.94 6.96\n")
        let values = run.stdout.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Double($0) }
        try #require(values.count >= 2, "cs2cs said: \(run.stdout) \(run.stderr)")
        #expect(abs(p.x - values[0]) < 1e-3 && abs(p.y - values[1]) < 1e-3)
    }

    /// A code PROJ's (working) database lacks is the code's fault, and is said so — not "is
    /// proj-data installed?"; a definition PROJ cannot read at all still gets PROJ's reason.
    @Test func unknownCRSIsAClearError() {
        let missing = #expect(throws: ProjectionError.self) { try Projector(target: "EPSG:999999") }
        #expect(missing?.description.contains("PROJ's database has no CRS 'EPSG:999999'") == true, "\(String(describing: missing))")
        #expect(missing?.description.contains("proj-data") == false)
        let garbled = #expect(throws: ProjectionError.self) { try Projector(target: "+proj=nonesuch +ellps=WGS84") }
        #expect(garbled?.description.contains("PROJ does not know the CRS") == true, "\(String(describing: garbled))")
    }

    @Test(.enabled(if: TestSupport.which("geod") != nil, "geod is not installed (apt install proj-bin)"))
    func geodesicMatchesGeod() throws {
        let pairs: [(Coordinate, Coordinate)] = [
            (Coordinate(latitude: 50.94, longitude: 6.96), Coordinate(latitude: 50.99166, longitude: 7.92276)),
            (Coordinate(latitude: 10, longitude: 179.9), Coordinate(latitude: 10.1, longitude: -179.9)),
            (Coordinate(latitude: 89.5, longitude: 0), Coordinate(latitude: 89.5, longitude: 180)),
            (Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0.5, longitude: 179.5)),
        ]
        let geod = try #require(TestSupport.which("geod"))
        let input = pairs.map { "\($0.0.latitude) \($0.0.longitude) \($0.1.latitude) \($0.1.longitude)" }.joined(separator: "\n") + "\n"
        let run = try TestSupport.run(geod, ["-I", "+ellps=WGS84", "-f", "%.6f", "+units=m"], stdin: input)
        let lines = run.stdout.split(separator: "\n")
        try #require(lines.count == pairs.count, Comment(rawValue: run.stderr))
        for (pair, line) in zip(pairs, lines) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
            let (distance, bearing) = Geodesic.inverse(from: pair.0, to: pair.1)
            #expect(abs(distance - fields[2]) < 0.001, "\(pair)")
            #expect(abs(remainder(bearing - fields[0], 360)) < 1e-5, "\(pair)")
        }
    }

    /// GeographicLib (what `Geodesic` uses) and PROJ's geodesic.h are two codings of Karney's
    /// algorithm: they agree to nanometres everywhere, antipodes and poles included.
    @Test func geographicLibAgreesWithPROJ() throws {
        var generator = SplitMix64(seed: 31)
        var worst = 0.0
        for i in 0..<20_000 {
            let a = Coordinate(latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator))
            // Near pairs, far pairs and nearly antipodal pairs.
            let b: Coordinate
            switch i % 3 {
            case 0: b = Coordinate(latitude: min(90, max(-90, a.latitude + Double.random(in: -0.1...0.1, using: &generator))),
                                   longitude: remainder(a.longitude + Double.random(in: -0.1...0.1, using: &generator), 360))
            case 1: b = Coordinate(latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator))
            default: b = Coordinate(latitude: -a.latitude + Double.random(in: -0.5...0.5, using: &generator) * 1e-3,
                                    longitude: remainder(a.longitude + 180 + Double.random(in: -0.5...0.5, using: &generator), 360))
            }
            let mine = Geodesic.inverse(from: a, to: b)
            let proj = try PROJGeodesic.inverse(from: a, to: b)
            worst = max(worst, abs(mine.distance - proj.distance))
            #expect(Geodesic.distance(from: a, to: b) == mine.distance, "distance alone, \(a) → \(b)")
            #expect(abs(mine.distance - proj.distance) < 1e-7, "\(a) → \(b)")
            // Azimuths are undefined at a pole and between antipodes; elsewhere they agree.
            if mine.distance > 1, abs(a.latitude) < 89.999, abs(mine.distance - 20_003_931) > 10_000 {
                #expect(abs(remainder(mine.bearing - proj.azimuth1, 360)) < 1e-9, "\(a) → \(b)")
            }
        }
        print("GeographicLib vs PROJ geodesic: largest difference \(worst) m over 20,000 pairs")
        let start = Coordinate(latitude: 50.94, longitude: 6.96)
        let end = Geodesic.direct(from: start, bearing: 73, distance: 68_000)
        #expect(abs(Geodesic.inverse(from: start, to: end).distance - 68_000) < 1e-6)
    }
}
