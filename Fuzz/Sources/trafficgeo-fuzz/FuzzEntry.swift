import Foundation
import TrafficGeoFuzzTargets

/// The target comes from $TRAFFICGEO_FUZZ_TARGET (scripts/fuzz sets it): one binary for all targets.
private let target: String = {
    let name = ProcessInfo.processInfo.environment["TRAFFICGEO_FUZZ_TARGET"] ?? ""
    guard FuzzTargets.all.contains(name) else {
        FileHandle.standardError.write(Data("set TRAFFICGEO_FUZZ_TARGET to one of: \(FuzzTargets.all.joined(separator: " "))\n".utf8))
        exit(64)
    }
    return name
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    FuzzTargets.run(target, data)
    return 0
}

/// libFuzzer's driver (compiler-rt, LLVM ≥ 11).
@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM links an executable's `main` to `<module>_main`; with -parse-as-library there is none,
/// so this is it, and it hands over to libFuzzer's driver (its own `main` is then not linked).
@_cdecl("trafficgeo_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return runDriver(&argc, &argv) { bytes, count in fuzzOneInput(bytes, count) }
}
