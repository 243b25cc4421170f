import Foundation

/// Where a user's files go, as the XDG Base Directory specification says: `$XDG_DATA_HOME`,
/// `$XDG_STATE_HOME`, `$XDG_CACHE_HOME`, else the folder under `$HOME`. `$HOME` first, then the
/// account's home: Foundation's `NSHomeDirectory()` on Linux reads the password database and
/// ignores `$HOME` (a new-user trial with `HOME=/tmp/trial/home` found its database made under
/// /root), which sandboxes, containers and test runs set.
public enum UserFolders {
    public enum Kind: Sendable {
        case data, state, cache

        var variable: String {
            switch self {
            case .data: "XDG_DATA_HOME"
            case .state: "XDG_STATE_HOME"
            case .cache: "XDG_CACHE_HOME"
            }
        }

        var underHome: String {
            switch self {
            case .data: ".local/share"
            case .state: ".local/state"
            case .cache: ".cache"
            }
        }
    }

    /// `$HOME`, else the account's home folder.
    public static func home(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }

    /// The folder of this kind (not made).
    public static func folder(_ kind: Kind, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        // The specification: a relative path in the variable is invalid and is ignored.
        if let set = environment[kind.variable], set.hasPrefix("/") { return set }
        return (home(environment: environment) as NSString).appendingPathComponent(kind.underHome)
    }
}
