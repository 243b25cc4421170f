/// A store failure: what the store was doing (`code`), where (`location`), and why (`reason`: a
/// `StoreFailure` with a kind a caller can act on — retry when busy, tell the operator the disk
/// is full — and the database's own error underneath). The words say what to do about it.
///
/// A struct over kinds it keeps to itself, as `FeedError` and AsyncHTTPClient's errors are: a
/// kind added later breaks no user's `switch`. Ask `error.code == .cannotOpen` or
/// `error.kind == .busy`, or switch over either with a `default`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What the store was doing when it failed.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Operation: String, Sendable { case cannotOpen, incompatible, writeFailed, readFailed }
        private let operation: Operation
        private init(_ operation: Operation) { self.operation = operation }

        /// The database could not be opened (or made).
        public static let cannotOpen = Code(.cannotOpen)
        /// The database was made by another version of trafficgeo.
        public static let incompatible = Code(.incompatible)
        /// A write failed; nothing of it was changed.
        public static let writeFailed = Code(.writeFailed)
        /// A read failed.
        public static let readFailed = Code(.readFailed)

        public var description: String { operation.rawValue }
    }

    public let code: Code
    /// The database: a path, or a PostgreSQL URL without its password.
    public let location: String
    /// Why it failed.
    public let reason: StoreFailure

    public init(_ code: Code, location: String, reason: StoreFailure) {
        self.code = code
        self.location = location
        self.reason = reason
    }

    public static func cannotOpen(_ location: String, reason: StoreFailure) -> StoreError { StoreError(.cannotOpen, location: location, reason: reason) }
    public static func incompatible(_ location: String, reason: StoreFailure) -> StoreError { StoreError(.incompatible, location: location, reason: reason) }
    public static func writeFailed(_ location: String, reason: StoreFailure) -> StoreError { StoreError(.writeFailed, location: location, reason: reason) }
    public static func readFailed(_ location: String, reason: StoreFailure) -> StoreError { StoreError(.readFailed, location: location, reason: reason) }

    public var description: String {
        switch code {
        case .cannotOpen: return "cannot open the database \(location): \(reason)"
        case .incompatible: return "the database \(location) was made by another version of trafficgeo: \(reason)"
        case .writeFailed: return "could not write to the database \(location) (nothing was changed): \(reason)"
        default: return "could not read the database \(location): \(reason)"
        }
    }

    /// What kind of failure: the same kinds on every store.
    public var kind: StoreFailure.Kind { reason.kind }

    /// The database's own error (GRDB's `DatabaseError`, postgres-nio's `PSQLError`), if one caused it.
    public var underlying: (any Error & Sendable)? { reason.underlying }
}

/// Why a store failed: a kind, words a user can act on, and the error underneath.
/// A string literal is a failure of kind `.other` (`reason: "no such database"`).
public struct StoreFailure: Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The kinds of failure, alike on every store; more may come (switch with a `default`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Name: String, Sendable { case busy, diskFull, readOnly, damaged, missing, unreachable, notPermitted, otherVersion, interrupted, other }
        private let name: Name
        private init(_ name: Name) { self.name = name }

        /// Another writer holds the database; trying again later may succeed.
        public static let busy = Kind(.busy)
        /// No space left for the database.
        public static let diskFull = Kind(.diskFull)
        /// The file or the database may not be written.
        public static let readOnly = Kind(.readOnly)
        /// The file is not a database, or its contents are damaged.
        public static let damaged = Kind(.damaged)
        /// The file or the database does not exist (yet), or cannot be reached.
        public static let missing = Kind(.missing)
        /// The server cannot be reached or went away.
        public static let unreachable = Kind(.unreachable)
        /// The server refused the user, or the user lacks a privilege.
        public static let notPermitted = Kind(.notPermitted)
        /// The store's tables are of another version.
        public static let otherVersion = Kind(.otherVersion)
        /// Stopped on purpose (a time limit, a client that left).
        public static let interrupted = Kind(.interrupted)
        public static let other = Kind(.other)

        public var description: String { name.rawValue }
    }

    public var kind: Kind
    public var description: String
    public var underlying: (any Error & Sendable)?

    public init(_ kind: Kind, _ description: String, underlying: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.description = description
        self.underlying = underlying
    }

    public init(stringLiteral value: String) { self.init(.other, value) }

    public init(stringInterpolation: DefaultStringInterpolation) { self.init(.other, String(stringInterpolation: stringInterpolation)) }
}
