/// Store failures: what the store was doing (the case), where (the location), and why — a
/// `StoreFailure` with a kind a caller can act on (retry when busy, tell the operator the disk
/// is full) and the database's own error underneath. The words say what to do about it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case cannotOpen(String, reason: StoreFailure)
    case incompatible(String, reason: StoreFailure)
    case writeFailed(String, reason: StoreFailure)
    case readFailed(String, reason: StoreFailure)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "cannot open the database \(path): \(reason)"
        case let .incompatible(path, reason): return "the database \(path) was made by another version of trafficgeo: \(reason)"
        case let .writeFailed(path, reason): return "could not write to the database \(path) (nothing was changed): \(reason)"
        case let .readFailed(path, reason): return "could not read the database \(path): \(reason)"
        }
    }

    /// Why it failed.
    public var reason: StoreFailure {
        switch self {
        case let .cannotOpen(_, reason), let .incompatible(_, reason), let .writeFailed(_, reason), let .readFailed(_, reason): return reason
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
    public enum Kind: Sendable, Equatable {
        /// Another writer holds the database; trying again later may succeed.
        case busy
        /// No space left for the database.
        case diskFull
        /// The file or the database may not be written.
        case readOnly
        /// The file is not a database, or its contents are damaged.
        case damaged
        /// The file or the database does not exist (yet), or cannot be reached.
        case missing
        /// The server cannot be reached or went away.
        case unreachable
        /// The server refused the user, or the user lacks a privilege.
        case notPermitted
        /// The store's tables are of another version.
        case otherVersion
        /// Stopped on purpose (a time limit, a client that left).
        case interrupted
        case other
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
