// The benchmark's command line (main.swift lists the suites and options).
import Foundation

struct Options {
    var suites: [String] = []
    var points = 1_000_000
    var queries = 1000
    var atomEntries = 100_000
    var db = "/tmp/trafficgeo-bench-1M.sqlite"
    var processRuns = 30
    var rebuild = false
    var saveBaseline: String?
    var compare: String?

    static let allSuites = ["geodesic", "projection", "output", "ingest", "knn", "radius", "process", "watch"]
    static let defaultSuites = allSuites.filter { $0 != "watch" }

    init(_ args: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < args.count else { fail("missing value for \(args[i - 1])") }
            return args[i]
        }
        func number() -> Int {
            let text = value()
            guard let n = Int(text), n > 0 else { fail("\(args[i - 1]) needs a positive number, not \(text)") }
            return n
        }
        while i < args.count {
            switch args[i] {
            case "--points": points = number()
            case "--queries": queries = number()
            case "--atom-entries": atomEntries = number()
            case "--db": db = value()
            case "--process-runs": processRuns = number()
            case "--rebuild": rebuild = true
            case "--save-baseline": saveBaseline = value()
            case "--compare": compare = value()
            case "-h", "--help":
                print("usage: trafficgeo-bench [\(Self.allSuites.joined(separator: "|")) ...] [--points N] [--queries N] [--atom-entries N]")
                print("                        [--db PATH] [--rebuild] [--process-runs N] [--save-baseline FILE] [--compare FILE]")
                exit(0)
            case let suite where Self.allSuites.contains(suite): suites.append(suite)
            default: fail("unknown argument \(args[i]) (see --help)")
            }
            i += 1
        }
        if suites.isEmpty { suites = Self.defaultSuites }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("trafficgeo-bench: \(message)\n".utf8))
    exit(64)
}
