import Foundation
import Testing
@testable import TrafficGeoFuzzTargets

/// Replays the fuzz corpora (seeds and the inputs that once crashed or hung) through the fuzz
/// targets: each input must come back, quickly.
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/corpus")

    @Test(arguments: FuzzTargets.all)
    func corpusRunsClean(target: String) throws {
        let folder = Self.corpus.appendingPathComponent(target)
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(!files.isEmpty, "no seeds for \(target) in \(folder.path)")
        for file in files {
            let start = ContinuousClock.now
            FuzzTargets.run(target, try Data(contentsOf: file))
            #expect(ContinuousClock.now - start < .seconds(5), "\(target)/\(file.lastPathComponent) took too long")
        }
    }

    /// The seeds are real inputs: each reader gets incidents out of its seed.
    @Test(arguments: ["atom", "rss", "autobahn", "geojson", "csv", "datex2", "wzdx", "open511", "waze", "cql2"])
    func seedsAreReadable(target: String) throws {
        let seed = Self.corpus.appendingPathComponent("\(target)/seed-1")
        #expect(FuzzTargets.run(target, try Data(contentsOf: seed)) > 0)
    }
}
