import Foundation

/// Keeps credentials out of messages and logs: geocoder URLs may carry API keys.
public enum Redaction {
    /// Query items whose values are secrets.
    static let secretNames: Set<String> = ["key", "api_key", "apikey", "api-key", "token", "access_token", "password", "secret", "auth"]

    /// `text` with the values of secret query items and any user:password in URLs replaced.
    ///
    ///     Redaction.redact("pelias=https://u:pw@api.example.org?api_key=abc&size=5")
    ///     // "pelias=https://REDACTED@api.example.org?api_key=REDACTED&size=5"
    public static func redact(_ text: String) -> String {
        var out = text
        // user:password@ after a scheme
        out = out.replacingOccurrences(of: #"(https?://)[^/@\s]+@"#, with: "$1REDACTED@", options: .regularExpression)
        let names = secretNames.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|")
        out = out.replacingOccurrences(of: "([?&;](?i:\(names))=)[^&#\\s,]*", with: "$1REDACTED", options: .regularExpression)
        return out
    }
}
