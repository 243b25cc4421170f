import Foundation

/// A streaming RFC 4180 CSV reader: quoted fields with `""` escapes and line breaks inside,
/// CRLF, LF or CR line ends, a chosen separator, a leading UTF-8 BOM dropped.
///
///     let reader = CSVRecordReader(stream: InputStream(fileAtPath: path)!, separator: UInt8(ascii: ","))
///     while let record = try reader.next() { print(record.line, record.fields) }
///
/// Written by hand because the CSV package in the mirror (CSV.swift 2.5) reports a read error at
/// the end of every file on Linux, where `InputStream.hasBytesAvailable` stays true at EOF.
public final class CSVRecordReader {
    public struct Record {
        /// The fields, as UTF-8 text (invalid bytes become U+FFFD).
        public var fields: [String]
        /// 1-based line on which the record starts.
        public var line: Int
    }

    public enum ReadError: Error, CustomStringConvertible {
        case stream(String)
        case fieldTooLarge(line: Int, limit: Int)

        public var description: String {
            switch self {
            case let .stream(reason): return "read error: \(reason)"
            case let .fieldTooLarge(line, limit): return "a field starting on line \(line) is larger than \(limit) bytes (an unclosed quote?)"
            }
        }
    }

    private let stream: InputStream
    private let separator: UInt8
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var count = 0
    private var position = 0
    private var finished = false
    private var line = 1
    private var startedBOMCheck = false
    public var maxFieldBytes = 16 << 20

    public init(stream: InputStream, separator: UInt8 = UInt8(ascii: ",")) {
        self.stream = stream
        self.separator = separator
        stream.open()
    }

    deinit { stream.close() }

    private func nextByte() throws -> UInt8? {
        if position >= count {
            if finished { return nil }
            count = stream.read(&buffer, maxLength: buffer.count)
            position = 0
            if count < 0 { throw ReadError.stream(stream.streamError.map { "\($0)" } ?? "unknown") }
            if count == 0 { finished = true; return nil }
            if !startedBOMCheck {
                startedBOMCheck = true
                if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }
                if position >= count { return try nextByte() }
            }
        }
        defer { position += 1 }
        return buffer[position]
    }

    private func peekByte() throws -> UInt8? {
        guard let b = try nextByte() else { return nil }
        position -= 1
        return b
    }

    /// The next record, or nil at the end of the input.
    public func next() throws -> Record? {
        var fields: [String] = []
        var field: [UInt8] = []
        let startLine = line
        var inQuotes = false
        var sawAnything = false
        while let c = try nextByte() {
            sawAnything = true
            if inQuotes {
                if c == UInt8(ascii: "\"") {
                    if try peekByte() == UInt8(ascii: "\"") {
                        _ = try nextByte()
                        field.append(c)
                    } else {
                        inQuotes = false
                    }
                } else {
                    if c == 0x0A { line += 1 }
                    field.append(c)
                    if field.count > maxFieldBytes { throw ReadError.fieldTooLarge(line: startLine, limit: maxFieldBytes) }
                }
                continue
            }
            switch c {
            case UInt8(ascii: "\"") where field.isEmpty:
                inQuotes = true
            case separator:
                fields.append(Self.text(field))
                field.removeAll(keepingCapacity: true)
            case 0x0D, 0x0A:
                if c == 0x0D, try peekByte() == 0x0A { _ = try nextByte() }
                line += 1
                fields.append(Self.text(field))
                return Record(fields: fields, line: startLine)
            default:
                field.append(c)
                if field.count > maxFieldBytes { throw ReadError.fieldTooLarge(line: startLine, limit: maxFieldBytes) }
            }
        }
        guard sawAnything else { return nil }
        fields.append(Self.text(field))
        return Record(fields: fields, line: startLine)
    }
}

extension CSVRecordReader {
    /// A field's text: UTF-8, or, when the bytes are not valid UTF-8, Windows-1252 (what
    /// spreadsheets export on German systems; every byte is a character there, so nothing is lost).
    static func text<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map(windows1252)))
    }

    /// Windows-1252: Latin-1 except 0x80–0x9F, which hold € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ.
    private static func windows1252(_ byte: UInt8) -> Unicode.Scalar {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        return Unicode.Scalar(windows1252High[Int(byte - 0x80)])!
    }

    private static let windows1252High: [UInt32] = [0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
                               0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178]
}
