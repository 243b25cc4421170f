import Foundation
import HTTPTypes
import TrafficGeoSupport

/// An error answer as `application/problem+json` (RFC 9457): a title for the kind of problem
/// and a detail a person can act on (what was wrong, what to send instead).
public struct Problem: Error, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var title: String
    public var detail: String
    /// Extra headers (`Allow` on 405).
    var headers: HTTPFields = [:]

    public init(status: HTTPResponse.Status, title: String, detail: String) {
        self.status = status
        self.title = title
        self.detail = detail
    }

    /// A 400 for a query parameter.
    static func badParameter(_ name: String, _ detail: String) -> Problem {
        Problem(status: .badRequest, title: "Invalid query parameter '\(name)'", detail: detail)
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(status: .notFound, title: "Not found", detail: detail)
    }

    func json(instance: String) -> String {
        var o = JSONObjectText()
        o.add("type", "about:blank")
        o.add("title", title)
        o.add("status", Double(status.code))
        o.add("detail", detail)
        o.add("instance", instance)
        return o.closed()
    }
}
