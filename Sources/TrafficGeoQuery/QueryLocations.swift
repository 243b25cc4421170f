import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Query points for batch queries: a CSV with a header naming `qid` (or `id`), `lat`/`latitude`
/// and `lon`/`lng`/`longitude`.
///
///     let points = try QueryLocations.read(path: "queries.csv")
public enum QueryLocations {
    public struct Point: Sendable, Equatable {
        public var qid: String
        public var coordinate: Coordinate
    }

    public enum ReadError: Error, CustomStringConvertible {
        /// The file, what its header lacks, and the header as read.
        case missingColumns(String, missing: [String], header: String)
        case badRow(String, line: Int, reason: String)
        case duplicateQID(String, qid: String, line: Int, firstLine: Int)
        case notFound(String)
        case unreadable(String, reason: String)

        public var description: String {
            switch self {
            case let .missingColumns(path, missing, header):
                var text = "\(path): needs a header with qid (or id), lat and lon columns"
                guard !header.isEmpty else { return text + "; the file is empty" }
                text += "; its header '\(header.prefix(80))' has no \(missing.joined(separator: ", "))"
                // A spreadsheet's export in a comma-decimal locale separates with ';'.
                if let separator = [";", "\t", "|"].first(where: { header.contains($0) }) {
                    text += " (separated by '\(separator == "\t" ? "\\t" : separator)'? trafficgeo reads commas)"
                }
                return text
            case let .badRow(path, line, reason): return "\(path) line \(line): \(reason)"
            case let .duplicateQID(path, qid, line, firstLine):
                // Rows are keyed by qid: two points under one qid could not be told apart.
                return "\(path) line \(line): the qid '\(qid)' is also on line \(firstLine); every point needs its own"
            case let .notFound(path): return "\(path): no such file"
            case let .unreadable(path, reason): return "\(path): cannot read: \(reason)"
            }
        }

        /// Missing or unreadable, rather than read and found wrong.
        public var isUnreadable: Bool {
            switch self {
            case .notFound, .unreadable: return true
            case .missingColumns, .badRow, .duplicateQID: return false
            }
        }
    }

    /// Reads the points of `path`; `-` is standard input (named `stdin` in messages).
    public static func read(path: String) throws -> [Point] {
        let name = path == "-" ? "stdin" : path
        let stream: InputStream
        if path == "-" {
            stream = InputStream(data: FileHandle.standardInput.readDataToEndOfFile())
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw ReadError.notFound(path) }
            guard !isDirectory.boolValue else { throw ReadError.unreadable(path, reason: "it is a folder") }
            guard FileManager.default.isReadableFile(atPath: path), let opened = InputStream(fileAtPath: path) else {
                throw ReadError.unreadable(path, reason: "permission denied")
            }
            stream = opened
        }
        let reader = CSVRecordReader(stream: stream)
        guard let header = try reader.next()?.fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else {
            throw ReadError.missingColumns(name, missing: ["qid", "lat", "lon"], header: "")
        }
        func column(_ names: [String]) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let q = column(["qid", "id"]), let la = column(["lat", "latitude"]), let lo = column(["lon", "lng", "longitude"]) else {
            let missing = [("qid", column(["qid", "id"])), ("lat", column(["lat", "latitude"])), ("lon", column(["lon", "lng", "longitude"]))]
                .filter { $0.1 == nil }.map(\.0)
            throw ReadError.missingColumns(name, missing: missing, header: header.joined(separator: ","))
        }
        var points: [Point] = []
        var lineOfQID: [String: Int] = [:]
        while let record = try reader.next() {
            let f = record.fields
            if f.count == 1 && f[0].isEmpty { continue }
            // As for a CSV feed: a row must have the header's fields, or its columns are not the header's.
            guard f.count == header.count else {
                throw ReadError.badRow(name, line: record.line, reason: "has \(f.count) field\(f.count == 1 ? "" : "s"), the header has \(header.count)")
            }
            guard !f[q].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ReadError.badRow(name, line: record.line, reason: "the qid is empty; every point needs one (its rows are keyed by it)")
            }
            if let first = lineOfQID.updateValue(record.line, forKey: f[q]) {
                throw ReadError.duplicateQID(name, qid: f[q], line: record.line, firstLine: first)
            }
            do {
                points.append(Point(qid: f[q], coordinate: try Coordinate(parsingLatitude: f[la], longitude: f[lo])))
            } catch {
                throw ReadError.badRow(name, line: record.line, reason: error.description)
            }
        }
        return points
    }
}
