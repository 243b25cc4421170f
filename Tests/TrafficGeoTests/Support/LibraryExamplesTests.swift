import Foundation
import Testing

/// docs/library.md's examples, built by `swift build` as a Swift user's programs would be (each
/// depends on its product's modules only), run on the sample feed.
@Suite("the library products' examples run")
struct LibraryExamplesTests {
    static let sample = TestSupport.repositoryRoot.appendingPathComponent("data/sample/lmst.de_DE.xml").path

    @Test(.enabled(if: TestSupport.builtExecutable("example-read-feed") != nil, "example-read-feed was not built (swift build)"))
    func theFeedReadersAloneReadAFeed() throws {
        let run = try TestSupport.run(TestSupport.builtExecutable("example-read-feed")!.path, [Self.sample])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 6, "\(run.stdout)")
        #expect(lines.last?.hasSuffix("atom, 12 incidents, 0 entries skipped") == true, "\(run.stdout)")
        // A broken path is an error in words, not a crash.
        let missing = try TestSupport.run(TestSupport.builtExecutable("example-read-feed")!.path, ["/nonexistent.xml"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent.xml: no such file"), "\(missing.stderr)")
        // gzip, as the sample's national DATEX II feed is published.
        let gzip = TestSupport.repositoryRoot.appendingPathComponent("data/sample/situations.datex2.xml.gz").path
        let compressed = try TestSupport.run(TestSupport.builtExecutable("example-read-feed")!.path, [gzip])
        #expect(compressed.status == 0 && compressed.stdout.contains(": datex2, "), "\(compressed.stdout) \(compressed.stderr)")
    }

    @Test(.enabled(if: TestSupport.builtExecutable("example-nearest") != nil, "example-nearest was not built (swift build)"))
    func theStoreAndItsQueryEngineAnswerNearest() throws {
        let run = try TestSupport.run(TestSupport.builtExecutable("example-nearest")!.path, [Self.sample, "50.94", "6.96"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first?.hasSuffix("12 new incidents stored, 12 with a position") == true && lines.count == 4, "\(run.stdout)")
        // A place that is none is refused, and leaves no database behind.
        let bad = try TestSupport.run(TestSupport.builtExecutable("example-nearest")!.path, [Self.sample, "95", "200"])
        #expect(bad.status == 1 && bad.stderr.contains("give FEED LAT LON"), "\(bad.stderr)")
        let kilometres = lines.dropFirst().compactMap { Double($0.split(separator: "\t").first?.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " km", with: "") ?? "") }
        #expect(kilometres.count == 3 && kilometres == kilometres.sorted(), "nearest first: \(run.stdout)")
    }
}
