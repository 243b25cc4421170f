import Foundation

/// Checks an http(s) URL before it reaches the HTTP client, which refuses a URL without a host
/// in its own words (`HTTPClientError.emptyHost`) and stops the program on a port above 65535.
public enum HTTPLocation {
    /// What is wrong with `location` as a URL to fetch, in words; nil when nothing is.
    public static func problem(_ location: String) -> String? {
        guard let components = URLComponents(string: location) else {
            return "not a URL (a space or another character a URL cannot hold?)"
        }
        guard let host = components.host, !host.isEmpty else { return "the URL names no host" }
        if let port = components.port, !(1...65535).contains(port) {
            return "\(port) is not a port (ports are 1 to 65535)"
        }
        return nil
    }
}
