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

    /// Why a queries file cannot be used: its kind (`code`), the file, the line where one is to
    /// blame, and the words. A struct over kinds it keeps to itself, as `FeedError` is: a kind
    /// added later breaks no user's `switch`.
    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Kind: String, Sendable { case notFound, unreadable, missingColumns, badRow, duplicateQID }
            private let kind: Kind
            private init(_ kind: Kind) { self.kind = kind }
            /// No such file.
            public static let notFound = Code(.notFound)
            /// The file is there but cannot be read (a folder, no permission).
            public static let unreadable = Code(.unreadable)
            /// The header lacks the qid, lat or lon column (or the file is empty).
            public static let missingColumns = Code(.missingColumns)
            /// A row cannot be read as a point.
            public static let badRow = Code(.badRow)
            /// A qid is on two rows.
            public static let duplicateQID = Code(.duplicateQID)
            public var description: String { kind.rawValue }
        }

        public let code: Code
        /// The file (`stdin` for standard input).
        public let path: String
        /// The line to blame (badRow, duplicateQID).
        public let line: Int?
        public let description: String

        /// Missing or unreadable, rather than read and found wrong.
        public var isUnreadable: Bool { code == .notFound || code == .unreadable }

        static func notFound(_ path: String) -> ReadError {
            ReadError(code: .notFound, path: path, line: nil, description: "\(path): no such file")
        }

        static func unreadable(_ path: String, reason: String) -> ReadError {
            ReadError(code: .unreadable, path: path, line: nil, description: "\(path): cannot read: \(reason)")
        }

        static func badRow(_ path: String, line: Int, reason: String) -> ReadError {
            ReadError(code: .badRow, path: path, line: line, description: "\(path) line \(line): \(reason)")
        }

        static func duplicateQID(_ path: String, qid: String, line: Int, firstLine: Int) -> ReadError {
            // Rows are keyed by qid: two points under one qid could not be told apart.
            ReadError(code: .duplicateQID, path: path, line: line,
                      description: "\(path) line \(line): the qid '\(qid)' is also on line \(firstLine); every point needs its own")
        }

        /// `missing`: the columns the header lacks; `header`: the header as read ("" for an empty file).
        static func missingColumns(_ path: String, missing: [String], header: String) -> ReadError {
            var text = "\(path): needs a header with qid (or id), lat and lon columns"
            if header.isEmpty {
                text += "; the file is empty"
            } else {
                text += "; its header '\(header.prefix(80))' has no \(missing.joined(separator: ", "))"
                // A spreadsheet's export in a comma-decimal locale separates with ';'.
                if let separator = [";", "\t", "|"].first(where: { header.contains($0) }) {
                    text += " (separated by '\(separator == "\t" ? "\\t" : separator)'? trafficgeo reads commas)"
                }
            }
            return ReadError(code: .missingColumns, path: path, line: nil, description: text)
        }
    }

    /// How messages name the file `path` (`-` is standard input).
    public static func name(of path: String) -> String { path == "-" ? "stdin" : path }

    /// Each column read: its name in messages and the header names it goes by.
    private static let columns = [("qid", ["qid", "id"]), ("lat", ["lat", "latitude"]), ("lon", ["lon", "lng", "longitude"])]

    /// Reads the points of `path`; `-` is standard input (named `stdin` in messages).
    public static func read(path: String) throws -> [Point] {
        let name = name(of: path)
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
        let found = columns.map { _, names in names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let q = found[0], let la = found[1], let lo = found[2] else {
            let missing = zip(columns, found).filter { $0.1 == nil }.map(\.0.0)
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
