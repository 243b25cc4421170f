import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import TrafficGeoStore

/// Connections to one PostgreSQL database, kept open between uses: a small pool that the store's
/// synchronous methods check a connection out of, run on, and give back.
///
/// Why not postgres-nio's `PostgresClient`: it is driven by a `run()` task and answers through
/// `async` calls only, while `IncidentStore` is synchronous (the SQLite store blocks in SQLite). A
/// synchronous caller waiting on an `async` call must park its thread, which starves Swift's
/// cooperative pool (two threads on two cores) when it is one of them. Here every wait is on an
/// `EventLoopFuture` of a NIO event loop, which needs none of the caller's threads. Every
/// statement goes through the extended protocol as a prepared statement with bound parameters
/// (parse, bind, execute of the unnamed statement), never with values spliced into its text.
final class PostgresSession: Sendable {
    let location: PostgresLocation
    private let configuration: PostgresConnection.Configuration
    private let idle = NIOLockedValueBox<[PooledConnection]>([])
    private let nextID = NIOLockedValueBox(0)
    /// Connections kept open while idle; more may be open while busy.
    let maxIdle: Int
    /// postgres-nio logs at debug and trace level only; nothing it logs holds the password.
    let logger: Logger

    init(location: PostgresLocation, maxIdle: Int = 16) throws {
        self.location = location
        self.maxIdle = maxIdle
        var logger = Logger(label: "trafficgeo.postgres")
        logger.logLevel = .critical
        self.logger = logger
        var configuration: PostgresConnection.Configuration
        if location.isUnixSocket {
            configuration = .init(unixSocketPath: location.socketPath, username: location.user, password: location.password,
                                  database: location.database)
        } else {
            configuration = .init(host: location.host, port: location.port, username: location.user, password: location.password,
                                  database: location.database, tls: try Self.tls(for: location))
        }
        configuration.options.connectTimeout = .seconds(15)
        configuration.options.additionalStartupParameters = [("application_name", location.applicationName)]
        self.configuration = configuration
    }

    /// TLS as libpq's `sslmode` asks.
    private static func tls(for location: PostgresLocation) throws -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch location.sslMode {
        case .disable: return .disable
        case .allow, .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let file = location.sslRootCertificate { tls.trustRoots = .file(file) }
        do {
            let context = try NIOSSLContext(configuration: tls)
            return location.sslMode == .allow || location.sslMode == .prefer ? .prefer(context) : .require(context)
        } catch {
            throw StoreError.cannotOpen(location.redacted, reason: "TLS cannot be set up (\(error)); check sslrootcert")
        }
    }

    /// `statement_timeout` in milliseconds for every connection from now on (nil: the server's).
    let statementTimeout = NIOLockedValueBox<Int?>(nil)

    /// Sets the connection's `statement_timeout` to the session's, once per change.
    private func applyTimeout(_ pooled: PooledConnection) throws {
        guard let wanted = statementTimeout.withLockedValue({ $0 }), pooled.statementTimeout.withLockedValue({ $0 }) != wanted else { return }
        try pooled.connection.run("SET statement_timeout = \(unescaped: String(wanted))", logger: logger)
        pooled.statementTimeout.withLockedValue { $0 = wanted }
    }

    /// `applyTimeout` for async callers: every path runs under the session's `statement_timeout`.
    private func applyTimeout(_ pooled: PooledConnection) async throws {
        guard let wanted = statementTimeout.withLockedValue({ $0 }), pooled.statementTimeout.withLockedValue({ $0 }) != wanted else { return }
        _ = try await pooled.connection.query("SET statement_timeout = \(unescaped: String(wanted))", logger: logger)
        pooled.statementTimeout.withLockedValue { $0 = wanted }
    }

    // MARK: - Checking out

    /// Runs `body` on a connection of the pool (opened if none is idle).
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let pooled = try checkOut()
        do {
            try applyTimeout(pooled)
            let result = try body(pooled.connection)
            checkIn(pooled)
            return result
        } catch {
            checkIn(pooled)
            throw error
        }
    }

    /// The same for async callers (the geocoding cache): waits without holding a thread.
    func withConnection<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let pooled: PooledConnection
        if let connection = idle.withLockedValue({ $0.popLast() }) {
            pooled = connection
        } else {
            pooled = PooledConnection(connection: try await Self.mapConnectError(location) {
                try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
                                                     id: nextID.withLockedValue { $0 += 1; return $0 }, logger: logger).get()
            })
        }
        do {
            try await applyTimeout(pooled)
            let result = try await body(pooled.connection)
            await checkIn(pooled)
            return result
        } catch {
            await checkIn(pooled)
            throw error
        }
    }

    /// Runs `body` inside one transaction: committed when it returns, rolled back when it throws
    /// (or when the connection breaks: then PostgreSQL rolls it back itself).
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    func transaction<T>(readOnly: Bool = false, isolation: String = "READ COMMITTED", _ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { connection in
            try connection.run("BEGIN ISOLATION LEVEL \(unescaped: isolation)\(unescaped: readOnly ? " READ ONLY" : "")", logger: logger)
            do {
                let result = try body(connection)
                try connection.run("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? connection.run("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    private func checkOut() throws -> PooledConnection {
        if let connection = idle.withLockedValue({ $0.popLast() }) { return connection }
        let id = nextID.withLockedValue { $0 += 1; return $0 }
        return PooledConnection(connection: try Self.mapConnectError(location) {
            try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: id, logger: logger).wait()
        })
    }

    /// Keeps an open connection for the next use; a broken one (the server went away) is dropped.
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    private func checkIn(_ pooled: PooledConnection) {
        guard !pooled.connection.isClosed else { return }
        let kept = idle.withLockedValue { idle -> Bool in
            guard idle.count < maxIdle else { return false }
            idle.append(pooled)
            return true
        }
        // Closed before it is let go (postgres-nio asserts that); on the caller's thread, never
        // an event loop's.
        if !kept { _ = try? pooled.connection.close().wait() }
    }

    /// `checkIn` for async callers: a connection not kept is closed without holding a thread.
    private func checkIn(_ pooled: PooledConnection) async {
        guard !pooled.connection.isClosed else { return }
        let kept = idle.withLockedValue { idle -> Bool in
            guard idle.count < maxIdle else { return false }
            idle.append(pooled)
            return true
        }
        if !kept { _ = try? await pooled.connection.close().get() }
    }

    /// Closes the idle connections (the store's `deinit`).
    func close() {
        let all = idle.withLockedValue { idle in defer { idle = [] }; return idle }
        // Not waited for: `close` runs from deinit, which may be on a task's thread; each
        // connection closes on its own event loop.
        // (The connection is held until it has closed: postgres-nio asserts that it is closed before it goes.)
        for pooled in all {
            let connection = pooled.connection
            connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
        }
    }

    private static func mapConnectError<T>(_ location: PostgresLocation, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw StoreError.cannotOpen(location.redacted, reason: PostgresErrorText.failure(error, connecting: true)) }
    }

    private static func mapConnectError<T>(_ location: PostgresLocation, _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw StoreError.cannotOpen(location.redacted, reason: PostgresErrorText.failure(error, connecting: true)) }
    }
}

/// A connection of the pool.
final class PooledConnection: Sendable {
    let connection: PostgresConnection
    /// The `statement_timeout` this connection was set to (nil: the server's).
    let statementTimeout = NIOLockedValueBox<Int?>(nil)
    init(connection: PostgresConnection) { self.connection = connection }
}

extension PostgresConnection {
    /// Runs a statement and returns its rows (all of them: callers page big results themselves).
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    func rows(_ query: PostgresQuery, logger: Logger) throws -> [PostgresRow] {
        try self.query(query, logger: logger).wait().rows
    }

    /// Runs a statement for its effect; returns the rows it affected (INSERT, UPDATE, DELETE).
    @discardableResult
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    func run(_ query: PostgresQuery, logger: Logger) throws -> Int {
        try self.query(query, logger: logger).wait().metadata.rows ?? 0
    }
}

/// PostgreSQL's errors in words a user can act on.
enum PostgresErrorText {
    static func describe(_ error: Error, connecting: Bool = false) -> String { failure(error, connecting: connecting).description }

    /// A database error as a failure with its kind, in words a user can act on.
    static func failure(_ error: Error, connecting: Bool = false) -> StoreFailure {
        if let store = error as? StoreError { return store.reason }
        guard let psql = error as? PSQLError else { return StoreFailure(.other, String(describing: error), underlying: error) }
        if let info = psql.serverInfo, let message = info[.message] {
            var text = message
            if let detail = info[.detail] { text += " (\(detail))" }
            if let hint = info[.hint] { text += "; \(hint)" }
            var kind = StoreFailure.Kind.other
            switch info[.sqlState] {
            case "28P01", "28000": text += "; check the user and password (URL, $PGPASSWORD or ~/.pgpass is not read)"; kind = .notPermitted
            case "3D000": text += "; create it first (createdb NAME) or name another database in the URL"; kind = .missing
            case "42501": text += "; the user lacks the privilege: connect as the database's owner"; kind = .notPermitted
            case "53100": kind = .diskFull
            case "57014": kind = .interrupted
            case "25006": kind = .readOnly
            case "40001", "40P01", "55P03": kind = .busy
            default: break
            }
            return StoreFailure(kind, text, underlying: psql)
        }
        switch psql.code {
        case .connectionError:
            let underlying = psql.underlying.map { String(describing: $0) } ?? "no answer"
            return StoreFailure(.unreachable, "the server cannot be reached (\(underlying)); is PostgreSQL running there and the host and port right?", underlying: psql)
        case .sslUnsupported: return StoreFailure(.unreachable, "the server does not offer TLS, but sslmode asks for it (use sslmode=prefer or disable)", underlying: psql)
        case .serverClosedConnection, .uncleanShutdown: return StoreFailure(.unreachable, "the server closed the connection; try again", underlying: psql)
        case .authMechanismRequiresPassword: return StoreFailure(.notPermitted, "the server asks for a password: give it in the URL or $PGPASSWORD", underlying: psql)
        case .unsupportedAuthMechanism: return StoreFailure(.notPermitted, "the server asks for an authentication method postgres-nio does not speak (use scram-sha-256 or md5)", underlying: psql)
        default: return StoreFailure(.other, connecting ? "cannot connect: \(psql.code)" : "\(psql.code)", underlying: psql)
        }
    }

}

/// Creating and dropping whole databases on a server (the tests' private databases, made from a
/// template that has PostGIS).
package enum PostgresAdministration {
    /// Creates database `name` on the server `url` names (connecting to the URL's own database).
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    package static func createDatabase(_ name: String, template: String? = nil, on url: String) throws {
        try run(on: url) { connection, logger in
            let sql = "CREATE DATABASE \"\(name)\"" + (template.map { " TEMPLATE \"\($0)\"" } ?? "")
            try connection.run(PostgresQuery(unsafeSQL: sql), logger: logger)
        }
    }

    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    package static func dropDatabase(_ name: String, on url: String) throws {
        try run(on: url) { connection, logger in
            try connection.run(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"), logger: logger)
        }
    }

    /// `url` with another database.
    package static func url(_ url: String, database: String) throws -> String {
        var location = try PostgresLocation(url: url)
        location.database = database
        return location.text(withPassword: true)
    }

    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread (StoreThreads), never from a task")
    private static func run(on url: String, _ body: (PostgresConnection, Logger) throws -> Void) throws {
        let session = try PostgresSession(location: try PostgresLocation(url: url), maxIdle: 0)
        defer { session.close() }
        try session.withConnection { try body($0, session.logger) }
    }
}
