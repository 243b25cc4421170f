import Foundation
import TrafficGeo

/// The target comes from $TRAFFICGEO_FUZZ_TARGET (scripts/fuzz sets it): one binary for all targets.
nonisolated(unsafe) private let target: String = {
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
