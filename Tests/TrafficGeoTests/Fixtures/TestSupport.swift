import Foundation
import TrafficGeoTestSupport
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel

/// Helpers shared by the tests: temporary files, the shared data folder, the built CLI.
enum TestSupport {
    /// A fresh temporary folder, removed by the caller with `cleanup`.
    static func temporaryDirectory() -> URL { TestFolders.temporaryDirectory() }

    /// An update time an hour before now as feeds write it ("2026-12-03T09:10:00Z"), for a
    /// fixture whose reports give no end and are asked about now: a report not heard of for seven
    /// days is "unconfirmed" (`IncidentFilter.defaultUnconfirmedAfter`), so a fixed date turned
    /// such a test red a week after it was written (CI of 3 December 2026). One value for the
    /// whole run, so that a document written twice is the same document.
    static let anHourAgo: String = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 3600).formatted(.iso8601)

    static func write(_ text: String, name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Reads a feed given as text with the format detected from the content.
    static func read(_ text: String, name: String = "feed", format: FeedFormat? = nil) throws -> (incidents: [Incident], skipped: [SkippedEntry]) {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try write(text, name: name, in: folder)
        return try FeedReading.readAll(FeedInput(localFile: url.path), source: "test", format: format)
    }

    /// The repository root (this file lives in Tests/TrafficGeoTests/Fixtures).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `../shared` beside the repository, when present (CI has it; a fresh checkout elsewhere may not).
    static var sharedFolder: URL? {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("data/autobahn/warnings-dev.csv.xz").path) ? url : nil
    }

    /// The `trafficgeo` executable the command-line tests spawn: `$TRAFFICGEO_TEST_CLI` when set
    /// (scripts/test sets the shipped binary, the release build linked with -static-stdlib, as
    /// users install it), else the one built beside the test bundle.
    static var cliExecutable: URL? {
        if let chosen = ProcessInfo.processInfo.environment["TRAFFICGEO_TEST_CLI"], !chosen.isEmpty {
            let url = URL(fileURLWithPath: chosen, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
            return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
        }
        return builtExecutable("trafficgeo")
    }

    /// An executable of this package built beside the test bundle (`trafficgeo`, an example).
    static func builtExecutable(_ name: String) -> URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
            folder = folder.deletingLastPathComponent()
        }
        let fallback = repositoryRoot.appendingPathComponent(".build/debug/" + name)
        return FileManager.default.isExecutableFile(atPath: fallback.path) ? fallback : nil
    }

    /// Full path of a program on PATH, or nil.
    static func which(_ program: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(program)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts a program in the background with its output discarded (for kill tests).
    static func launch(_ executable: URL, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Stops a program started by `launch` and waits for it. SIGKILL, not `terminate()`: a child
    /// inherits the signal mask of the test runner's thread, where SIGTERM is blocked, so the
    /// HTTPS test server outlived every test run that way.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The trafficgeo under test (`cliExecutable`) as a user in `folder` runs it: no colour, no
    /// `$TRAFFICGEO_DB`, caches and state inside the folder; on a thread of its own (`runOnThread`).
    static func runCLI(_ arguments: [String], folder: URL) async throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["TRAFFICGEO_DB"] = nil
        environment["XDG_CACHE_HOME"] = folder.appendingPathComponent("cache").path
        environment["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
        return try await runOnThread(cliExecutable!.path, arguments, environment: environment)
    }

    /// Waits, without holding a thread, until `condition` holds or `seconds` have passed, and
    /// asks once more at the end: on a loaded machine a suspended task can wake after its
    /// deadline, and a loop that only asks before the deadline then gives up without looking.
    @discardableResult
    static func waitUntil(seconds: Double, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    /// `run` on a thread of its own, for async tests that serve in-process: waiting for a child
    /// on one of Swift's cooperative threads (one per core) can starve the server it talks to.
    static func runOnThread(_ executable: String, _ arguments: [String],
                            environment: [String: String]? = nil) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await onThread { try run(executable, arguments, environment: environment) }
    }

    /// `body` on a thread of its own: blocking work that must not hold one of the two
    /// cooperative threads the whole suite shares.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Runs a program to completion; returns (status, stdout, stderr).
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: String? = nil,
                    environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        // stderr goes to a file, stdout to a pipe read to the end before waiting: no pipe can fill up and block the child.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("trafficgeo-stderr-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let err = try FileHandle(forWritingTo: errURL)
        let out = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try err.close()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}
