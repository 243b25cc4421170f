// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "trafficgeo",
    platforms: [.macOS(.v14)],
    products: [
        // The whole tool as a library: every stage, both stores, serve and watch.
        .library(name: "TrafficGeo", targets: [
            "TrafficGeo", "TrafficGeoSupport", "TrafficGeoHTTP", "TrafficGeoModel", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoFeeds",
            "TrafficGeoGeocoding", "TrafficGeoConflation", "TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoPostGIS", "TrafficGeoQuery", "TrafficGeoOutput", "TrafficGeoWatch",
            "TrafficGeoServe", "TrafficGeoOGR",
        ]),
        // The feed readers alone: every format, from a file or over HTTP; no server, no database
        // (docs/library.md; Examples/read-feed).
        .library(name: "TrafficGeoFeeds", targets: ["TrafficGeoModel", "TrafficGeoFeeds"]),
        // The SQLite store with its query engine: ingest, nearest, within, box, along; no server,
        // no PostgreSQL (Examples/nearest).
        .library(name: "TrafficGeoQuery", targets: ["TrafficGeoModel", "TrafficGeoFeeds", "TrafficGeoConflation", "TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoQuery"]),
        // For Fuzz/ only (a separate package): the fuzz targets.
        .library(name: "TrafficGeoFuzzTargets", targets: ["TrafficGeoFuzzTargets"]),
        .library(name: "TrafficGeoPROJ", targets: ["TrafficGeoPROJ"]),
        .executable(name: "trafficgeo", targets: ["trafficgeo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Heap: the merge of an external sort's runs (TrafficGeoSQLite's SpilledRuns).
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
        // NIOLockedValueBox (the one lock type) and the error types network errors are explained
        // from; the tests run real HTTP servers on loopback with it.
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
        // `trafficgeo serve`: the HTTP server (on the same SwiftNIO).
        // Its traits: FullFoundation only. With two traits on (its default adds ConfigurationSupport,
        // swift-configuration, which trafficgeo does not use) SwiftPM writes their -D flags in a
        // different order from one invocation to the next, so every build recompiled Hummingbird's
        // modules (1–1.5 min each time, several times a CI run).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: ["FullFoundation"]),
        // Named for their types, which Hummingbird's API uses (HTTP fields, graceful shutdown).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // The PostGIS store (`--db postgresql://…`): PostgreSQL's wire protocol, and TLS for `sslmode`.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        // Metrics (`serve`'s /metrics, the feed loop's textfile): swift-metrics is the API the
        // modules count through, swift-prometheus writes Prometheus's text format.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // libxml2's SAX2 push parser (apt libxml2-dev) behind a small C layer (CXMLStream): the
        // Atom/RSS readers use it directly because Foundation's XMLParser on Linux crashes on
        // hostile documents.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(name: "CXMLStream", dependencies: ["CLibXML2"]),
        // zlib: gzip-compressed feeds (national DATEX II feeds are published as .xml.gz).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
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
        // The pipeline's stages, one module each; an arrow that runs back does not compile
        // (docs/architecture.md): Support → Model → Projection → RoadTitles → Feeds →
        // Geocoding → Store (the protocol) → SQLite (one store) → Query → Output; the pipeline
        // (TrafficGeo) on top; the CLI thinnest.
        // Text, numbers, times, JSON: no dependency, so that every module can use it.
        .target(name: "TrafficGeoSupport"),
        // The one HTTP client feeds, geocoders and webhooks share, and network errors in words.
        .target(
            name: "TrafficGeoHTTP",
            dependencies: [
                "TrafficGeoSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Named for their error types, which network errors are explained from (NetworkErrorText).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(name: "TrafficGeoModel", dependencies: ["TrafficGeoSupport"]),
        .target(name: "TrafficGeoProjection", dependencies: ["TrafficGeoModel", "CGeodesic"]),
        .target(name: "TrafficGeoRoadTitles", dependencies: ["TrafficGeoModel", "TrafficGeoSupport"]),
        .target(
            name: "TrafficGeoFeeds",
            dependencies: ["TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoHTTP", "CXMLStream", "CZlib",
                           "TrafficGeoPROJ", // positions in other CRSs (`--crs`, GeoJSON's legacy crs member)
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           // BlockingThreads (a NIOThreadPool): the one pool for blocking work asked from
                           // async code, here because the feeds are the lowest module that needs it.
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .target(
            name: "TrafficGeoGeocoding",
            dependencies: ["TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoHTTP",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "Logging", package: "swift-log"),
                           // Geocoder requests and cache hits, counted for the feed loop's metrics.
                           .product(name: "CoreMetrics", package: "swift-metrics"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        // GIS files (KML, GML, Shapefile, GeoPackage, …) through GDAL/OGR, opened with dlopen when
        // first read (its hundred libraries are not loaded by every process); its own module,
        // so that the feed readers' product needs no GDAL.
        .target(name: "TrafficGeoOGR", dependencies: ["TrafficGeoFeeds", "TrafficGeoModel"]),
        // Reports and events: which reports are one event and what the event says (docs/conflation.md).
        .target(name: "TrafficGeoConflation", dependencies: ["TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoRoadTitles", "TrafficGeoGeocoding"]),
        // What a store is (IncidentStore), without any database.
        .target(name: "TrafficGeoStore", dependencies: ["TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoFeeds", "TrafficGeoGeocoding",
                                                        "TrafficGeoConflation",
                                                        // NIOLockedValueBox: junction learning's parsing threads hand back their results.
                                                        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                                                        // ThreadSpecificVariable: a thread's query stop, a reader thread's mark.
                                                        .product(name: "NIOPosix", package: "swift-nio")]),
        // The SQLite store: one file, the block index, its own exact search.
        .target(
            name: "TrafficGeoSQLite",
            dependencies: ["TrafficGeoStore", "TrafficGeoConflation", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoFeeds",
                           "TrafficGeoRoadTitles", "TrafficGeoGeocoding", "CSQLiteConfig",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "GRDBSQLite", package: "GRDB.swift"),
                           // NIOLockedValueBox: the one lock type.
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                           .product(name: "HeapModule", package: "swift-collections"),
                           // ThreadSpecificVariable: a read connection per long-lived reader thread.
                           .product(name: "NIOPosix", package: "swift-nio")]
        ),
        // The PostGIS store: a PostgreSQL server (`postgresql://…`), the same answers as the file.
        .target(
            name: "TrafficGeoPostGIS",
            dependencies: ["TrafficGeoStore", "TrafficGeoConflation", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoFeeds",
                           "TrafficGeoRoadTitles", "TrafficGeoGeocoding",
                           .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The query language (fields, their text, CQL2, areas and routes) and the engine that asks a store.
        .target(name: "TrafficGeoQuery", dependencies: ["TrafficGeoStore", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoFeeds",
                                                        "TrafficGeoRoadTitles"]),
        // GeoPackage is written with SQLite's C API (GRDBSQLite), other CRSs through TrafficGeoPROJ
        // (which opens PROJ only when asked).
        .target(name: "TrafficGeoOutput", dependencies: ["TrafficGeoQuery", "TrafficGeoStore", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoGeocoding",
                                                         "TrafficGeoPROJ", .product(name: "GRDBSQLite", package: "GRDB.swift"),
                                                         // NIOLockedValueBox: a batch's sessions share its blocks.
                                                         .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The pipeline: feeds into a store with geocoding, batch runs; the library's front door.
        .target(
            name: "TrafficGeo",
            dependencies: ["TrafficGeoSupport", "TrafficGeoModel", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoFeeds",
                           "TrafficGeoGeocoding", "TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoPostGIS", "TrafficGeoQuery",
                           "TrafficGeoWatch", // the watch loop (WatchLoop)
                           "TrafficGeoOGR", // GIS files (FeedFormat.gis)
                           .product(name: "Logging", package: "swift-log"),
                           // The feed loop's fetches, counted (FeedLoop).
                           .product(name: "CoreMetrics", package: "swift-metrics"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        // Standing queries over the change feed (`trafficgeo watch`) and where their events go.
        .target(
            name: "TrafficGeoWatch",
            dependencies: ["TrafficGeoStore", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoQuery", "TrafficGeoOutput", "TrafficGeoHTTP",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           // NIOLockedValueBox: an exec delivery's process end, told by its termination handler.
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]
        ),
        // `trafficgeo serve`: OGC API – Features, Server-Sent Events from the change feed and the map page.
        .target(
            name: "TrafficGeoServe",
            dependencies: ["TrafficGeoStore", "TrafficGeoModel", "TrafficGeoSupport", "TrafficGeoProjection", "TrafficGeoRoadTitles",
                           "TrafficGeoQuery", "TrafficGeoOutput", "TrafficGeoWatch",
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log"),
                           // /metrics: requests counted through swift-metrics into a Prometheus registry.
                           .product(name: "CoreMetrics", package: "swift-metrics"),
                           .product(name: "Prometheus", package: "swift-prometheus"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            // The map page's script and styles, files a JavaScript check reads (scripts/test),
            // compiled into the binary as byte arrays: serve needs no file beside it.
            resources: [.embedInCode("MapPage/map.js"), .embedInCode("MapPage/map.css")]
        ),
        // Fuzz targets (Fuzz/, scripts/fuzz) and the tests that replay their corpora; not library API.
        .target(name: "TrafficGeoFuzzTargets", dependencies: ["TrafficGeoFeeds", "TrafficGeoRoadTitles", "TrafficGeoGeocoding", "TrafficGeoModel", "TrafficGeoStore", "TrafficGeoQuery"]),
        // Helpers shared by the tests and the benchmark; not library API.
        .target(name: "TrafficGeoTestSupport", dependencies: ["TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoPostGIS"]),
        // Transformations between any two CRSs with PROJ, opened with dlopen when first needed
        // (`--crs`): linking libproj cost every process ~14 ms of library loading (docs/crs.md).
        // The index computes its geocentric points in closed form (checked against this in the tests).
        .target(name: "TrafficGeoPROJ", dependencies: ["TrafficGeoModel", "TrafficGeoProjection"]),
        .executableTarget(
            name: "trafficgeo",
            dependencies: [
                "TrafficGeo", "TrafficGeoSupport", "TrafficGeoModel", "TrafficGeoProjection", "TrafficGeoRoadTitles", "TrafficGeoFeeds",
                "TrafficGeoGeocoding", "TrafficGeoConflation", "TrafficGeoStore", "TrafficGeoQuery", "TrafficGeoOutput", "TrafficGeoWatch", "TrafficGeoServe", "TrafficGeoPROJ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // The feed loop's metrics textfile: swift-metrics bootstrapped into a Prometheus registry.
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // IOError: a port in use is explained, not dumped.
                .product(name: "NIOCore", package: "swift-nio"),
                // NIOLockedValueBox: the feed loop's geocoder, made on first need.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // docs/library.md's examples, one for each library product: each depends on that product's
        // modules only, so that it builds the way a Swift user's program does; the tests run them.
        .executableTarget(name: "example-read-feed", dependencies: ["TrafficGeoModel", "TrafficGeoFeeds"], path: "Examples/read-feed"),
        .executableTarget(name: "example-nearest", dependencies: ["TrafficGeoModel", "TrafficGeoFeeds", "TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoQuery"],
                          path: "Examples/nearest"),
        // Query benchmark (docs/benchmarks.md): swift run -c release trafficgeo-bench
        .executableTarget(
            name: "trafficgeo-bench",
            dependencies: ["TrafficGeo", "TrafficGeoPROJ", "TrafficGeoOutput", "TrafficGeoTestSupport", "TrafficGeoModel", "TrafficGeoProjection", "TrafficGeoFeeds", "TrafficGeoStore", "TrafficGeoSQLite", "TrafficGeoQuery", "TrafficGeoWatch"],
            path: "Benchmarks/QueryBenchmark"
        ),
        .testTarget(
            name: "TrafficGeoTests",
            dependencies: [
                "TrafficGeo", "TrafficGeoPROJ", "TrafficGeoOutput", "TrafficGeoFuzzTargets", "TrafficGeoTestSupport", "TrafficGeoWatch", "TrafficGeoServe",
                "TrafficGeoPostGIS", "TrafficGeoOGR", "TrafficGeoConflation",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The serve tests ask the server as any HTTP client would.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // A batch column bound to a statement on a real server.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // The suite runs on the release build (scripts/release-build: one build for CI, the
            // modules users run optimised), but the tests' own code is not what users run:
            // compiled unoptimised it takes a fraction of the optimised module's minutes.
            swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]
        ),
    ],
    swiftLanguageModes: [.v6]
)
