#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// GDAL/OGR's C API, opened with `dlopen` the first time a GIS file is read. GDAL links some
/// hundred libraries (PROJ, GEOS, curl, HDF, Poppler, …): linked, every `trafficgeo` process
/// would load them at start, as linking PROJ once cost every process 14 ms (TrafficGeoPROJ does
/// the same for PROJ). The functions used are looked up by name, with the types and constants of
/// GDAL's stable C API (gdal.h, ogr_api.h, ogr_srs_api.h, cpl_error.h) written out here: building
/// needs no GDAL headers, reading a GIS file needs the library (libgdal32 on Debian 12, which
/// gdal-bin installs).
struct OGRLibrary: @unchecked Sendable {
    typealias Handle = OpaquePointer
    typealias Text = UnsafePointer<CChar>
    typealias ErrorHandler = @convention(c) (Int32, Int32, Text?) -> Void

    let allRegister: @convention(c) () -> Void
    let openEx: @convention(c) (Text?, UInt32, UnsafePointer<Text?>?, UnsafePointer<Text?>?, UnsafePointer<Text?>?) -> Handle?
    let close: @convention(c) (Handle?) -> Void
    let datasetDriver: @convention(c) (Handle?) -> Handle?
    let driverShortName: @convention(c) (Handle?) -> Text?
    let layerCount: @convention(c) (Handle?) -> Int32
    let layer: @convention(c) (Handle?, Int32) -> Handle?
    let layerName: @convention(c) (Handle?) -> Text?
    let resetReading: @convention(c) (Handle?) -> Void
    let nextFeature: @convention(c) (Handle?) -> Handle?
    let layerDefinition: @convention(c) (Handle?) -> Handle?
    let layerSpatialReference: @convention(c) (Handle?) -> Handle?
    let fieldCount: @convention(c) (Handle?) -> Int32
    let fieldDefinition: @convention(c) (Handle?, Int32) -> Handle?
    let fieldName: @convention(c) (Handle?) -> Text?
    let fieldType: @convention(c) (Handle?) -> Int32
    let isFieldSetAndNotNull: @convention(c) (Handle?, Int32) -> Int32
    let fieldAsString: @convention(c) (Handle?, Int32) -> Text?
    let fieldAsDateTime: @convention(c) (Handle?, Int32, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
                                         UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Float>?,
                                         UnsafeMutablePointer<Int32>?) -> Int32
    let featureID: @convention(c) (Handle?) -> Int64
    let featureGeometry: @convention(c) (Handle?) -> Handle?
    let destroyFeature: @convention(c) (Handle?) -> Void
    let transform: @convention(c) (Handle?, Handle?) -> Int32
    let exportToJSON: @convention(c) (Handle?) -> UnsafeMutablePointer<CChar>?
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let newSpatialReference: @convention(c) (Text?) -> Handle?
    let cloneSpatialReference: @convention(c) (Handle?) -> Handle?
    let importFromEPSG: @convention(c) (Handle?, Int32) -> Int32
    let setFromUserInput: @convention(c) (Handle?, Text?) -> Int32
    let setAxisMappingStrategy: @convention(c) (Handle?, Int32) -> Void
    let isSame: @convention(c) (Handle?, Handle?) -> Int32
    let spatialReferenceName: @convention(c) (Handle?) -> Text?
    let destroySpatialReference: @convention(c) (Handle?) -> Void
    let newTransformation: @convention(c) (Handle?, Handle?) -> Handle?
    let destroyTransformation: @convention(c) (Handle?) -> Void
    let lastErrorMessage: @convention(c) () -> Text?
    let lastErrorType: @convention(c) () -> Int32
    let errorReset: @convention(c) () -> Void

    // The C API's constants.
    static let vectorOnly: UInt32 = 0x04          // GDAL_OF_VECTOR (read-only: GDAL_OF_READONLY is 0)
    static let fieldDate: Int32 = 9               // OFTDate
    static let fieldDateTime: Int32 = 11          // OFTDateTime
    static let traditionalGISOrder: Int32 = 0     // OAMS_TRADITIONAL_GIS_ORDER: longitude, latitude
    static let noError: Int32 = 0                 // OGRERR_NONE
    static let failure: Int32 = 3                 // CE_Failure (CE_Fatal is 4)

    /// The library, opened once; an error saying what to install when it is not there.
    static func shared() throws(OGRError) -> OGRLibrary {
        switch loaded {
        case let .success(library): return library
        case let .failure(error): throw error
        }
    }

    private static let loaded: Result<OGRLibrary, OGRError> = open()

    /// File names tried in order: `$TRAFFICGEO_LIBGDAL`, the sonames GDAL 3 installs, the
    /// development link, and where Homebrew and MacPorts put it.
    static var candidateNames: [String] {
        var names: [String] = []
        if let own = getenv("TRAFFICGEO_LIBGDAL") { names.append(String(cString: own)) }
        #if canImport(Darwin)
        names += ["libgdal.dylib", "/opt/homebrew/lib/libgdal.dylib", "/usr/local/lib/libgdal.dylib", "/opt/local/lib/libgdal.dylib"]
        #else
        names += (26...45).reversed().map { "libgdal.so.\($0)" } + ["libgdal.so"]
        #endif
        return names
    }

    private static func open() -> Result<OGRLibrary, OGRError> {
        for name in candidateNames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            do {
                let library = try OGRLibrary(handle: handle)
                library.allRegister()
                // GDAL's messages reach the user through the errors this module throws, not on
                // stderr between trafficgeo's own lines.
                if let quiet = dlsym(handle, "CPLQuietErrorHandler"), let set = dlsym(handle, "CPLSetErrorHandler") {
                    typealias SetHandler = @convention(c) (ErrorHandler?) -> ErrorHandler?
                    _ = unsafeBitCast(set, to: SetHandler.self)(unsafeBitCast(quiet, to: ErrorHandler.self))
                }
                return .success(library)
            } catch {
                return .failure(error)
            }
        }
        return .failure(.libraryMissing(tried: candidateNames))
    }

    private init(handle: UnsafeMutableRawPointer) throws(OGRError) {
        func symbol<T>(_ name: String) throws(OGRError) -> T {
            guard let address = dlsym(handle, name) else { throw .libraryMissing(tried: ["a libgdal with \(name) (GDAL ≥ 3.0)"]) }
            return unsafeBitCast(address, to: T.self)
        }
        allRegister = try symbol("GDALAllRegister")
        openEx = try symbol("GDALOpenEx")
        close = try symbol("GDALClose")
        datasetDriver = try symbol("GDALGetDatasetDriver")
        driverShortName = try symbol("GDALGetDriverShortName")
        layerCount = try symbol("GDALDatasetGetLayerCount")
        layer = try symbol("GDALDatasetGetLayer")
        layerName = try symbol("OGR_L_GetName")
        resetReading = try symbol("OGR_L_ResetReading")
        nextFeature = try symbol("OGR_L_GetNextFeature")
        layerDefinition = try symbol("OGR_L_GetLayerDefn")
        layerSpatialReference = try symbol("OGR_L_GetSpatialRef")
        fieldCount = try symbol("OGR_FD_GetFieldCount")
        fieldDefinition = try symbol("OGR_FD_GetFieldDefn")
        fieldName = try symbol("OGR_Fld_GetNameRef")
        fieldType = try symbol("OGR_Fld_GetType")
        isFieldSetAndNotNull = try symbol("OGR_F_IsFieldSetAndNotNull")
        fieldAsString = try symbol("OGR_F_GetFieldAsString")
        fieldAsDateTime = try symbol("OGR_F_GetFieldAsDateTimeEx")
        featureID = try symbol("OGR_F_GetFID")
        featureGeometry = try symbol("OGR_F_GetGeometryRef")
        destroyFeature = try symbol("OGR_F_Destroy")
        transform = try symbol("OGR_G_Transform")
        exportToJSON = try symbol("OGR_G_ExportToJson")
        free = try symbol("VSIFree")
        newSpatialReference = try symbol("OSRNewSpatialReference")
        cloneSpatialReference = try symbol("OSRClone")
        importFromEPSG = try symbol("OSRImportFromEPSG")
        setFromUserInput = try symbol("OSRSetFromUserInput")
        setAxisMappingStrategy = try symbol("OSRSetAxisMappingStrategy")
        isSame = try symbol("OSRIsSame")
        spatialReferenceName = try symbol("OSRGetName")
        destroySpatialReference = try symbol("OSRDestroySpatialReference")
        newTransformation = try symbol("OCTNewCoordinateTransformation")
        destroyTransformation = try symbol("OCTDestroyCoordinateTransformation")
        lastErrorMessage = try symbol("CPLGetLastErrorMsg")
        lastErrorType = try symbol("CPLGetLastErrorType")
        errorReset = try symbol("CPLErrorReset")
    }

    /// GDAL's message for this thread's last failure (not a warning) since `errorReset`, if any.
    func lastFailure() -> String? {
        guard lastErrorType() >= Self.failure else { return nil }
        return lastError() ?? "GDAL failed without a message"
    }

    /// GDAL's message for this thread's last error, if it has one.
    func lastError() -> String? {
        guard let text = lastErrorMessage() else { return nil }
        let message = String(cString: text)
        return message.isEmpty ? nil : message
    }
}

/// What can stop a GIS file from being read through GDAL.
public enum OGRError: Error, Sendable, CustomStringConvertible {
    case libraryMissing(tried: [String])

    public var description: String {
        switch self {
        case let .libraryMissing(tried):
            "GIS files are read through GDAL, and no GDAL library was found (tried \(tried.prefix(4).joined(separator: ", "))…): install it (Debian, Ubuntu: apt install libgdal32 or gdal-bin; macOS: brew install gdal), or name the library in TRAFFICGEO_LIBGDAL"
        }
    }
}
