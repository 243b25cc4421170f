import CZlib
import Foundation

/// gzip-compressed feeds: national DATEX II feeds are published as `.xml.gz`, and a download
/// may come compressed without a `Content-Encoding` (a `.gz` file served as such). A feed whose
/// first bytes are gzip's magic number is inflated into a temporary file before it is read, so
/// that detection and the streaming readers see the document itself.
enum GzipInflation {
    static func isGzip(_ head: Data) -> Bool { head.count >= 2 && head[head.startIndex] == 0x1F && head[head.startIndex + 1] == 0x8B }

    enum Failure: Error {
        case corrupt(String)
        case tooLarge
        case io(String)
    }

    /// Inflates `source` into `destination` (every member of a multi-member file, in order),
    /// stopping past `maxBytes` of output: a small file that inflates without end is a bomb.
    static func inflate(_ source: URL, into destination: URL, maxBytes: Int64) throws(Failure) {
        guard let input = FileHandle(forReadingAtPath: source.path) else { throw .io("cannot open \(source.path)") }
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil),
              let output = FileHandle(forWritingAtPath: destination.path) else { throw .io("cannot create a temporary file") }
        defer { try? output.close() }
        var stream = z_stream()
        // 16 + MAX_WBITS: a gzip header and trailer, not a raw zlib stream.
        guard inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        let outSize = 1 << 18
        var outBuffer = [UInt8](repeating: 0, count: outSize)
        var written: Int64 = 0
        var finishedMember = false
        while true {
            let chunk: Data
            do { chunk = try input.read(upToCount: 1 << 18) ?? Data() } catch { throw .io("cannot read \(source.path)") }
            if chunk.isEmpty { break }
            var bytes = [UInt8](chunk)
            var offset = 0
            while offset < bytes.count {
                if finishedMember {
                    // Another gzip member follows (concatenated files are one stream to gunzip).
                    guard inflateReset(&stream) == Z_OK else { throw .corrupt("cannot read the next gzip member") }
                    finishedMember = false
                }
                let (status, consumed, produced) = bytes.withUnsafeMutableBufferPointer { inBuffer in
                    outBuffer.withUnsafeMutableBufferPointer { outPointer in
                        stream.next_in = inBuffer.baseAddress! + offset
                        stream.avail_in = UInt32(inBuffer.count - offset)
                        stream.next_out = outPointer.baseAddress
                        stream.avail_out = UInt32(outSize)
                        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                        return (status, inBuffer.count - offset - Int(stream.avail_in), outSize - Int(stream.avail_out))
                    }
                }
                offset += consumed
                if produced > 0 {
                    written += Int64(produced)
                    if written > maxBytes { throw .tooLarge }
                    do { try output.write(contentsOf: outBuffer[0..<produced]) } catch { throw .io("cannot write the inflated feed (disk full?)") }
                }
                switch status {
                case Z_STREAM_END: finishedMember = true
                case Z_OK, Z_BUF_ERROR: if consumed == 0 && produced == 0 { throw .corrupt("the compressed data does not inflate") }
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                    throw .corrupt("the compressed data is corrupt (\(message))")
                }
            }
        }
        if !finishedMember { throw .corrupt("the compressed data ends early (truncated?)") }
    }
}
