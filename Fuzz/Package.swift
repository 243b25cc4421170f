// swift-tools-version:6.1
// The libFuzzer binary over trafficgeo's fuzz targets (Sources/TrafficGeoFuzzTargets). A package of its
// own because libFuzzer supplies `main`: built with -sanitize=fuzzer -parse-as-library by scripts/fuzz.
import PackageDescription

let package = Package(
    name: "trafficgeo-fuzz",
    dependencies: [.package(name: "trafficgeo", path: "..")],
    targets: [
        .executableTarget(name: "trafficgeo-fuzz", dependencies: [.product(name: "TrafficGeoFuzzTargets", package: "trafficgeo")]),
    ],
    swiftLanguageModes: [.v6]
)
