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
    private var buffer: [UInt8]
    private var count = 0
    private var position = 0
    private var finished = false
    private var line = 1
    private var startedBOMCheck = false
    /// A field longer than this is refused (docs/robustness.md): no incident text comes near it.
    public var maxFieldBytes = 1 << 20

    public convenience init(stream: InputStream, separator: UInt8 = UInt8(ascii: ",")) {
        self.init(stream: stream, separator: separator, bufferSize: 1 << 16)
    }

    /// `bufferSize`: bytes read at a time (tests use tiny buffers to put every byte at a boundary).
    init(stream: InputStream, separator: UInt8, bufferSize: Int) {
        self.stream = stream
        self.separator = separator
        self.buffer = [UInt8](repeating: 0, count: max(1, bufferSize))
        stream.open()
    }

    deinit { stream.close() }

    /// The field being read (kept between records for its capacity).
    private var field: [UInt8] = []
    /// Inside a quoted field.
    private var inQuotes = false
    /// The last byte seen was a quote inside a quoted field: the next byte says whether it closed
    /// the field or was the first of an escaped `""` (it may sit in the next buffer).
    private var quotePending = false
    /// The last record ended with CR: a LF right after it belongs to that line end.
    private var skipLineFeed = false

    /// Reads the next buffer; false at the end of the input.
    private func refill() throws -> Bool {
        if finished { return false }
        count = stream.read(&buffer, maxLength: buffer.count)
        position = 0
        if count < 0 { throw ReadError.stream(stream.streamError.map { "\($0)" } ?? "unknown") }
        if count == 0 { finished = true; return false }
        if !startedBOMCheck {
            startedBOMCheck = true
            if count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { position = 3 }
            if position >= count { return try refill() }
        }
        return true
    }

    /// The next record, or nil at the end of the input.
    public func next() throws -> Record? {
        var fields: [String] = []
        field.removeAll(keepingCapacity: true)
        inQuotes = false
        quotePending = false
        let startLine = line
        var sawAnything = false
        while true {
            if position >= count, try !refill() { break }
            if skipLineFeed {
                skipLineFeed = false
                if buffer[position] == 0x0A { position += 1; continue }
            }
            sawAnything = true
            if try scan(into: &fields, startLine: startLine) { return Record(fields: fields, line: startLine) }
        }
        guard sawAnything else { return nil }
        fields.append(Self.text(field))
        return Record(fields: fields, line: startLine)
    }

    /// Reads the buffered bytes into `fields` and `field` until the record ends (true) or the
    /// buffer does (false). Runs of ordinary bytes are copied at once: a big CSV ingest spent a
    /// fifth of its reading time here when this went byte by byte.
    private func scan(into fields: inout [String], startLine: Int) throws -> Bool {
        let quote = UInt8(ascii: "\""), separator = self.separator, limit = maxFieldBytes
        var i = position, line = self.line, inQuotes = self.inQuotes, quotePending = self.quotePending
        var field = self.field
        self.field = []   // one owner while scanning: appends do not copy
        defer {
            position = i
            self.line = line
            self.inQuotes = inQuotes
            self.quotePending = quotePending
            self.field = field
        }
        return try buffer.withUnsafeBufferPointer { buffer -> Bool in
            let n = count
            while i < n {
                if quotePending {
                    quotePending = false
                    if buffer[i] == quote { field.append(quote); i += 1; continue }   // "" inside quotes
                    inQuotes = false   // the quote closed the field; this byte is read as outside quotes
                }
                var j = i
                if inQuotes {
                    while j < n, buffer[j] != quote {
                        if buffer[j] == 0x0A { line += 1 }
                        j += 1
                    }
                    field.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i..<j]))
                    if field.count > limit { throw ReadError.fieldTooLarge(line: startLine, limit: limit) }
                    if j < n { quotePending = true; j += 1 }
                    i = j
                    continue
                }
                while j < n {
                    let c = buffer[j]
                    if c == separator || c == quote || c == 0x0A || c == 0x0D { break }
                    j += 1
                }
                field.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i..<j]))
                if field.count > limit { throw ReadError.fieldTooLarge(line: startLine, limit: limit) }
                i = j
                guard i < n else { break }
                let c = buffer[i]
                i += 1
                if c == separator {
                    fields.append(Self.text(field))
                    field.removeAll(keepingCapacity: true)
                } else if c == quote {
                    // A quote opens a quoted field only at its start; elsewhere it is text.
                    if field.isEmpty { inQuotes = true } else { field.append(c) }
                } else {
                    line += 1
                    if c == 0x0D {
                        if i < n { if buffer[i] == 0x0A { i += 1 } } else { skipLineFeed = true }
                    }
                    fields.append(Self.text(field))
                    field.removeAll(keepingCapacity: true)
                    return true
                }
            }
            return false
        }
    }
}

extension CSVRecordReader {
    /// A field's text: UTF-8, or, when the bytes are not valid UTF-8, Windows-1252 (what
    /// spreadsheets export on German systems; every byte is a character there, so nothing is lost).
    static func text(_ bytes: [UInt8]) -> String {
        // ASCII, nearly every field: no validation needed (the generic validation was a tenth of reading a row).
        if !bytes.contains(where: { $0 >= 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
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
