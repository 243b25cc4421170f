import Foundation
import Testing
@testable import TrafficGeoQuery
@testable import TrafficGeoStore

/// docs/query-fields.md is made from the fields' declarations (`QueryFieldReference`): a field
/// added, renamed or given to another surface without the file made again fails here.
@Suite("docs/query-fields.md is the fields' declarations")
struct QueryFieldReferenceTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/query-fields.md")

    @Test func theTableIsCurrent() throws {
        let generated = QueryFieldReference.markdown
        if ProcessInfo.processInfo.environment["TRAFFICGEO_UPDATE_DOCS"] == "1" {
            try generated.write(to: Self.path, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: Self.path, encoding: .utf8)
        #expect(written == generated, "docs/query-fields.md is stale: run TRAFFICGEO_UPDATE_DOCS=1 swift test --filter QueryFieldReference")
    }

    @Test func everyFieldSaysWhatItAsks() {
        for field in QueryField.allCases {
            #expect(!field.help(on: .commandLine).isEmpty && !field.help(on: .parameter).isEmpty, "\(field) has no help")
        }
    }
}
