import Foundation

/// Finds the first byte sequence that is not UTF-8, streaming (constant memory).
///
/// Why: XML feeds declared UTF-8 (or undeclared) are checked before parsing, for an error that
/// names the line and suggests the likely cause (a Latin-1 file without its declaration), and so
/// that the parser only ever sees valid UTF-8. (Foundation's XMLParser, used before, crashed on
/// invalid UTF-8 in element names: Fuzz/corpus/atom/regression-invalid-utf8-name.)
package enum UTF8Validation {
    package struct Problem: Equatable {
        /// Byte offset and 1-based line of the first bad byte.
        package var offset: Int
        package var line: Int
    }

    /// The first problem in the bytes `open` streams. Lines are counted only when there is a
    /// problem, in a second pass (`open` is called again): the check runs over every XML feed
    /// before it is parsed, and counting line feeds doubled its cost.
    package static func firstProblem(in open: () throws -> InputStream) rethrows -> Problem? {
        guard let offset = firstProblemOffset(in: try open()) else { return nil }
        return Problem(offset: offset, line: try lineNumber(atOffset: offset, in: open()))
    }

    /// The offset of the first byte of the first sequence that is not UTF-8.
    private static func firstProblemOffset(in stream: InputStream) -> Int? {
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset = 0
        var need = 0            // continuation bytes still expected
        var lowerBound: UInt8 = 0x80, upperBound: UInt8 = 0xBF  // allowed range of the next continuation byte
        var sequenceStart = 0
        while true {
            let n = stream.read(&buffer, maxLength: buffer.count)
            if n <= 0 { break }
            var i = 0
            while i < n {
                // Eight ASCII bytes at a time (most feeds are nearly all ASCII).
                if need == 0, i + 8 <= n,
                   buffer.withUnsafeBytes({ $0.loadUnaligned(fromByteOffset: i, as: UInt64.self) }) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
                let b = buffer[i]
                defer { i += 1 }
                if need > 0 {
                    guard b >= lowerBound && b <= upperBound else { return sequenceStart }
                    need -= 1
                    lowerBound = 0x80; upperBound = 0xBF
                } else if b >= 0x80 {
                    sequenceStart = offset + i
                    switch b {
                    case 0xC2...0xDF: need = 1
                    case 0xE0: need = 2; lowerBound = 0xA0
                    case 0xE1...0xEC, 0xEE, 0xEF: need = 2
                    case 0xED: need = 2; upperBound = 0x9F          // no UTF-16 surrogates
                    case 0xF0: need = 3; lowerBound = 0x90
                    case 0xF1...0xF3: need = 3
                    case 0xF4: need = 3; upperBound = 0x8F          // ≤ U+10FFFF
                    default: return offset + i
                    }
                }
            }
            offset += n
        }
        return need > 0 ? sequenceStart : nil
    }

    /// The 1-based line of the byte at `target`.
    private static func lineNumber(atOffset target: Int, in stream: InputStream) -> Int {
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset = 0, line = 1
        while offset < target {
            let n = stream.read(&buffer, maxLength: min(buffer.count, target - offset))
            if n <= 0 { break }
            line += buffer[..<n].lazy.filter { $0 == 0x0A }.count
            offset += n
        }
        return line
    }

    /// Declared encodings whose bytes reach the parser as they are: checked as UTF-8 first.
    package static let utf8Encodings: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii"]
    /// Declared encodings libxml2 converts to UTF-8 (every byte sequence it accepts comes out valid).
    package static let convertedEncodings: Set<String> = [
        "utf-16", "utf-16le", "utf-16be", "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1",
        "iso-8859-15", "iso8859-15", "latin-9", "windows-1252", "cp1252",
    ]

    /// The encoding an XML document declares (`<?xml ... encoding="..."?>`), lowercased; nil when
    /// it declares none. A UTF-16 byte order mark counts as "utf-16".
    package static func declaredXMLEncoding(head: Data) -> String? {
        let bytes = [UInt8](head.prefix(512))
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return "utf-16" }
        // A UTF-8 byte order mark wins over any declaration (libxml2 reads such a document as UTF-8).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return "utf-8" }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>") else { return nil }
        let declaration = text[..<end.lowerBound]
        guard let match = declaration.range(of: #"encoding\s*=\s*["'][^"']*["']"#, options: .regularExpression) else { return nil }
        let value = declaration[match].split(whereSeparator: { $0 == "\"" || $0 == "'" }).dropFirst().first
        return value.map { $0.lowercased() }
    }
}
