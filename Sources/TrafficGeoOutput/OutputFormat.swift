import Foundation
#if canImport(Glibc)
import Glibc
/// write(2), named apart from `TextSink.write`.
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif
import TrafficGeoModel
import TrafficGeoStore

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
    /// An OGC GeoPackage (an SQLite file; needs a file name, `-o`): point and line layers.
    case gpkg

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
        case "gpkg": .gpkg
        default: nil
        }
    }

    /// Whether the format can be written with `--crs` in another CRS (GeoJSON is WGS84 by definition).
    public var takesOtherCRS: Bool { self == .csv || self == .gpkg }

    /// Makes the writer for this format.
    /// `width`: the terminal's columns, for cards (nil writes whole subtitles). `crs`: the CRS
    /// of CSV and GeoPackage positions. `file`: where a GeoPackage goes (the others go to `sink`).
    /// `alongRoute`: the answers are along a route (`along`): CSV adds their `along_m` column.
    public func makeWriter(sink: TextSink, color: Bool = false, geometry: GeometryChoice = .point, width: Int? = nil,
                           crs: OutputCRS = .wgs84, file: String? = nil, alongRoute: Bool = false) -> ResultWriter {
        switch self {
        case .gpkg:
            precondition(file != nil, "a GeoPackage is written to a file")
            return GeoPackageWriter(path: file ?? "incidents.gpkg", crs: crs)
        case .annotations: return AnnotationCardWriter(sink: sink, color: color, width: width)
        case .table: return TableWriter(sink: sink)
        case .json: return JSONArrayWriter(sink: sink)
        case .geojson: return GeoJSONWriter(sink: sink, sequence: false, geometry: geometry)
        case .geojsonseq: return GeoJSONWriter(sink: sink, sequence: true, geometry: geometry)
        case .csv: return CSVResultWriter(sink: sink, crs: crs, alongRoute: alongRoute)
        }
    }
}

/// Which geometry a GeoJSON feature gets. One type per file is what GIS tools expect: GDAL calls
/// a layer of Points and LineStrings "Geometry: Unknown" and cannot write it to a Shapefile.
public enum GeometryChoice: String, Sendable, CaseIterable {
    /// A Point at every incident (where its segment starts, if it has one).
    case point
    /// A LineString along every incident's segment; incidents without one are left out.
    case segment
    /// A LineString where there is a segment, else a Point (for map viewers, not GIS tools).
    case mixed

    /// Whether an incident has the geometry asked for.
    public func fits(_ incident: Incident) -> Bool {
        self != .segment || (incident.segment?.count ?? 0) >= 2
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
///     try sink.write("...")
///     try sink.commit()   // renames the finished file into place
public final class TextSink {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// The first write that failed; every later write, flush or commit throws it.
    private var failure: OutputError?
    private let temporaryPath: String?
    private let finalPath: String?
    /// What messages call the destination: "stdout" or the path given.
    private let name: String

    /// Standard output.
    public init() {
        handle = FileHandle.standardOutput
        temporaryPath = nil
        finalPath = nil
        name = "stdout"
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
            name = path
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
        // The rename would replace a file its permissions protect: refuse, as `>` in a shell does.
        let exists = lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        if exists, access(path, W_OK) != 0 {
            throw OutputError.cannotWrite(path, reason: "it is read-only; make it writable (chmod u+w) or choose another file")
        }
        // mkstemps: a fresh name, created with O_EXCL, so a symlink planted at a guessable
        // temporary name can never redirect the output; the rename then replaces `path` itself
        // (a symlink at `path` is replaced, its target is never written).
        var template = Array((folder + "/.\(url.lastPathComponent).XXXXXX.tmp").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else {
            throw OutputError.cannotWrite(path, reason: "cannot create a file in \(folder): \(String(cString: strerror(errno)))")
        }
        // mkstemp makes the file private (0600): a replaced file keeps its mode, a new one gets
        // the usual 0666 minus the umask.
        if exists {
            fchmod(fd, info.st_mode & 0o7777)
        } else {
            let mask = umask(0)
            umask(mask)
            fchmod(fd, 0o666 & ~mask)
        }
        self.handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        temporaryPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        finalPath = path
        name = path
    }

    /// Appends `text`, writing the buffer out once it holds 64 KiB. After a failed write (the
    /// reader of a pipe quit, a full disk) every later one throws the same failure: a long run
    /// stops at its next result instead of computing output nobody will read (`… | head`).
    public func write(_ text: String) throws {
        try throwIfFailed()
        // Through the string's contiguous bytes: Data's generic append went byte by byte (a fifth
        // of writing a big batch of result rows).
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func throwIfFailed() throws {
        if let failure { throw failure }
    }

    public func flush() throws {
        try throwIfFailed()
        guard !buffer.isEmpty else { return }
        // write(2) itself, to tell a reader that has gone (EPIPE) from other failures: SwiftNIO
        // ignores SIGPIPE process-wide once it opens a socket (the PostGIS store, an HTTP
        // geocoder), so the signal that ends a plain `trafficgeo near | head` never comes.
        let fd = handle.fileDescriptor
        let error: Int32? = buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if let error {
            failure = error == EPIPE ? .readerGone(name) : .cannotWrite(name, reason: String(cString: strerror(error)))
            buffer.removeAll()
            throw failure!
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
    /// The reader of a pipe quit (`trafficgeo near … | head`): not a failure to report, the
    /// command just ends, as a command killed by SIGPIPE does.
    case readerGone(String)

    public var description: String {
        switch self {
        case let .cannotWrite(path, reason): return "cannot write \(path): \(reason)"
        case let .readerGone(path): return "cannot write \(path): the reader has gone (broken pipe)"
        }
    }
}
