import Foundation
import Testing
@testable import TrafficGeoServe
@testable import TrafficGeoQuery
@testable import TrafficGeoStore

/// One question asked three ways — the command line's options, `serve`'s query parameters and a
/// watches file's keys — on one store: the same incidents come back, and the same bad text is
/// refused with the same words (the query model, `QueryText`, reads all three). The field names
/// are spelt by the model for each surface, so a new field is asked on all three by itself.
@Suite("the same question on the command line, in serve and in a watches file",
       .serialized, .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct SameQuestionTests {
    /// A question: its fields as text, the way a person types them.
    typealias Question = KeyValuePairs<QueryField, String>

    /// Questions with answers on the fixture's grid (ServeFixture: Köln, A1/A3/A4, four
    /// categories, updated a minute apart; the Pacific points across the antimeridian). A watch
    /// reports only what is live, so each asks for what is active now.
    static func goodQuestions(now: Date) -> [(String, Question)] {
        // Between the 25th and the 26th incident's update (a minute apart): no boundary to round.
        let since = TimestampParserText.iso(now.addingTimeInterval(-1530).timeIntervalSince1970.rounded(.down))
        return [
            ("circle with categories", [.lat: "50.94", .lon: "6.96", .radius: "6km", .category: "accident,Baustelle", .activeAt: "now"]),
            ("box with a road", [.bbox: "6.85,50.85,7.0,50.95", .road: "a 4", .activeAt: "now"]),
            ("circle with since and words", [.lat: "50.94", .lon: "6.96", .radius: "20km", .since: since, .search: "koeln olpe", .activeAt: "now"]),
            ("box across the antimeridian", [.bbox: "170,-20,-170,-10", .activeAt: "now"]),
            ("miles", [.lat: "50.94", .lon: "6.96", .radius: "3mi", .road: "A1,A3", .activeAt: "now"]),
        ]
    }

    /// Bad text and the words every surface must refuse it with.
    static let badQuestions: [(Question, refusal: String)] = [
        ([.lat: "50.94", .lon: "190", .radius: "5km"], "lon '190' is not a longitude"),
        ([.lat: "50.94", .lon: "6.96", .radius: "5km", .since: "banana"], "since 'banana' is not a time"),
        ([.lat: "50.94", .lon: "6.96", .radius: "25"], "radius '25' is not a distance: a distance needs its unit"),
        ([.bbox: "7,51,6,50"], "bbox '7,51,6,50' is not a box: its south edge lies north of its north edge"),
        ([.bbox: "6.8,50.8,7.1,51", .category: "flood"], "category 'flood' is not one of"),
        ([.bbox: "6.8,50.8,7.1,51", .road: "Haupt;straße"], "road 'Haupt;straße' is not a road reference"),
        ([.bbox: "6.8,50.8,7.1,51", .minConfidence: "2"], "min-confidence '2' is not a number from 0 to 1"),
        ([.lat: "95", .lon: "6.96", .radius: "5km"], "lat '95' is not a latitude"),
        ([.lat: "50.94", .lon: "6.96", .radius: "-5km"], "radius '-5km' is not a distance"),
    ]

    @Test func theSameQuestionFindsTheSameIncidentsEverywhere() async throws {
        try await ServeFixture.serving { fixture in
        for (name, question) in Self.goodQuestions(now: fixture.now) {
            let onCommandLine = try await commandLine(question, store: fixture.location, folder: fixture.folder)
            #expect(onCommandLine.status == 0, "\(name): \(onCommandLine.stderr)")
            let fromServe = try await serve(question, fixture)
            #expect(fromServe.status == 200, "\(name): \(fromServe.body)")
            let watched = try await watchesFile(question, store: fixture.location, folder: fixture.folder)
            #expect(watched.status == 0, "\(name): \(watched.stderr)")
            let ids = Self.ids(commandLine: onCommandLine.stdout)
            #expect(!ids.isEmpty, "\(name): the question finds nothing, so it tests nothing")
            #expect(Self.ids(serve: fromServe.body) == ids, "\(name)")
            #expect(Self.ids(watch: watched.stdout) == ids, "\(name)")
        }
        }
    }

    @Test func theSameBadTextIsRefusedWithTheSameWordsEverywhere() async throws {
        try await ServeFixture.serving { fixture in
        for (question, refusal) in Self.badQuestions {
            let named = { (surface: QueryField.Surface) -> String in
                // The refusal as the surface spells the field: `--lon '190' …`, `lon '190' …`, `min_confidence '2' …`.
                let field = question.first { refusal.hasPrefix($0.key.name(on: .parameter) + " ") }!.key
                return field.name(on: surface) + refusal.dropFirst(field.name(on: .parameter).count)
            }
            let onCommandLine = try await commandLine(question, store: fixture.location, folder: fixture.folder)
            #expect(onCommandLine.status == 64 && onCommandLine.stderr.contains(named(.commandLine)), "\(onCommandLine.stderr)")
            let fromServe = try await serve(question, fixture)
            let detail = fromServe.json["detail"] as? String ?? ""
            #expect(fromServe.status == 400 && detail.contains(named(.parameter)), "\(fromServe.body)")
            let watched = try await watchesFile(question, store: fixture.location, folder: fixture.folder)
            #expect(watched.status == 64 && watched.stderr.contains("watch 'q': " + named(.watchesFile)), "\(watched.stderr)")
        }
        }
    }

    /// Ordering by distance needs a point to measure from: `bbox`/`export --sort distance` and
    /// `serve`'s `sortby=distance` without lat/lon are refused with the same words (the command
    /// line used to answer in store order).
    @Test func distanceOrderWithoutACentreIsRefusedAlike() async throws {
        try await ServeFixture.serving { fixture in
            let problem = "'distance' needs a point to measure from"
            for command in [["bbox", "--bbox", "6.8,50.8,7.1,51"], ["export"]] {
                let r = try await TestSupport.runCLI(command + ["--db", fixture.location, "--sort", "distance", "-f", "json"], folder: fixture.folder)
                #expect(r.status == 64 && r.stderr.contains("--sort " + problem), "\(command): \(r.stderr)")
            }
            let answer = try await fixture.get("/collections/incidents/items?bbox=6.8,50.8,7.1,51&sortby=distance")
            #expect(answer.status == 400 && (answer.json["detail"] as? String ?? "").contains("sortby " + problem), "\(answer.body)")
            // A stray word after a misspelt option is named, not taken for a second location.
            let stray = try await TestSupport.runCLI(["near", "--db", fixture.location, "--lat", "50.9", "--lon", "6.9", "--limti", "3"], folder: fixture.folder)
            #expect(stray.status == 64 && stray.stderr.contains("--limti is not an option of near (see --help), so '3' after it was read as a place name"), "\(stray.stderr)")
            let withinLimit = try await TestSupport.runCLI(["within", "--db", fixture.location, "--lat", "50.9", "--lon", "6.9", "--radius", "5km", "--limit", "3"],
                                                           folder: fixture.folder)
            #expect(withinLimit.status == 64 && withinLimit.stderr.contains("--limit is not an option of within"), "\(withinLimit.stderr)")
        }
    }

    // MARK: - The three surfaces

    /// `within` for a circle, `bbox` for a box, each field as its option.
    private func commandLine(_ question: Question, store: String, folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        var arguments = [question.contains { $0.key == .bbox } ? "bbox" : "within", "--db", store, "-f", "json", "--quiet"]
        for (field, value) in question { arguments += [field.name(on: .commandLine), value] }
        return try await TestSupport.runCLI(arguments, folder: folder)
    }

    private func serve(_ question: Question, _ fixture: ServeFixture) async throws -> ServeFixture.Answer {
        var query = QueryParameters.escape("limit") + "=10000"
        for (field, value) in question { query += "&" + QueryParameters.escape(field.name(on: .parameter)) + "=" + QueryParameters.escape(value) }
        return try await fixture.get("/collections/incidents/items?" + query)
    }

    /// A watches file of one watch `q` with the fields as keys; one round, what is inside now.
    private func watchesFile(_ question: Question, store: String, folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        var watch: [String: Any] = ["name": "q"]
        for (field, value) in question { watch[field.name(on: .watchesFile)] = value }
        let file = folder.appendingPathComponent("watches-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: [watch]).write(to: file)
        return try await TestSupport.runCLI(["watch", "--watches", file.path, "--db", store, "--once", "-f", "ndjson",
                                             "--state", folder.appendingPathComponent("state-\(UUID().uuidString).json").path], folder: folder)
    }

    // MARK: - The incidents each answer names (their feed ids)

    static func ids(commandLine json: String) -> Set<String> {
        let list = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [[String: Any]] ?? []
        return Set(list.compactMap { $0["id"] as? String })
    }

    static func ids(serve body: String) -> Set<String> {
        let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        let features = object["features"] as? [[String: Any]] ?? []
        return Set(features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String })
    }

    static func ids(watch ndjson: String) -> Set<String> {
        Set(ndjson.split(separator: "\n").compactMap { line -> String? in
            guard let event = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], event["event"] as? String == "enter" else { return nil }
            return (event["incident"] as? [String: Any])?["id"] as? String
        })
    }
}

/// An ISO 8601 UTC time of whole seconds, as a person would type it.
private enum TimestampParserText {
    static func iso(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
