import Foundation
import TrafficGeoModel
import TrafficGeoProjection

/// A point in a projected or geocentric CRS (metres for the store's EPSG:4978).
public struct ProjectedPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double = 0) {
        self.x = x
        self.y = y
        self.z = z
    }
}

/// Transforms WGS84 coordinates with PROJ (`proj_create_crs_to_crs` + `proj_normalize_for_visualization`):
/// x is always easting or longitude and y northing or latitude, whatever order the CRS defines.
///
///     let projector = try Projector(target: "EPSG:25832")
///     let p = try projector.forward(Coordinate(latitude: 50.94, longitude: 6.96))
///
/// A PROJ context is not thread-safe: use one `Projector` per thread or task (it is not `Sendable`).
public final class Projector {
    public let sourceCRS: String
    public let targetCRS: String
    /// The CRS that is not WGS84 geographic (the target, or the source when the target is
    /// EPSG:4326): its name, axes, area of use and WKT.
    public private(set) var description: CRSDescription?
    private let library: PROJLibrary
    private let context: OpaquePointer
    private let transform: OpaquePointer
    /// One written-out pipeline (no choice of operations, so no correction of the inverse).
    private var usesDirectPipeline = false

    public convenience init(source: String = "EPSG:4326", target: String) throws(ProjectionError) {
        try self.init(source: source, target: target, allowDirectPipeline: true)
    }

    /// `allowDirectPipeline: false` always asks PROJ's database (tests compare the two ways).
    init(source: String, target: String, allowDirectPipeline: Bool) throws(ProjectionError) {
        let library = try PROJLibrary.shared()
        guard let ctx = library.contextCreate() else { throw .contextCreationFailed }
        // PROJ logs through stderr by default; errors reach us through proj_context_errno instead.
        _ = library.logLevel(ctx, PROJLibrary.logNone)
        self.library = library
        context = ctx
        sourceCRS = source
        targetCRS = target
        if allowDirectPipeline, let pipeline = Projector.directPipelines["\(source)>\(target)"] {
            guard let direct = library.create(ctx, pipeline) else {
                let message = library.message(ctx)
                _ = library.contextDestroy(ctx)
                throw .crsNotUnderstood(source: source, target: target, reason: message)
            }
            transform = direct
            usesDirectPipeline = true
            return
        }
        do throws(ProjectionError) {
            let sourceObject = try Self.crs(source, library, ctx)
            defer { _ = library.destroy(sourceObject) }
            let targetObject = try Self.crs(target, library, ctx)
            defer { _ = library.destroy(targetObject) }
            guard let raw = library.createCRSToCRSFromPJ(ctx, sourceObject, targetObject, nil, nil) else {
                throw ProjectionError.crsNotUnderstood(source: source, target: target, reason: library.message(ctx))
            }
            // EPSG:4326 is latitude-first by definition, UTM easting-first, Gauss-Krüger
            // northing-first: normalised, every CRS takes and gives (east, north) like a map API.
            guard let normalized = library.normalizeForVisualization(ctx, raw) else {
                _ = library.destroy(raw)
                throw ProjectionError.crsNotUnderstood(source: source, target: target, reason: "cannot normalise the axis order")
            }
            _ = library.destroy(raw)
            transform = normalized
            let described = Self.isWGS84(target) ? sourceObject : targetObject
            description = CRSDescription(described, definition: Self.isWGS84(target) ? source : target, library, ctx)
        } catch {
            _ = library.contextDestroy(ctx)
            throw error
        }
    }

    /// The CRS object for a definition, or why PROJ does not understand it.
    private static func crs(_ definition: String, _ library: PROJLibrary, _ ctx: OpaquePointer) throws(ProjectionError) -> OpaquePointer {
        guard let object = library.create(ctx, definition) else {
            let reason = library.message(ctx)
            // An authority's code PROJ's database lacks, while the database answers a code
            // every one holds: the code is wrong, not the installation.
            if definition.range(of: #"^[A-Za-z]+:[0-9]+$"#, options: .regularExpression) != nil, let known = library.create(ctx, "EPSG:4326") {
                _ = library.destroy(known)
                throw .notInDatabase(definition)
            }
            throw .unknownCRS(definition, reason: reason)
        }
        guard library.isCRS(object) != 0 else {
            _ = library.destroy(object)
            throw .unknownCRS(definition, reason: "it is a coordinate operation, not a coordinate reference system")
        }
        return object
    }

    /// Checks up front that positions given in `crs` can be brought to WGS84: PROJ knows it, and
    /// its projection has an inverse (some, like `+proj=bacon`, have none). Transforms the
    /// centre of the CRS's area of use there and back.
    public static func checkReadable(_ crs: String) throws(ProjectionError) {
        let back = try Projector(source: crs, target: "EPSG:4326")
        let out = try Projector(source: "EPSG:4326", target: crs)
        var centre = Coordinate(latitude: 0, longitude: 0)
        if let a = back.description?.areaOfUse, a.west <= a.east {
            centre = Coordinate(latitude: (a.south + a.north) / 2, longitude: (a.west + a.east) / 2)
        }
        guard let p = try? out.forward(centre) else { return }
        do {
            _ = try back.transform(x: p.x, y: p.y)
        } catch {
            throw .noInverse(crs, reason: "\(error)")
        }
    }

    /// Whether a CRS name means WGS84 longitude/latitude as GeoJSON writes it (no PROJ needed).
    public static func isWGS84(_ definition: String) -> Bool {
        let name = definition.trimmingCharacters(in: .whitespaces).uppercased()
        return ["EPSG:4326", "OGC:CRS84", "CRS84", "WGS84", "URN:OGC:DEF:CRS:OGC:1.3:CRS84", "URN:OGC:DEF:CRS:EPSG::4326",
                "HTTP://WWW.OPENGIS.NET/DEF/CRS/OGC/1.3/CRS84", "HTTP://WWW.OPENGIS.NET/DEF/CRS/EPSG/0/4326"].contains(name)
    }

    /// The operations PROJ itself chooses for these CRS pairs, written out so that creating the
    /// projector does not open proj.db: WGS84 geographic to WGS84 geocentric is a pure conversion
    /// (no datum shift). Input order lon, lat as after `proj_normalize_for_visualization`; tests
    /// check both ways agree.
    static let directPipelines: [String: String] = [
        "EPSG:4326>EPSG:4978": "+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad +step +proj=cart +ellps=WGS84",
    ]

    deinit {
        _ = library.destroy(transform)
        _ = library.contextDestroy(context)
    }

    /// Transforms one point (x east or longitude, y north or latitude) in `direction`; nil with
    /// PROJ's reason when PROJ cannot.
    private func transformed(_ x: Double, _ y: Double, _ z: Double, _ direction: Int32) -> (Double, Double, Double, failure: String?) {
        var (x, y, z) = (x, y, z)
        _ = library.errnoReset(transform)
        _ = library.transGeneric(transform, direction, &x, 8, 1, &y, 8, 1, &z, 8, 1, nil, 0, 0)
        let code = library.errno(transform)
        if code != 0 || !x.isFinite || !y.isFinite || !z.isFinite || x == .greatestFiniteMagnitude {
            let reason = code != 0 ? (library.contextErrnoString(context, code).map { String(cString: $0) } ?? "PROJ error \(code)") : "no finite result"
            return (x, y, z, reason)
        }
        return (x, y, z, nil)
    }

    /// Transforms (x, y) of the source CRS, east or longitude first, to the target CRS.
    public func transform(x: Double, y: Double) throws(ProjectionError) -> (x: Double, y: Double) {
        let (tx, ty, _, failure) = transformed(x, y, 0, PROJLibrary.forward)
        if let failure { throw .pointFailed(x: x, y: y, reason: failure) }
        return (tx, ty)
    }

    /// Projects one WGS84 coordinate (height 0 on the ellipsoid).
    public func forward(_ c: Coordinate) throws(ProjectionError) -> ProjectedPoint {
        let (x, y, z, failure) = transformed(c.longitude, c.latitude, 0, PROJLibrary.forward)
        if let failure { throw .transformFailed(c, reason: failure) }
        return ProjectedPoint(x: x, y: y, z: z)
    }

    /// Projects a projected point back to WGS84: the point that `forward` projects onto `p`.
    /// PROJ may take another of its candidate operations on the way back than on the way out
    /// (DHDN ↔ WGS84 has several, by region, metres apart; a round trip through EPSG:31467 was
    /// 3.3 m off), so PROJ's inverse is corrected by Newton steps through the inverse until
    /// `forward` gives `p` back.
    public func inverse(_ p: ProjectedPoint) throws(ProjectionError) -> Coordinate {
        let (x0, y0, _, failure) = transformed(p.x, p.y, p.z, PROJLibrary.inverse)
        if let failure { throw .inverseFailed(reason: failure) }
        var (x, y) = (x0, y0)
        if !usesDirectPipeline {
            // A tenth of a micrometre, or its angle in degrees.
            let tolerance = description?.isGeographic == true ? 1e-12 : 1e-7
            var best = (x, y, residual: Double.infinity)
            for _ in 0..<4 {
                let (fx, fy, _, out) = transformed(x, y, 0, PROJLibrary.forward)
                guard out == nil else { break }
                let residual = max(abs(p.x - fx), abs(p.y - fy))
                if residual < best.residual { best = (x, y, residual) }
                if residual < tolerance { break }
                let (bx, by, _, back) = transformed(fx, fy, p.z, PROJLibrary.inverse)
                guard back == nil else { break }
                (x, y) = (x + (x0 - bx), y + (y0 - by))
            }
            (x, y) = (best.0, best.1)
        }
        return Coordinate(latitude: y, longitude: x)
    }

    /// Projects many coordinates in one PROJ call (faster than one `forward` each for bulk ingest).
    public func forward(_ coordinates: [Coordinate]) throws(ProjectionError) -> [ProjectedPoint] {
        var xs = coordinates.map(\.longitude), ys = coordinates.map(\.latitude)
        var zs = [Double](repeating: 0, count: coordinates.count)
        let n = coordinates.count
        _ = library.errnoReset(transform)
        _ = library.transGeneric(transform, PROJLibrary.forward, &xs, 8, n, &ys, 8, n, &zs, 8, n, nil, 0, 0)
        var result: [ProjectedPoint] = []
        result.reserveCapacity(n)
        for i in 0..<n {
            guard xs[i].isFinite, ys[i].isFinite, zs[i].isFinite, xs[i] != .greatestFiniteMagnitude else {
                throw .transformFailed(coordinates[i], reason: library.message(context))
            }
            result.append(ProjectedPoint(x: xs[i], y: ys[i], z: zs[i]))
        }
        return result
    }
}

/// What PROJ says about a CRS: enough to name output columns, write a GeoPackage's
/// `gpkg_spatial_ref_sys` row and check positions against where the CRS is meant to be used.
public struct CRSDescription: Sendable, Equatable {
    public struct Axis: Sendable, Equatable {
        public var name: String
        public var abbreviation: String
        /// "east", "north", …
        public var direction: String
    }

    /// As the user wrote it.
    public var definition: String
    public var name: String
    /// ("EPSG", 25832) when the CRS is one of an authority's; nil for a PROJ string or a custom WKT.
    public var authority: (name: String, code: String)? {
        get { authorityName.map { ($0, authorityCode ?? "") } }
        set { authorityName = newValue?.name; authorityCode = newValue?.code }
    }
    private var authorityName: String?
    private var authorityCode: String?
    /// OGC WKT 1 (what GeoPackage's `definition` column holds).
    public var wkt1: String?
    public var isGeographic: Bool
    /// In the CRS's own order.
    public var axes: [Axis]
    /// West, south, east, north in degrees; nil when PROJ does not know it.
    public var areaOfUse: (west: Double, south: Double, east: Double, north: Double)? {
        get { area.count == 4 ? (area[0], area[1], area[2], area[3]) : nil }
        set { area = newValue.map { [$0.west, $0.south, $0.east, $0.north] } ?? [] }
    }
    private var area: [Double] = []

    init(_ crs: OpaquePointer, definition: String, _ library: PROJLibrary, _ ctx: OpaquePointer) {
        self.definition = definition
        name = library.getName(crs).map { String(cString: $0) } ?? definition
        if let auth = library.getIDAuthName(crs, 0), let code = library.getIDCode(crs, 0) {
            authorityName = String(cString: auth)
            authorityCode = String(cString: code)
        }
        let type = library.getType(crs)
        isGeographic = type == PROJLibrary.geographic2DCRS || type == PROJLibrary.geographic3DCRS
        let options: [UnsafePointer<CChar>?] = [nil]
        wkt1 = options.withUnsafeBufferPointer { library.asWKT(ctx, crs, PROJLibrary.wkt1GDAL, $0.baseAddress).map { String(cString: $0) } }
        axes = []
        if let cs = library.crsGetCoordinateSystem(ctx, crs) {
            for i in 0..<max(0, library.csGetAxisCount(ctx, cs)) {
                var name: UnsafePointer<CChar>?, abbreviation: UnsafePointer<CChar>?, direction: UnsafePointer<CChar>?
                if library.csGetAxisInfo(ctx, cs, i, &name, &abbreviation, &direction, nil, nil, nil, nil) != 0 {
                    axes.append(Axis(name: name.map { String(cString: $0) } ?? "", abbreviation: abbreviation.map { String(cString: $0) } ?? "",
                                     direction: direction.map { String(cString: $0) } ?? ""))
                }
            }
            _ = library.destroy(cs)
        }
        var west = 0.0, south = 0.0, east = 0.0, north = 0.0
        if library.getAreaOfUse(ctx, crs, &west, &south, &east, &north, nil) != 0, west > -1000 {
            area = [west, south, east, north]
        }
    }

    public static func == (a: CRSDescription, b: CRSDescription) -> Bool {
        a.definition == b.definition && a.name == b.name && a.wkt1 == b.wkt1 && a.axes == b.axes && a.area == b.area
            && a.authorityName == b.authorityName && a.authorityCode == b.authorityCode
    }

    /// Column names for (x, y) as `Projector` orders them (east, north): the axes' own names in
    /// lower case ("easting", "northing"; "longitude", "latitude").
    public var columnNames: (x: String, y: String) {
        func column(_ direction: String, _ fallback: String) -> String {
            guard let axis = axes.first(where: { $0.direction.lowercased() == direction }), !axis.name.isEmpty else { return fallback }
            let words = axis.name.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
            return words.isEmpty ? fallback : words.joined(separator: "_")
        }
        // Geographic axes are called "Geodetic longitude" and the like: plain names read better.
        return isGeographic ? ("longitude", "latitude") : (column("east", "x"), column("north", "y"))
    }

    /// Whether a WGS84 position lies where the CRS is meant to be used, widened by `margin`
    /// degrees (a UTM zone serves a whole country: Germany is all EPSG:25832, 3° beyond its zone).
    public func covers(_ c: Coordinate, margin: Double = 3) -> Bool {
        guard let a = areaOfUse else { return true }
        guard c.latitude >= a.south - margin, c.latitude <= a.north + margin else { return false }
        if a.west <= a.east { return c.longitude >= a.west - margin && c.longitude <= a.east + margin }
        return c.longitude >= a.west - margin || c.longitude <= a.east + margin   // across 180°
    }
}

/// Errors from PROJ, with what a user can do about them.
public enum ProjectionError: Error, Sendable, CustomStringConvertible {
    case libraryMissing(tried: [String])
    case contextCreationFailed
    case unknownCRS(String, reason: String)
    /// An authority's code (EPSG:99999) that PROJ's database, which works, does not hold.
    case notInDatabase(String)
    case crsNotUnderstood(source: String, target: String, reason: String)
    case transformFailed(Coordinate, reason: String)
    case pointFailed(x: Double, y: Double, reason: String)
    case noInverse(String, reason: String)
    case inverseFailed(reason: String)

    public var description: String {
        switch self {
        case let .libraryMissing(tried):
            return "PROJ is not installed (tried \(tried.prefix(3).joined(separator: ", ")), …): install it (Debian: apt install libproj25 proj-data; macOS: brew install proj), or set TRAFFICGEO_LIBPROJ to the library's path"
        case .contextCreationFailed:
            return "PROJ could not create a context (out of memory?)"
        case let .unknownCRS(definition, reason):
            return "PROJ does not know the CRS '\(definition.prefix(80))': \(reason). Give an EPSG code (EPSG:25832), a PROJ string or WKT; is proj-data installed (proj.db)? Set PROJ_DATA to its folder."
        case let .notInDatabase(code):
            return "PROJ's database has no CRS '\(code.prefix(80))': check the code (EPSG:25832 is ETRS89 / UTM 32N, EPSG:27700 the British National Grid), or give a PROJ string or WKT"
        case let .crsNotUnderstood(source, target, reason):
            return "PROJ cannot transform \(source.prefix(80)) to \(target.prefix(80)): \(reason). Is proj-data installed (proj.db)? Set PROJ_DATA to its folder."
        case let .transformFailed(c, reason):
            return "PROJ could not project lat \(c.latitude), lon \(c.longitude): \(reason)"
        case let .noInverse(crs, reason):
            return "positions in '\(crs.prefix(80))' cannot be brought to WGS84 (\(reason)): PROJ has no inverse for its projection; give the CRS the data was made in"
        case let .pointFailed(x, y, reason):
            return "PROJ could not transform (\(x), \(y)): \(reason)"
        case let .inverseFailed(reason):
            return "PROJ could not unproject a point: \(reason)"
        }
    }
}

/// PROJ's own geodesics (`geodesic.h`): what `Geodesic` (GeographicLib) is checked against.
public enum PROJGeodesic {
    /// Distance in metres and the azimuths at both ends, from `a` to `b`.
    public static func inverse(from a: Coordinate, to b: Coordinate) throws(ProjectionError) -> (distance: Double, azimuth1: Double, azimuth2: Double) {
        let library = try PROJLibrary.shared()
        let g = UnsafeMutableRawPointer.allocate(byteCount: PROJLibrary.geodesicSize, alignment: MemoryLayout<Double>.alignment)
        defer { g.deallocate() }
        library.geodInit(g, Geodesic.wgs84SemiMajorAxis, Geodesic.wgs84Flattening)
        var s12 = 0.0, azi1 = 0.0, azi2 = 0.0
        library.geodInverse(g, a.latitude, a.longitude, b.latitude, b.longitude, &s12, &azi1, &azi2)
        return (s12, azi1, azi2)
    }
}
