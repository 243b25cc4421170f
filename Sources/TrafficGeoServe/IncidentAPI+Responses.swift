import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import TrafficGeoProjection
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// Answers: bodies, ETags, problems.
extension IncidentAPI {

    static func body(_ text: String, type: String, cacheable: Bool = true) -> Response {
        var response = Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
        if !cacheable { response.headers[.cacheControl] = "no-store" }
        return response
    }

    /// A 200 with an ETag from the body, or 304 when the client has that body already: a map
    /// that polls pays for the query, not for receiving the same answer again.
    func tagged(_ text: String, type: String, _ request: Request) -> Response {
        tagged(Array(text.utf8), type: type, request, tagFrom: nil)
    }

    /// The same for a body in UTF-8, whose tag is taken from its first `stableCount` bytes (all
    /// of it when nil).
    func tagged(_ body: [UInt8], type: String, _ request: Request, tagFrom stableCount: Int?) -> Response {
        let etag = ETag.of(body[..<(stableCount ?? body.count)], type: type)
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache"]
        if let wanted = request.headers[.ifNoneMatch],
           wanted.split(separator: ",").contains(where: { tag in
               let t = tag.trimmingCharacters(in: .whitespaces)
               return t == "*" || t == etag || t == "W/" + etag
           }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func problem(_ problem: Problem, instance: String) -> Response {
        var headers = problem.headers
        headers[.contentType] = MediaType.problem
        headers[.cacheControl] = "no-store"
        return Response(status: problem.status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: problem.json(instance: instance))))
    }
}
