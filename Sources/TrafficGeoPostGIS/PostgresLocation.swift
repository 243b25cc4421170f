import Foundation

/// Where a PostGIS store is: a `postgresql://` (or `postgres://`) URL as libpq reads it.
///
///     postgresql://user:password@host:5432/dbname?sslmode=require
///     postgresql:///dbname?host=/var/run/postgresql&port=5433      (a Unix socket)
///
/// Missing parts default as in libpq: the user `$PGUSER` (else the login name), the host
/// `$PGHOST` (else `localhost`), the port `$PGPORT` (else 5432), the database `$PGDATABASE`
/// (else the user's name), the password `$PGPASSWORD`, `sslmode` `prefer`. The password is kept
/// for connecting only: `redacted` (what messages and `location` show) never holds it.
public struct PostgresLocation: Sendable, Equatable {
    /// libpq's `sslmode`, the same meanings: `require` encrypts without checking the server's
    /// certificate, `verify-ca` checks it against `sslrootcert` (else the system's roots),
    /// `verify-full` also checks the host name.
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    public var user: String
    public var password: String?
    /// A host name or address, or a folder holding the server's Unix socket (starts with `/`).
    public var host: String
    public var port: Int
    public var database: String
    public var sslMode: SSLMode
    /// A PEM file of the certificate authorities to trust (`sslrootcert`).
    public var sslRootCertificate: String?
    /// `application_name`, shown in `pg_stat_activity`.
    public var applicationName = "trafficgeo"

    /// Whether `location` names a PostgreSQL server rather than a file.
    public static func isURL(_ location: String) -> Bool {
        let lower = location.prefix(16).lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isURL(text), let components = URLComponents(string: text) else {
            throw StoreURLError(url: Self.redact(text), problem: "it is not a postgresql:// URL (postgresql://user@host:port/dbname)")
        }
        func env(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let known: Set<String> = ["sslmode", "sslrootcert", "host", "port", "user", "password", "dbname", "application_name", "connect_timeout"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw StoreURLError(url: Self.redact(text), problem: "unknown parameter '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
        }
        user = query["user"] ?? components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
            ?? env("PGUSER") ?? env("USER") ?? NSUserName()
        password = query["password"] ?? components.percentEncodedPassword.flatMap { $0.removingPercentEncoding } ?? env("PGPASSWORD")
        let urlHost = components.percentEncodedHost.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
        host = query["host"] ?? urlHost ?? env("PGHOST") ?? "localhost"
        let portText = query["port"] ?? components.port.map(String.init) ?? env("PGPORT") ?? "5432"
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw StoreURLError(url: Self.redact(text), problem: "the port '\(portText)' is not a number from 1 to 65535")
        }
        self.port = port
        let path = components.percentEncodedPath.removingPercentEncoding ?? ""
        let name = query["dbname"] ?? (path.hasPrefix("/") ? String(path.dropFirst()) : path)
        database = name.isEmpty ? (env("PGDATABASE") ?? user) : name
        let modeText = query["sslmode"] ?? env("PGSSLMODE") ?? "prefer"
        guard let mode = SSLMode(rawValue: modeText) else {
            throw StoreURLError(url: Self.redact(text), problem: "sslmode '\(modeText)' is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        sslMode = mode
        sslRootCertificate = query["sslrootcert"] ?? env("PGSSLROOTCERT")
        if let name = query["application_name"], !name.isEmpty { applicationName = name }
    }

    /// Whether the server is reached through a Unix socket (no TLS there).
    public var isUnixSocket: Bool { host.hasPrefix("/") }

    /// The socket file of a Unix-socket location.
    var socketPath: String { (host as NSString).appendingPathComponent(".s.PGSQL.\(port)") }

    /// The URL without its password: for messages, logs and `IncidentStore.location`.
    public var redacted: String { text(withPassword: false) }

    /// The URL, with the password only if asked (to hand a connection on to another process).
    package func text(withPassword: Bool) -> String {
        var text = "postgresql://" + (Self.encode(user) ?? user)
        if withPassword, let password { text += ":" + (Self.encode(password) ?? password) }
        text += "@"
        var parameters: [String] = []
        if isUnixSocket {
            text += "/" + (Self.encode(database) ?? database)
            parameters += ["host=" + host, "port=\(port)"]
        } else {
            text += (host.contains(":") ? "[\(host)]" : host) + ":\(port)/" + (Self.encode(database) ?? database)
        }
        if sslMode != .prefer { parameters.append("sslmode=" + sslMode.rawValue) }
        if let sslRootCertificate { parameters.append("sslrootcert=" + sslRootCertificate) }
        return parameters.isEmpty ? text : text + "?" + parameters.joined(separator: "&")
    }

    private static func encode(_ part: String) -> String? {
        part.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/?#")))
    }

    /// `text` with any password in it replaced, for an error about a URL that did not parse.
    static func redact(_ text: String) -> String {
        guard let at = text.range(of: "@"), let scheme = text.range(of: "://"), scheme.upperBound < at.lowerBound else { return text }
        let credentials = text[scheme.upperBound..<at.lowerBound]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at.lowerBound...])
    }
}

/// A `postgresql://` URL that cannot be used, and why.
public struct StoreURLError: Error, Sendable, CustomStringConvertible {
    public var url: String
    public var problem: String

    public var description: String { "cannot use the database URL \(url): \(problem)" }
}
