// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "trafficgeo",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "TrafficGeo", targets: ["TrafficGeo"]),
        .library(name: "TrafficGeoPROJ", targets: ["TrafficGeoPROJ"]),
        .executable(name: "trafficgeo", targets: ["trafficgeo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
        // Only the tests use it directly: real HTTP servers on loopback that misbehave on purpose.
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
    ],
    targets: [
        // PROJ's C API (proj.h) and its geodesic routines (geodesic.h), from the system (apt libproj-dev).
        .systemLibrary(
            name: "CProj",
            pkgConfig: "proj",
            providers: [.apt(["libproj-dev", "proj-data"]), .brew(["proj"])]
        ),
        // libxml2's SAX2 push parser (apt libxml2-dev) behind a small C layer (CXMLStream): the
        // Atom/RSS readers use it directly because Foundation's XMLParser on Linux crashes on
        // hostile documents.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(name: "CXMLStream", dependencies: ["CLibXML2"]),
        // GeographicLib (apt libgeographiclib-dev): Karney's geodesics, behind C functions
        // (CGeodesic) because it is C++. Why not PROJ's geodesic.h: Sources/CGeodesic/geodesic.cpp.
        .systemLibrary(
            name: "CGeographicLib",
            pkgConfig: "geographiclib",
            providers: [.apt(["libgeographiclib-dev"]), .brew(["geographiclib"])]
        ),
        .target(name: "CGeodesic", dependencies: ["CGeographicLib"]),
        // sqlite3_db_config, which is variadic and so not callable from Swift (defensive mode).
        .target(name: "CSQLiteConfig", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "TrafficGeo",
            dependencies: [
                "CGeodesic",
                "CXMLStream",
                "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Named for their error types, which network errors are explained from (NetworkErrorText).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // NIOLockedValueBox: the one lock type.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Transformations between any two CRSs with PROJ. Kept apart from TrafficGeo: the index
        // computes its geocentric points in closed form (checked against this in the tests), and
        // linking libproj costs every process ~8 ms of library loading (docs/benchmarks.md).
        .target(name: "TrafficGeoPROJ", dependencies: ["TrafficGeo", "CProj"]),
        .executableTarget(
            name: "trafficgeo",
            dependencies: [
                "TrafficGeo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Query benchmark (docs/benchmarks.md): swift run -c release trafficgeo-bench
        .executableTarget(
            name: "trafficgeo-bench",
            dependencies: ["TrafficGeo", "TrafficGeoPROJ"],
            path: "Benchmarks/QueryBenchmark"
        ),
        .testTarget(
            name: "TrafficGeoTests",
            dependencies: [
                "TrafficGeo",
                "TrafficGeoPROJ",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
