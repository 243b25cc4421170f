import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 (random port) for tests: each request is answered by a
/// closure, which may also delay, hang, or reset the connection. Every request is recorded with
/// its arrival time, so tests can check what a client sent and how fast.
final class LoopbackHTTPServer: @unchecked Sendable {
    struct Request: Sendable {
        var path: String
        var query: [String: String]
        var rawQuery: String
        var headers: [String: String]
        var arrival: ContinuousClock.Instant
        var method = "GET"
        var body = ""
    }

    indirect enum Reply: Sendable {
        case respond(status: Int, headers: [(String, String)], body: String)
        /// A body of bytes (gzip, say).
        case respondBytes(status: Int, headers: [(String, String)], body: [UInt8])
        case delayed(seconds: Double, Reply)
        /// Never answer (the client must time out).
        case hang
        /// Close the connection without a response.
        case reset

        static func json(_ body: String, status: Int = 200) -> Reply {
            .respond(status: status, headers: [("Content-Type", "application/json")], body: body)
        }
        static func text(_ body: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            .respond(status: status, headers: [("Content-Type", "text/plain")] + headers, body: body)
        }
    }

    let port: Int
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let group: MultiThreadedEventLoopGroup
    private let channel: Channel
    private let lock = NSLock()
    private var recorded: [Request] = []

    /// `handler(request, n)` gets the request and its 0-based number.
    init(_ handler: @escaping @Sendable (Request, Int) -> Reply) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = HandlerBox(handler: handler)
        var recorder: (@Sendable (Request) -> Int)!
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(RequestHandler(box: box, record: recorder))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
        recorder = { [unowned self] request in
            self.lock.lock(); defer { self.lock.unlock() }
            self.recorded.append(request)
            return self.recorded.count - 1
        }
        box.ready = true
    }

    var requests: [Request] {
        lock.lock(); defer { lock.unlock() }
        return recorded
    }

    private var isShutDown = false

    /// Stops the server; safe to call more than once (a second NIO shutdown would wait forever).
    func shutdown() {
        lock.lock()
        let first = !isShutDown
        isShutDown = true
        lock.unlock()
        guard first else { return }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    deinit { shutdown() }

    private final class HandlerBox: @unchecked Sendable {
        let handler: @Sendable (Request, Int) -> Reply
        var ready = false
        init(handler: @escaping @Sendable (Request, Int) -> Reply) { self.handler = handler }
    }

    private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let box: HandlerBox
        let record: @Sendable (Request) -> Int
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(box: HandlerBox, record: @escaping @Sendable (Request) -> Int) {
            self.box = box
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case let .head(h):
                head = h
                body = []
            case var .body(buffer): body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                guard let head else { return }
                let components = URLComponents(string: "http://x" + head.uri)
                var query: [String: String] = [:]
                for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let request = Request(path: components?.path ?? head.uri, query: query, rawQuery: components?.percentEncodedQuery ?? "",
                                      headers: headers, arrival: .now, method: head.method.rawValue,
                                      body: String(decoding: body, as: UTF8.self))
                let n = record(request)
                perform(box.handler(request, n), context: context, keepAlive: head.isKeepAlive)
            }
        }

        private func perform(_ reply: Reply, context: ChannelHandlerContext, keepAlive: Bool) {
            switch reply {
            case .hang:
                return
            case .reset:
                context.close(promise: nil)
            case let .delayed(seconds, inner):
                let ctx = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
                    self.perform(inner, context: ctx.value, keepAlive: keepAlive)
                }
            case let .respond(status, extraHeaders, body):
                perform(.respondBytes(status: status, headers: extraHeaders, body: Array(body.utf8)), context: context, keepAlive: keepAlive)
            case let .respondBytes(status, extraHeaders, body):
                var headers = HTTPHeaders(extraHeaders)
                headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
                headers.replaceOrAdd(name: "Connection", value: keepAlive ? "keep-alive" : "close")
                let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                var buffer = context.channel.allocator.buffer(capacity: body.count)
                buffer.writeBytes(body)
                context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    if !keepAlive { context.close(promise: nil) }
                }
            }
        }
    }
}
