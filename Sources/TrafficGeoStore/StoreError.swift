
/// Store failures, with what to do about them.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case cannotOpen(String, reason: String)
    case incompatible(String, reason: String)
    case writeFailed(String, reason: String)
    case readFailed(String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "cannot open the database \(path): \(reason)"
        case let .incompatible(path, reason): return "the database \(path) was made by another version of trafficgeo: \(reason)"
        case let .writeFailed(path, reason): return "could not write to the database \(path) (nothing was changed): \(reason)"
        case let .readFailed(path, reason): return "could not read the database \(path): \(reason)"
        }
    }
}
