import Foundation

/// Streams the records of a standard's XML document (DATEX II situations, Open511 events) as
/// `RecordTree`s: one record in memory at a time, with the same refusals as the Atom and RSS
/// readers (entity declarations, undeclared encodings, truncation, absurd nesting).
enum XMLRecordReading {
    struct Outcome {
        var records = 0
        var oversized = 0
        var rootName: String?
        var header: [String: String] = [:]
    }

    /// Calls `record(tree, line)` for every element named one of `recordNames`; `header` collects
    /// the text of the named elements met outside records (a publication time, say).
    static func read(_ input: FeedInput, format: FeedFormat, names: RecordNames, recordNames: [String], headerNames: [String] = [],
                     record: (RecordTree, [String: String], Int) throws -> Void) throws -> Outcome {
        // No pass over the whole file for bad UTF-8 first (it read a national feed twice, a tenth
        // of the ingest): libxml2 stops at such bytes itself ("a byte sequence that is not valid
        // in the document's encoding", with its line), and the records before are kept, as from
        // a feed that breaks off.
        try XMLFeedReader.checkDocument(input, format: format, wholeUTF8Check: false)
        let stream = try input.makeStream()
        var handlerError: Error?
        return try withoutActuallyEscaping(record) { record in
            var collector: RecordTreeCollector!
            collector = RecordTreeCollector(names: names, recordNames: recordNames, headerNames: headerNames) { tree, line in
                do {
                    try record(tree, collector.header, line)
                    return true
                } catch {
                    handlerError = error
                    return false
                }
            }
            let parser = SAXParser(handler: collector)
            let ok = parser.parse(stream)
            collector.finished = { _, _ in false }
            if let handlerError { throw handlerError }
            if let refusal = collector.refusal.message {
                throw FeedError.malformed(input.location, format: format, reason: refusal,
                                          entriesRead: collector.recordsSeen)
            }
            if !ok {
                let reason = parser.error.map { XMLFeedReader.describe(code: $0.code, message: $0.message, line: $0.line, column: $0.column) }
                    ?? "not an XML document"
                throw FeedError.malformed(input.location, format: format, reason: reason, entriesRead: collector.recordsSeen)
            }
            if collector.depth != 0 {
                throw FeedError.malformed(input.location, format: format,
                                          reason: "the document ends with \(collector.depth) elements still open (truncated?)",
                                          entriesRead: collector.recordsSeen)
            }
            return Outcome(records: collector.recordsSeen, oversized: collector.oversizedRecords, rootName: collector.rootName, header: collector.header)
        }
    }
}
