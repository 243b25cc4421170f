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
        case missingColumns(String)
        case badRow(String, line: Int, reason: String)
        case duplicateQID(String, qid: String, line: Int, firstLine: Int)
        case notFound(String)
        case unreadable(String, reason: String)

        public var description: String {
            switch self {
            case let .missingColumns(path): return "\(path): needs a header with qid (or id), lat and lon columns"
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
            throw ReadError.missingColumns(name)
        }
        func column(_ names: [String]) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let q = column(["qid", "id"]), let la = column(["lat", "latitude"]), let lo = column(["lon", "lng", "longitude"]) else {
            throw ReadError.missingColumns(name)
        }
        var points: [Point] = []
        var lineOfQID: [String: Int] = [:]
        while let record = try reader.next() {
            let f = record.fields
            if f.count == 1 && f[0].isEmpty { continue }
            guard f.count > max(q, la, lo) else { throw ReadError.badRow(name, line: record.line, reason: "too few fields") }
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
