import Foundation
import Testing

/// The library's messages name no command-line option: `serve`'s clients and Swift programs
/// read them too, and an option renamed in the CLI would leave them wrong. The command line adds
/// its options to the library's words in one place (`TrafficGeoExit.describe`).
@Suite("library messages name no command-line option")
struct LibraryWordsTests {
    /// Text that looks like an option and is not one (a CSS custom property of the map page).
    static let notOptions: Set<String> = ["--pin"]
    /// Files that document the command line on purpose (paths inside their module).
    static let documentsOfTheOptions: Set<String> = ["OpenAPIDocument.swift", "Question/QueryFieldReference.swift"]

    @Test func noStringInALibraryModuleNamesAnOption() throws {
        let sources = TestSupport.repositoryRoot.appendingPathComponent("Sources")
        // ICU's expressions (Swift's Regex has no look-behind).
        let option = try NSRegularExpression(pattern: #"(?<![\w-])--[a-z][a-z0-9]*(-[a-z0-9]+)*(?![\w-])"#)
        var found: [String] = []
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources.path)
        // The CLI, the OpenAPI document, which tells an API's reader the option each
        // parameter matches, and the query fields' reference (docs/query-fields.md), which
        // lists every field's name on each surface and says how to regenerate itself.
        for module in modules where module != "trafficgeo" {
            let folder = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") && !Self.documentsOfTheOptions.contains(file) {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    guard !code.hasPrefix("//"), code.contains("\"") else { continue }
                    // What comes before a trailing comment.
                    let body = code.range(of: " // ").map { String(code[..<$0.lowerBound]) } ?? code
                    for match in option.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                        let name = String(body[Range(match.range, in: body)!])
                        if !Self.notOptions.contains(name) { found.append("\(module)/\(file):\(number + 1): \(name)") }
                    }
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
