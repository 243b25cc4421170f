import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoSupport

/// An ALERT-C (TMC) location a DATEX II record gives instead of coordinates: a location table,
/// a primary location (where the event is, downstream) and for a stretch a secondary one
/// (upstream), each with an offset in metres (method 4), and the direction.
public struct AlertCReference: Sendable, Equatable, CustomStringConvertible {
    /// As the record says it: "6.13" is table 6, version 13.
    public var table: String
    public var primary: Int
    public var primaryOffset: Double?
    public var secondary: Int?
    public var secondaryOffset: Double?
    public var direction: String?

    /// The table number (the part before the version).
    public var tableNumber: Int? { Int(table.split(separator: ".").first.map(String.init)?.trimmed ?? "") }

    /// The incident property a DATEX II record's reference is kept under, as `description`.
    public static let property = "alert_c"

    /// The table a kept reference (`description`) names: "6.13" of "table 6.13 primary 12345 …".
    public static func table(inDescription text: String) -> String? {
        let words = text.split(separator: " ")
        return words.count > 1 && words[0] == "table" ? String(words[1]) : nil
    }

    public var description: String {
        var s = "table \(table) primary \(primary)"
        if let o = primaryOffset { s += "+\(Int(o))m" }
        if let secondary { s += " secondary \(secondary)" }
        if let o = secondaryOffset { s += "+\(Int(o))m" }
        if let direction { s += " \(direction)" }
        return s
    }
}

/// A TMC location table in the exchange format (`--tmc-table DIR`): the point locations of
/// POINTS.DAT (XCOORD/YCOORD in 1/100000 degree) and the chain of POFFSETS.DAT (each point's
/// neighbours in the negative and positive direction). Files are `;`-separated with a header
/// row naming the columns; only the columns read here matter, in any order.
public struct AlertCLocationTable: Sendable {
    struct Key: Hashable { let table: Int, code: Int }
    private var points: [Key: Coordinate] = [:]
    private var negative: [Key: Int] = [:]
    private var positive: [Key: Int] = [:]
    public private(set) var tables: Set<Int> = []
    public var pointCount: Int { points.count }

    public enum LoadError: Error, CustomStringConvertible {
        case missing(String)
        case unreadable(String, String)

        public var description: String {
            switch self {
            case let .missing(path): "\(path): no POINTS.DAT there (a TMC location table in the exchange format has LOCATIONCODES.DAT, POINTS.DAT, POFFSETS.DAT, …)"
            case let .unreadable(path, reason): "\(path): \(reason)"
            }
        }
    }

    public init(directory: String) throws {
        let dir = URL(fileURLWithPath: directory)
        func file(_ name: String) -> URL? {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return entries.first { $0.uppercased() == name }.map { dir.appendingPathComponent($0) }
        }
        guard let pointsFile = file("POINTS.DAT") else { throw LoadError.missing(directory) }
        for row in try Self.rows(pointsFile, needing: ["TABCD", "LCD", "XCOORD", "YCOORD"]) {
            guard let table = Int(row["TABCD"]!), let code = Int(row["LCD"]!),
                  let x = Self.coordinate(row["XCOORD"]!), let y = Self.coordinate(row["YCOORD"]!),
                  let c = try? Coordinate(validatingLatitude: y, longitude: x) else { continue }
            points[Key(table: table, code: code)] = c
            tables.insert(table)
        }
        if let offsets = file("POFFSETS.DAT") {
            for row in try Self.rows(offsets, needing: ["TABCD", "LCD", "NEG_OFF_LCD", "POS_OFF_LCD"]) {
                guard let table = Int(row["TABCD"]!), let code = Int(row["LCD"]!) else { continue }
                let key = Key(table: table, code: code)
                if let n = Int(row["NEG_OFF_LCD"]!), n != 0 { negative[key] = n }
                if let p = Int(row["POS_OFF_LCD"]!), p != 0 { positive[key] = p }
            }
        }
    }

    /// "+00684210" → 6.8421.
    static func coordinate(_ text: String) -> Double? {
        guard let v = Double(text.trimmed.replacingOccurrences(of: "+", with: "")) else { return nil }
        return v / 100_000
    }

    private static func rows(_ url: URL, needing columns: [String]) throws -> [[String: String]] {
        guard let data = try? Data(contentsOf: url) else { throw LoadError.unreadable(url.path, "cannot read it") }
        // The tables are Latin-1 (names with accents); only numbers are read, so decoding loosely is enough.
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(whereSeparator: \.isNewline).makeIterator()
        guard let header = lines.next() else { throw LoadError.unreadable(url.path, "empty") }
        let names = header.split(separator: ";", omittingEmptySubsequences: false).map { String($0).trimmed.uppercased() }
        var index: [String: Int] = [:]
        for c in columns {
            guard let i = names.firstIndex(of: c) else { throw LoadError.unreadable(url.path, "no \(c) column in its header") }
            index[c] = i
        }
        var out: [[String: String]] = []
        while let line = lines.next() {
            let fields = line.split(separator: ";", omittingEmptySubsequences: false)
            var row: [String: String] = [:]
            for (c, i) in index where i < fields.count { row[c] = String(fields[i]).trimmed }
            if row.count == columns.count { out.append(row) }
        }
        return out
    }

    /// Where a reference is: the primary point (moved by its offset towards the secondary, or
    /// upstream for a point) and, for a stretch, the line along the chain from the secondary
    /// (upstream) to the primary, each end moved by its offset.
    public func resolve(_ reference: AlertCReference) -> Result<(position: Coordinate, line: [Coordinate]?), PlacementProblem> {
        guard let table = reference.tableNumber else { return .failure(PlacementProblem("ALERT-C table '\(reference.table.prefix(20))' is not a table number")) }
        guard tables.contains(table) else {
            return .failure(PlacementProblem("ALERT-C table \(table) is not in the location table given (tables \(tables.sorted().map(String.init).joined(separator: ", ")))"))
        }
        guard let primary = points[Key(table: table, code: reference.primary)] else {
            return .failure(PlacementProblem("ALERT-C location \(reference.primary) is not a point of table \(table)"))
        }
        if let secondaryCode = reference.secondary, secondaryCode != reference.primary {
            guard points[Key(table: table, code: secondaryCode)] != nil else {
                return .failure(PlacementProblem("ALERT-C location \(secondaryCode) is not a point of table \(table)"))
            }
            guard let codes = chain(table: table, from: secondaryCode, to: reference.primary) else {
                return .failure(PlacementProblem("ALERT-C locations \(secondaryCode) and \(reference.primary) are not on one chain of table \(table)"))
            }
            var line = codes.compactMap { points[Key(table: table, code: $0)] }
            if let o = reference.secondaryOffset, o > 0 { line = Self.trimStart(line, by: o) }
            if let o = reference.primaryOffset, o > 0 { line = Self.trimStart(line.reversed(), by: o).reversed() }
            return .success((line.last ?? primary, line.count >= 2 ? line : nil))
        }
        // A point: an offset moves it upstream (against the direction of travel) along the chain.
        if let o = reference.primaryOffset, o > 0 {
            let direction = reference.direction?.lowercased() ?? ""
            let upstream = direction.hasPrefix("neg") ? positive[Key(table: table, code: reference.primary)]
                : direction.hasPrefix("pos") ? negative[Key(table: table, code: reference.primary)] : nil
            if let upstream, let next = points[Key(table: table, code: upstream)] {
                return .success((Self.trimStart([primary, next], by: o).first ?? primary, nil))
            }
        }
        return .success((primary, nil))
    }

    /// The codes from `a` to `b` along the chain, in either direction (at most 500 steps).
    private func chain(table: Int, from a: Int, to b: Int) -> [Int]? {
        for links in [positive, negative] {
            var codes = [a]
            var current = a
            while codes.count < 500, let next = links[Key(table: table, code: current)] {
                codes.append(next)
                if next == b { return codes }
                current = next
            }
        }
        return nil
    }

    /// The line with its first `distance` metres cut off (the start moved along it).
    static func trimStart(_ line: [Coordinate], by distance: Double) -> [Coordinate] {
        var remaining = distance
        var i = 0
        while i + 1 < line.count {
            let (length, bearing) = Geodesic.inverse(from: line[i], to: line[i + 1])
            if remaining < length {
                let start = Geodesic.direct(from: line[i], bearing: bearing, distance: remaining)
                return [start] + line[(i + 1)...]
            }
            remaining -= length
            i += 1
        }
        return [line.last!]
    }
}

/// Why a record's location gives no position (coordinates out of range, an ALERT-C code the
/// table lacks): kept on the incident (`Incident.positionProblemProperty`), which is geocoded instead.
public struct PlacementProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
