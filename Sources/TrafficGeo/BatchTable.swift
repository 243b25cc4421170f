import Foundation
import TrafficGeoSupport

/// The rows of a batch-geocoding input (CSV, TSV or JSON Lines), kept as they were so that the
/// output repeats every input column in order, followed by the geocoding columns.
public struct BatchTable: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case csv, tsv, jsonl

        /// From the file name, else from the content (a `{` first means JSON Lines; tabs in the first line, TSV).
        public static func detect(path: String?, head: Data) -> Format {
            if let path {
                let lower = path.lowercased()
                if lower.hasSuffix(".tsv") || lower.hasSuffix(".tab") { return .tsv }
                if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return .jsonl }
                if lower.hasSuffix(".csv") { return .csv }
            }
            let text = String(decoding: head.prefix(4096), as: UTF8.self).drop { $0 == "\u{FEFF}" || $0.isWhitespace }
            if text.first == "{" { return .jsonl }
            let firstLine = text.prefix { $0 != "\n" && $0 != "\r" }
            return firstLine.contains("\t") && !firstLine.contains(",") ? .tsv : .csv
        }
    }

    public let format: Format
    /// CSV/TSV: the header; JSON Lines: the keys seen, in first-seen order.
    public private(set) var columns: [String]
    /// CSV/TSV: the fields of each row; JSON Lines: the raw object text of each line.
    public private(set) var rows: [[String]]
    public let separator: Character
    /// JSON Lines only: each row's decoded object, for column lookups.
    private var objects: [[String: String]] = []

    /// The names of the columns the output adds.
    public static let resultColumns = ["latitude", "longitude", "precision", "confidence", "provider", "status", "error"]

    public enum ReadError: Error, CustomStringConvertible {
        case empty
        case badLine(Int, String)
        case tooManyRows(Int)

        public var description: String {
            switch self {
            case .empty: return "the input is empty (a CSV/TSV needs a header row)"
            case let .badLine(n, why): return "line \(n): \(why)"
            case let .tooManyRows(limit): return "more than \(limit) rows; split the input"
            }
        }
    }

    public static let maxRows = 5_000_000

    /// Reads the whole input (rows are kept for the output anyway).
    public init(data: Data, format: Format) throws {
        self.format = format
        switch format {
        case .csv, .tsv:
            var sep: Character = format == .tsv ? "\t" : ","
            // A ";"-separated file (German spreadsheets) named .csv: the header line tells.
            let firstLine = String(decoding: data.prefix(4096), as: UTF8.self).prefix { $0 != "\n" && $0 != "\r" }
            if format == .csv, !firstLine.contains(","), firstLine.contains(";") { sep = ";" }
            separator = sep
            let reader = CSVRecordReader(stream: InputStream(data: data), separator: sep.asciiValue!)
            guard let header = try reader.next() else { throw ReadError.empty }
            columns = header.fields
            var rows: [[String]] = []
            while let record = try reader.next() {
                if record.fields.count == 1 && record.fields[0].isEmpty { continue }
                var fields = record.fields
                // Short rows are padded, long ones keep their extra fields: nothing is lost.
                if fields.count < columns.count { fields += Array(repeating: "", count: columns.count - fields.count) }
                rows.append(fields)
                if rows.count > Self.maxRows { throw ReadError.tooManyRows(Self.maxRows) }
            }
            self.rows = rows
        case .jsonl:
            separator = "\n"
            columns = []
            rows = []
            var lineNumber = 0
            var keys: [String] = [], seen = Set<String>()
            for rawLine in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                let line = String(decoding: rawLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty { continue }
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                    throw ReadError.badLine(lineNumber, "not a JSON object")
                }
                for key in object.keys.sorted() where !seen.contains(key) { seen.insert(key); keys.append(key) }
                rows.append([line])
                objects.append(object.compactMapValues { LooseJSON.string($0) })
                if rows.count > Self.maxRows { throw ReadError.tooManyRows(Self.maxRows) }
            }
            columns = keys
        }
    }

    /// The value of `column` in row `i` (JSON values as text).
    public func value(_ column: String, row i: Int) -> String? {
        switch format {
        case .csv, .tsv:
            guard let c = columns.firstIndex(of: column), c < rows[i].count else { return nil }
            return rows[i][c]
        case .jsonl:
            return objects[i][column]
        }
    }

    /// The query of row `i`: one column, or a template such as "{road} {junction}, {city}".
    public func query(row i: Int, column: String?, template: String?) -> String {
        if let template {
            var out = ""
            var rest = Substring(template)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                out += rest[..<open]
                out += value(String(rest[rest.index(after: open)..<close]), row: i) ?? ""
                rest = rest[rest.index(after: close)...]
            }
            out += rest
            // Empty placeholders leave stray separators: "A4 , Olpe" → "A4, Olpe".
            return out.normalizedWhitespace.replacingOccurrences(of: " ,", with: ",").trimmingCharacters(in: CharacterSet(charactersIn: ", "))
        }
        return value(column ?? columns.first ?? "", row: i)?.normalizedWhitespace ?? ""
    }

    /// Names for the result columns that do not clash with the input's own (`latitude` →
    /// `geocoded_latitude` when the input already has a latitude).
    public var outputResultColumns: [String] {
        let existing = Set(columns.map { $0.lowercased() })
        return Self.resultColumns.map { existing.contains($0) ? "geocoded_\($0)" : $0 }
    }

    /// The header line of the output (CSV/TSV), or nil for JSON Lines.
    public func outputHeader() -> String? {
        guard format != .jsonl else { return nil }
        return (columns + outputResultColumns).map { quote($0) }.joined(separator: String(separator)) + "\n"
    }

    /// One output line: the input row unchanged, then the result fields.
    public func outputLine(row i: Int, result: [String?]) -> String {
        switch format {
        case .csv, .tsv:
            return (rows[i].map { quote($0) } + result.map { quote($0 ?? "") }).joined(separator: String(separator)) + "\n"
        case .jsonl:
            var line = rows[i][0]
            guard line.hasSuffix("}") else { return line + "\n" }
            line.removeLast()
            var extra: [String] = []
            for (name, value) in zip(outputResultColumns, result) {
                guard let value else { continue }
                let isNumber = (name.hasSuffix("latitude") || name.hasSuffix("longitude") || name.hasSuffix("confidence")) && Double(value) != nil
                extra.append(JSONObjectText.string(name) + ":" + (isNumber ? value : JSONObjectText.string(value)))
            }
            let body = line.trimmingCharacters(in: .whitespaces)
            let needsComma = !body.hasSuffix("{") && !extra.isEmpty
            return body + (needsComma ? "," : "") + extra.joined(separator: ",") + "}\n"
        }
    }

    private func quote(_ field: String) -> String {
        if format == .tsv { return field.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ") }
        guard field.contains(where: { $0 == separator || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
