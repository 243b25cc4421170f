#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// PROJ's C API, opened with `dlopen` the first time something needs another CRS. Linking libproj
/// made every process load it and what it links (libcurl, libtiff, TLS, …) at start: a fresh
/// `trafficgeo near` took 44 instead of 30 ms. The functions used are looked up by name, with the
/// types and constants of PROJ's stable C API (proj.h, geodesic.h) written out here: building
/// needs no PROJ headers, running needs the library (libproj25 and proj-data on Debian).
struct PROJLibrary: @unchecked Sendable {
    typealias Context = OpaquePointer
    typealias Object = OpaquePointer
    typealias Text = UnsafePointer<CChar>

    let contextCreate: @convention(c) () -> Context?
    let contextDestroy: @convention(c) (Context?) -> Context?
    let logLevel: @convention(c) (Context?, Int32) -> Int32
    let create: @convention(c) (Context?, Text?) -> Object?
    let createCRSToCRSFromPJ: @convention(c) (Context?, Object?, Object?, OpaquePointer?, UnsafePointer<Text?>?) -> Object?
    let normalizeForVisualization: @convention(c) (Context?, Object?) -> Object?
    let destroy: @convention(c) (Object?) -> Object?
    let transGeneric: @convention(c) (Object?, Int32, UnsafeMutablePointer<Double>?, Int, Int,
                                      UnsafeMutablePointer<Double>?, Int, Int, UnsafeMutablePointer<Double>?, Int, Int,
                                      UnsafeMutablePointer<Double>?, Int, Int) -> Int
    let errno: @convention(c) (Object?) -> Int32
    let errnoReset: @convention(c) (Object?) -> Int32
    let contextErrno: @convention(c) (Context?) -> Int32
    let contextErrnoString: @convention(c) (Context?, Int32) -> Text?
    let asWKT: @convention(c) (Context?, Object?, Int32, UnsafePointer<Text?>?) -> Text?
    let getType: @convention(c) (Object?) -> Int32
    let isCRS: @convention(c) (Object?) -> Int32
    let getName: @convention(c) (Object?) -> Text?
    let getIDAuthName: @convention(c) (Object?, Int32) -> Text?
    let getIDCode: @convention(c) (Object?, Int32) -> Text?
    let getAreaOfUse: @convention(c) (Context?, Object?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?,
                                      UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Text?>?) -> Int32
    let crsGetCoordinateSystem: @convention(c) (Context?, Object?) -> Object?
    let crsGetHorizontalDatum: @convention(c) (Context?, Object?) -> Object?
    let csGetAxisCount: @convention(c) (Context?, Object?) -> Int32
    let csGetAxisInfo: @convention(c) (Context?, Object?, Int32, UnsafeMutablePointer<Text?>?, UnsafeMutablePointer<Text?>?,
                                       UnsafeMutablePointer<Text?>?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Text?>?,
                                       UnsafeMutablePointer<Text?>?, UnsafeMutablePointer<Text?>?) -> Int32
    let geodInit: @convention(c) (UnsafeMutableRawPointer?, Double, Double) -> Void
    let geodInverse: @convention(c) (UnsafeRawPointer?, Double, Double, Double, Double,
                                     UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) -> Void

    // proj.h's constants.
    static let logNone: Int32 = 0                 // PJ_LOG_NONE
    static let forward: Int32 = 1                 // PJ_FWD
    static let inverse: Int32 = -1                // PJ_INV
    static let wkt1GDAL: Int32 = 4                // PJ_WKT1_GDAL
    static let geographic2DCRS: Int32 = 12        // PJ_TYPE_GEOGRAPHIC_2D_CRS
    static let geographic3DCRS: Int32 = 13        // PJ_TYPE_GEOGRAPHIC_3D_CRS
    /// sizeof(struct geod_geodesic): a, f, f1, e2, ep2, n, b, c2, etol2, A3x[6], C3x[15], C4x[21].
    static let geodesicSize = 51 * MemoryLayout<Double>.size

    /// The library, opened once; an error saying what to install when it is not there.
    static func shared() throws(ProjectionError) -> PROJLibrary {
        switch loaded {
        case let .success(library): return library
        case let .failure(error): throw error
        }
    }

    private static let loaded: Result<PROJLibrary, ProjectionError> = open()

    /// File names tried in order: `$TRAFFICGEO_LIBPROJ`, the sonames PROJ 6 to 9 install, the
    /// development link, and where Homebrew and MacPorts put it.
    static var candidateNames: [String] {
        var names: [String] = []
        if let own = getenv("TRAFFICGEO_LIBPROJ") { names.append(String(cString: own)) }
        #if canImport(Darwin)
        names += ["libproj.dylib", "/opt/homebrew/lib/libproj.dylib", "/usr/local/lib/libproj.dylib", "/opt/local/lib/libproj.dylib"]
        #else
        names += (15...30).reversed().map { "libproj.so.\($0)" } + ["libproj.so"]
        #endif
        return names
    }

    private static func open() -> Result<PROJLibrary, ProjectionError> {
        for name in candidateNames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            do {
                return .success(try PROJLibrary(handle: handle))
            } catch {
                return .failure(error)
            }
        }
        return .failure(.libraryMissing(tried: candidateNames))
    }

    private init(handle: UnsafeMutableRawPointer) throws(ProjectionError) {
        func symbol<T>(_ name: String) throws(ProjectionError) -> T {
            guard let address = dlsym(handle, name) else { throw .libraryMissing(tried: ["a libproj with \(name) (PROJ ≥ 6.2)"]) }
            return unsafeBitCast(address, to: T.self)
        }
        contextCreate = try symbol("proj_context_create")
        contextDestroy = try symbol("proj_context_destroy")
        logLevel = try symbol("proj_log_level")
        create = try symbol("proj_create")
        createCRSToCRSFromPJ = try symbol("proj_create_crs_to_crs_from_pj")
        normalizeForVisualization = try symbol("proj_normalize_for_visualization")
        destroy = try symbol("proj_destroy")
        transGeneric = try symbol("proj_trans_generic")
        errno = try symbol("proj_errno")
        errnoReset = try symbol("proj_errno_reset")
        contextErrno = try symbol("proj_context_errno")
        contextErrnoString = try symbol("proj_context_errno_string")
        asWKT = try symbol("proj_as_wkt")
        getType = try symbol("proj_get_type")
        isCRS = try symbol("proj_is_crs")
        getName = try symbol("proj_get_name")
        getIDAuthName = try symbol("proj_get_id_auth_name")
        getIDCode = try symbol("proj_get_id_code")
        getAreaOfUse = try symbol("proj_get_area_of_use")
        crsGetCoordinateSystem = try symbol("proj_crs_get_coordinate_system")
        crsGetHorizontalDatum = try symbol("proj_crs_get_horizontal_datum")
        csGetAxisCount = try symbol("proj_cs_get_axis_count")
        csGetAxisInfo = try symbol("proj_cs_get_axis_info")
        geodInit = try symbol("geod_init")
        geodInverse = try symbol("geod_inverse")
    }

    /// PROJ's message for the context's last error.
    func message(_ context: Context) -> String {
        let code = contextErrno(context)
        guard code != 0, let text = contextErrnoString(context, code) else { return "unknown PROJ error" }
        return String(cString: text)
    }
}
