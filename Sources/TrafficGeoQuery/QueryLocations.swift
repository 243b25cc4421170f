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
        case badRow(line: Int, reason: String)
        case notFound(String)

        public var description: String {
            switch self {
            case let .missingColumns(path): return "\(path): needs a header with qid (or id), lat and lon columns"
            case let .badRow(line, reason): return "line \(line): \(reason)"
            case let .notFound(path): return "\(path): no such file"
            }
        }
    }

    public static func read(path: String) throws -> [Point] {
        guard let stream = InputStream(fileAtPath: path), FileManager.default.fileExists(atPath: path) else {
            throw ReadError.notFound(path)
        }
        let reader = CSVRecordReader(stream: stream)
        guard let header = try reader.next()?.fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else {
            throw ReadError.missingColumns(path)
        }
        func column(_ names: [String]) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let q = column(["qid", "id"]), let la = column(["lat", "latitude"]), let lo = column(["lon", "lng", "longitude"]) else {
            throw ReadError.missingColumns(path)
        }
        var points: [Point] = []
        while let record = try reader.next() {
            let f = record.fields
            if f.count == 1 && f[0].isEmpty { continue }
            guard f.count > max(q, la, lo) else { throw ReadError.badRow(line: record.line, reason: "too few fields") }
            do {
                points.append(Point(qid: f[q], coordinate: try Coordinate(parsingLatitude: f[la], longitude: f[lo])))
            } catch {
                throw ReadError.badRow(line: record.line, reason: error.description)
            }
        }
        return points
    }
}
