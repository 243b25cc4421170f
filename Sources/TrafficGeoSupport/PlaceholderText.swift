import Foundation

/// The words feeds write in a field that has no value: "unknown" (every direction of 511NY's
/// work zones), "undefined", "N/A", "none", "null", "-". Such a field is absent: none of these
/// reaches a title, a road or a detail as if it were news.
///
///     PlaceholderText.isPlaceholder("unknown")   // true
///     PlaceholderText.meaningful(" N/A ")        // nil
///     PlaceholderText.meaningful("northbound")   // "northbound"
public enum PlaceholderText {
    /// Whether the whole text is only a placeholder (case and surrounding white space and
    /// punctuation ignored).
    public static func isPlaceholder(_ text: String) -> Bool {
        // No placeholder is long: a title or a text is answered without any work (every feed
        // entry's title passes here).
        guard text.utf8.count <= 24 else { return false }
        // Over its scalars, not Foundation's trimming (which was 16 % of reading a CSV file).
        let scalars = text.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isTrimmed(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isTrimmed(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        guard start < end else { return true }
        return words.contains(String(scalars[start..<end]).lowercased())
    }

    private static let trimmedMarks = Set(" .-_?()[]<>\"'".unicodeScalars)

    private static func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || trimmedMarks.contains(scalar)
    }

    /// The text trimmed, or nil when it is empty or a placeholder.
    public static func meaningful(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmed
        return isPlaceholder(trimmed) ? nil : trimmed
    }

    /// English words and the forms programs write (JavaScript's undefined, JSON's null, SQL's
    /// NULL, a spreadsheet's #N/A), in lower case.
    static let words: Set<String> = [
        "unknown", "undefined", "n/a", "na", "#n/a", "none", "null", "nil", "not available", "not applicable", "unspecified",
        "not specified", "tbd", "tba", "nan",
    ]
}
