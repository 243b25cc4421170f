import Foundation
import Testing
@testable import TrafficGeoFeeds
@testable import TrafficGeoModel
@testable import TrafficGeoSupport
import TrafficGeoTestSupport

/// The byte-level fast paths ingest takes for every entry, each checked against the plain rule.
@Suite("Text scanning")
struct TextScanningTests {
    static let pieces = ["a", "Köln", "A4", " ", "  ", "\t", "\n", "\r\n", "\u{00A0}", "\u{2009}", "\u{3000}", "\u{0085}", "€", "x y", "-", "ß"]

    @Test func whitespaceRulesHold() {
        var generator = SplitMix64(seed: 21)
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0...7, using: &generator)).map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
            // The rule: words are the runs of non-white-space scalars, joined by one space.
            let words = text.unicodeScalars.split(whereSeparator: { $0.properties.isWhitespace }).map { String(String.UnicodeScalarView($0)) }
            #expect(text.normalizedWhitespace == words.joined(separator: " "), "\(text.debugDescription)")
            var scalars = Substring(text).unicodeScalars
            while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
            while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
            #expect(text.trimmed == String(scalars), "\(text.debugDescription)")
        }
    }

    /// The decimal fast path gives strtod's double, bit for bit, and leaves the rest to it.
    @Test func decimalsAreReadAsStrtodReadsThem() {
        var generator = SplitMix64(seed: 24)
        let digits = Array("0123456789")
        for _ in 0..<50_000 {
            let whole = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in digits.randomElement(using: &generator)! })
            let fraction = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in digits.randomElement(using: &generator)! })
            let sign = ["", "-", "+"].randomElement(using: &generator)!
            let text = sign + whole + (Bool.random(using: &generator) || fraction.isEmpty ? "." + fraction : "")
            #expect(DecimalText.double(text)?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
        for text in ["1e5", "0x1p3", "inf", "nan", "", "-", ".", "1.", ".5", " 1", "1 ", "12345678901234567.5", "50,9", "9007199254740993"] {
            #expect(DecimalText.double(text)?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
    }

    /// Folding several texts into one buffer is folding them joined by a space.
    @Test func foldingAppendsAsIfJoined() {
        let pieces = Self.pieces + ["Ä", "ÖL", "é", "Straße", "A1:", "..", "İ", "½", "Æ"]
        var generator = SplitMix64(seed: 23)
        for _ in 0..<5_000 {
            let texts = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                (0..<Int.random(in: 0...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            }
            var buffer: [UInt8] = []
            for text in texts { TextFolding.append(text, to: &buffer) }
            #expect(String(decoding: buffer, as: UTF8.self) == TextFolding.fold(texts.joined(separator: " ")), "\(texts)")
        }
        #expect(TextFolding.fold("A4: KÖLN – Olpe, Straße") == "a4 koeln olpe strasse")
    }

    @Test func utf8ProblemsAreFoundWhereTheDecoderFindsThem() {
        let chunks: [[UInt8]] = [Array("abc".utf8), Array("line\n".utf8), Array("0123456789abcdef".utf8), Array("ö".utf8), Array("€".utf8),
                                 Array("😀".utf8), [0xC3], [0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE0, 0x80], [0xFF], Array("\n\n".utf8)]
        var generator = SplitMix64(seed: 22)
        var problems = 0
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                // Mostly valid text, so that problems sit at every distance from the start.
                let chunk = Int.random(in: 0..<10, using: &generator) == 0 ? chunks.randomElement(using: &generator)! : chunks[Int.random(in: 0...6, using: &generator)]
                bytes += chunk
            }
            // The standard library's decoder: the first error starts after the scalars before it.
            var expected: UTF8Validation.Problem?
            var parser = Unicode.UTF8.ForwardParser(), iterator = bytes.makeIterator(), offset = 0
            decoding: while true {
                switch parser.parseScalar(from: &iterator) {
                case let .valid(scalar): offset += scalar.count
                case .emptyInput: break decoding
                case .error:
                    expected = UTF8Validation.Problem(offset: offset, line: bytes[..<offset].filter { $0 == 0x0A }.count + 1)
                    break decoding
                }
            }
            let found = UTF8Validation.firstProblem { InputStream(data: Data(bytes)) }
            #expect(found?.offset == expected?.offset && found?.line == expected?.line, "\(bytes)")
            if expected != nil { problems += 1 }
        }
        #expect(problems > 1000)
    }

    @Test(arguments: [
        ("https://x/?id=1&lat=50.5&lon=7.25", Coordinate(latitude: 50.5, longitude: 7.25)),
        ("https://x/?LAT=50.5;Lng=7.25#lat=1&lon=1", Coordinate(latitude: 50.5, longitude: 7.25)),
        ("https://x/?latitude=50.5&longitude=7.25&lat=1", Coordinate(latitude: 50.5, longitude: 7.25)),
        ("https://x/?lat=%2050.5&long=7.25", Coordinate(latitude: 50.5, longitude: 7.25)),
        ("https://x/?&&lat=50.5&&lon=7.25&", Coordinate(latitude: 50.5, longitude: 7.25)),
    ])
    func weblinkCoordinates(link: String, expected: Coordinate) throws {
        #expect(try EntryFields.weblinkCoordinate(link) == expected)
    }

    /// Plain decimal values are read straight from the link's bytes, anything else as text: both
    /// give what reading the (percent-decoded) values as text gives, errors included.
    @Test func weblinkValuesReadAsTheirText() {
        let odd = ["", "abc", "1e1", "%2050.5", "50.5%20", "%35%30", "7.", ".5", "95", "-181", "12345678901234567.5", "9007199254740993", "٥٠"]
        var generator = SplitMix64(seed: 26)
        func value() -> String {
            if Int.random(in: 0..<4, using: &generator) == 0 { return odd.randomElement(using: &generator)! }
            let sign = ["", "-", "+"].randomElement(using: &generator)!
            let fraction = Int.random(in: 0...9, using: &generator)
            return sign + String(Int.random(in: 0...200, using: &generator))
                + (fraction == 0 ? "" : "." + String((0..<fraction).map { _ in "0123456789".randomElement(using: &generator)! }))
        }
        func outcome(_ read: () throws(CoordinateError) -> Coordinate?) -> String {
            do { return try read().map { "\($0.latitude.bitPattern) \($0.longitude.bitPattern)" } ?? "nil" } catch { return "\(error)" }
        }
        for _ in 0..<5_000 {
            let (latitude, longitude) = (value(), value())
            let link = "https://x/?id=1&lat=\(latitude)&lon=\(longitude)"
            let expected = outcome { () throws(CoordinateError) in
                try EntryFields.coordinate(latitude.removingPercentEncoding ?? latitude, longitude.removingPercentEncoding ?? longitude)
            }
            #expect(outcome { () throws(CoordinateError) in try EntryFields.weblinkCoordinate(link) } == expected, "\(link)")
        }
    }

    @Test func weblinksWithoutBothCoordinates() throws {
        for link in ["https://x/lat=50&lon=7", "https://x/?lat=50", "https://x/?id=1#lat=50&lon=7", "https://x/?latitudes=50&lon=7", "?"] {
            #expect(try EntryFields.weblinkCoordinate(link) == nil, "\(link)")
        }
        #expect(throws: CoordinateError.self) { try EntryFields.weblinkCoordinate("https://x/?lat=&lon=7") }
        #expect(throws: CoordinateError.self) { try EntryFields.weblinkCoordinate("https://x/?lat=95&lon=7") }
    }

    /// The run-scanning CSV reader gives the records of the plain RFC 4180 state machine (below,
    /// byte by byte), whatever buffer boundaries fall where.
    @Test func csvRecordsMatchTheByteByByteReading() throws {
        let pieces = ["a", "bc", ",", ";", "\"", "\"\"", "\n", "\r", "\r\n", " ", "ö", "x\"y"]
        var generator = SplitMix64(seed: 25)
        for round in 0..<3_000 {
            var text = (0..<Int.random(in: 0...14, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            if round % 7 == 0 { text = "\u{FEFF}" + text }
            let bytes = Array(text.utf8)
            let expected = Self.plainCSV(bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes)
            // A BOM is recognised in the first read, which holds at least 3 bytes in practice.
            for bufferSize in [1, 2, 3, 7, 1 << 16] where bufferSize >= 3 || round % 7 != 0 {
                let reader = CSVRecordReader(stream: InputStream(data: Data(bytes)), separator: UInt8(ascii: ","), bufferSize: bufferSize)
                var records: [[String]] = [], lines: [Int] = []
                while let record = try reader.next() { records.append(record.fields); lines.append(record.line) }
                #expect(records == expected.map(\.fields) && lines == expected.map(\.line), "\(text.debugDescription) buffer \(bufferSize)")
            }
        }
    }

    /// RFC 4180 byte by byte: the reader as it was before it scanned runs.
    static func plainCSV(_ bytes: [UInt8]) -> [(fields: [String], line: Int)] {
        var records: [(fields: [String], line: Int)] = []
        var i = 0, line = 1
        func peek() -> UInt8? { i < bytes.count ? bytes[i] : nil }
        while i < bytes.count {
            var fields: [String] = [], field: [UInt8] = []
            let startLine = line
            var inQuotes = false, ended = false
            while i < bytes.count {
                let c = bytes[i]
                i += 1
                if inQuotes {
                    if c == UInt8(ascii: "\"") {
                        if peek() == UInt8(ascii: "\"") { i += 1; field.append(c) } else { inQuotes = false }
                    } else {
                        if c == 0x0A { line += 1 }
                        field.append(c)
                    }
                    continue
                }
                switch c {
                case UInt8(ascii: "\"") where field.isEmpty: inQuotes = true
                case UInt8(ascii: ","): fields.append(CSVRecordReader.text(field)); field = []
                case 0x0D, 0x0A:
                    if c == 0x0D, peek() == 0x0A { i += 1 }
                    line += 1
                    ended = true
                default: field.append(c)
                }
                if ended { break }
            }
            fields.append(CSVRecordReader.text(field))
            records.append((fields, startLine))
        }
        return records
    }
}
