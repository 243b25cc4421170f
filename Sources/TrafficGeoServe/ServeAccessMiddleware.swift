import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// What every request passes through, on the Router's middleware chain (which runs for the
/// routes that matched and for the Router's not-found answer alike): a target too long (414) or
/// a method other than GET and HEAD (405: the server is read-only, whatever the path) is refused
/// before any handler runs; every error leaves as an RFC 9457 problem; and each request is
/// counted under its route's template and written to the access log.
struct ServeAccessMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let maxURILength: Int
    let metrics: ServeMetrics
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            try admit(request)
            response = try await next(request, context)
        } catch let problem as Problem {
            response = IncidentAPI.problem(problem, instance: request.uri.path)
        } catch let error as HTTPError where error.status == .notFound {
            // The Router's answer for a path no route matches.
            let path = request.uri.path
            response = IncidentAPI.problem(Problem.notFound("There is nothing at \(path). The API starts at / (links to everything), the incidents are at \(ServeRoute.items.rawValue)."),
                                           instance: path)
        } catch {
            // The detail (files, SQL, the database's words) goes to the log, never to the client.
            logger.error("\(request.method) \(Self.loggable(request)): \(error)")
            response = IncidentAPI.problem(Problem(status: .internalServerError, title: "The store could not answer",
                                                   detail: "An internal error; it is in the server's log. Try again, or tell the server's operator."),
                                           instance: request.uri.path)
        }
        // The Router makes HEAD from GET for the routes; a refusal or a problem is cut here.
        if request.method == .head { response = response.createHeadResponse() }
        let elapsed = ContinuousClock.now - started
        let served = ServeRoute(endpointPath: context.endpointPath)
        let route = served?.rawValue ?? "other"
        metrics.request(route: route, status: response.status.code, duration: elapsed)
        // The access log: one line per request, as web servers write it. A load balancer's and
        // Prometheus's polling would drown it: those only with --verbose.
        let level: Logger.Level = served?.isProbe == true && response.status.code < 500 ? .debug : .info
        let ms = (elapsed.inSeconds * 10_000).rounded() / 10
        logger.log(level: level, "\(request.method) \(Self.loggable(request)) \(response.status.code) \(String(format: "%.1f", ms)) ms",
                   metadata: ["method": "\(request.method)", "route": "\(route)", "status": .stringConvertible(response.status.code),
                              "ms": .stringConvertible(ms)])
        return response
    }

    /// Refusals that do not depend on the route.
    private func admit(_ request: Request) throws {
        guard request.uri.string.utf8.count <= maxURILength else {
            throw Problem(status: .uriTooLong, title: "Request target too long",
                          detail: "The request target is longer than \(maxURILength) bytes; ask with fewer or shorter parameters.")
        }
        guard request.method == .get || request.method == .head else {
            var p = Problem(status: .methodNotAllowed, title: "Method not allowed",
                            detail: "\(request.method) is not supported: this server is read-only; use GET.")
            p.headers[.allow] = "GET, HEAD"
            throw p
        }
    }

    /// The request target as the log shows it: at most 512 bytes (a hostile client's 8 KiB
    /// target is refused, and need not fill the log either).
    static func loggable(_ request: Request) -> String {
        let target = request.uri.string
        return target.utf8.count <= 512 ? target : String(decoding: target.utf8.prefix(512), as: UTF8.self) + "… (\(target.utf8.count) bytes)"
    }
}
