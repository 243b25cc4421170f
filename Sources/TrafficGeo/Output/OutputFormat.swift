import Foundation

/// The output formats of query commands.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Human cards: title, subtitle, coordinate, coloured pin, distance and bearing.
    case annotations
    case table
    /// A JSON array of annotation objects.
    case json
    /// An RFC 7946 FeatureCollection with simplestyle-spec keys.
    case geojson
    /// RFC 8142 GeoJSON text sequence: one Feature per record, for streaming.
    case geojsonseq
    case csv

    /// The format a file name's extension names, as ogr2ogr and most tools choose: `.geojson`,
    /// `.json`, `.csv`, `.geojsons`/`.geojsonl`/`.geojsonseq`/`.ndjson` (text sequences), `.txt`
    /// (cards); nil for any other.
    public static func forFile(_ path: String) -> OutputFormat? {
        switch (path as NSString).pathExtension.lowercased() {
        case "geojson": .geojson
        case "json": .json
        case "csv": .csv
        case "geojsons", "geojsonl", "geojsonseq", "ndjson", "jsonl": .geojsonseq
        case "txt": .annotations
        default: nil
        }
    }

    /// Makes the writer for this format.
    public func makeWriter(sink: TextSink, color: Bool = false) -> ResultWriter {
        switch self {
        case .annotations: return AnnotationCardWriter(sink: sink, color: color)
        case .table: return TableWriter(sink: sink)
        case .json: return JSONArrayWriter(sink: sink)
        case .geojson: return GeoJSONWriter(sink: sink, sequence: false)
        case .geojsonseq: return GeoJSONWriter(sink: sink, sequence: true)
        case .csv: return CSVResultWriter(sink: sink)
        }
    }
}

/// Writes query results one at a time, so that big exports stream.
public protocol ResultWriter: AnyObject {
    func begin() throws
    func write(_ result: QueryResult) throws
    func end() throws
}

/// A buffered UTF-8 text destination: stdout, or a file written atomically (temp + rename).
///
///     let sink = try TextSink(path: "incidents.geojson")
///     sink.write("...")
///     try sink.commit()   // renames the finished file into place
public final class TextSink {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let temporaryPath: String?
    private let finalPath: String?

    /// Standard output.
    public init() {
        handle = FileHandle.standardOutput
        temporaryPath = nil
        finalPath = nil
    }

    /// A file: written to a temporary file beside it and renamed into place by `commit()`, so
    /// readers never see half a file and a failure leaves any old file untouched.
    public init(path: String) throws {
        // A device, pipe or socket (`-o /dev/null`, `-o /dev/stdout`, a FIFO) is written as it is:
        // renaming a file over it would replace /dev/null with a regular file for everyone.
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG, (info.st_mode & S_IFMT) != S_IFDIR {
            guard let handle = FileHandle(forWritingAtPath: path) else {
                throw OutputError.cannotWrite(path, reason: "cannot open it for writing (permission?)")
            }
            self.handle = handle
            temporaryPath = nil
            finalPath = nil
            return
        }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw OutputError.cannotWrite(path, reason: "the folder \(folder) does not exist")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw OutputError.cannotWrite(path, reason: "it is a directory")
        }
        // mkstemps: a fresh name, created with O_EXCL, so a symlink planted at a guessable
        // temporary name can never redirect the output; the rename then replaces `path` itself
        // (a symlink at `path` is replaced, its target is never written).
        var template = Array((folder + "/.\(url.lastPathComponent).XXXXXX.tmp").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else {
            throw OutputError.cannotWrite(path, reason: "cannot create a file in \(folder): \(String(cString: strerror(errno)))")
        }
        // mkstemp makes the file private (0600); an output file gets the usual 0666 minus the umask.
        let mask = umask(0)
        umask(mask)
        fchmod(fd, 0o666 & ~mask)
        self.handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        finalPath = path
    }

    public func write(_ text: String) {
        // Through the string's contiguous bytes: Data's generic append went byte by byte (a fifth
        // of writing a big batch of result rows).
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { try? flush() }
    }

    public func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: Data(buffer))
        } catch {
            throw OutputError.cannotWrite(finalPath ?? "stdout", reason: error.localizedDescription)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes; for a file, syncs and renames it into place.
    public func commit() throws {
        try flush()
        guard let temporaryPath, let finalPath else { return }
        try? handle.synchronize()
        try? handle.close()
        if rename(temporaryPath, finalPath) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw OutputError.cannotWrite(finalPath, reason: reason)
        }
    }

    /// Drops an unfinished file.
    public func abandon() {
        guard let temporaryPath else { return }
        try? handle.close()
        unlink(temporaryPath)
    }
}

public enum OutputError: Error, Sendable, CustomStringConvertible {
    case cannotWrite(String, reason: String)

    public var description: String {
        switch self {
        case let .cannotWrite(path, reason): return "cannot write \(path): \(reason)"
        }
    }
}
