import Foundation
import Testing
@testable import TrafficGeoServe

/// The map page's script and styles are files of the package (Sources/TrafficGeoServe/MapPage/),
/// embedded in the binary; scripts/test checks the script's syntax with `node --check`, the
/// browser suite (ServeClientsTests) runs it.
@Suite("The map page's script and styles as files")
struct MapPageFilesTests {
    static let folder = TestSupport.repositoryRoot.appendingPathComponent("Sources/TrafficGeoServe/MapPage")

    @Test func thePageHoldsTheFilesAsTheyAreInTheRepository() throws {
        let page = MapPage.html(configuration: ServeConfiguration(), parameters: try QueryParameters(""), query: ItemsQuery())
        for name in ["map.js", "map.css"] {
            let file = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
            #expect(file.count > 1000 && page.contains(file), "\(name): the page holds the file as the repository has it")
        }
        #expect(page.components(separatedBy: "<style>").count == 2 && page.components(separatedBy: "</style>").count == 2)
    }

    @Test func nothingInTheScriptEndsItsElement() {
        // HTML ends a script element at the first "</script", whatever follows it.
        #expect(MapPage.script.range(of: "</script", options: .caseInsensitive) == nil)
        #expect(!MapPage.script.contains("{{"), "the page's placeholders are filled after the script is in it")
    }
}
