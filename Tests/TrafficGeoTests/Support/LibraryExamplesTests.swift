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
        #expect(missing.status == 1 && missing.stderr.contains("cannot open /nonexistent.xml"), "\(missing.stderr)")
    }

    @Test(.enabled(if: TestSupport.builtExecutable("example-nearest") != nil, "example-nearest was not built (swift build)"))
    func theStoreAndItsQueryEngineAnswerNearest() throws {
        let run = try TestSupport.run(TestSupport.builtExecutable("example-nearest")!.path, [Self.sample, "50.94", "6.96"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.first?.hasSuffix("new incidents stored") == true && lines.count == 4, "\(run.stdout)")
        let kilometres = lines.dropFirst().compactMap { Double($0.split(separator: "\t").first?.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " km", with: "") ?? "") }
        #expect(kilometres.count == 3 && kilometres == kilometres.sorted(), "nearest first: \(run.stdout)")
    }
}
