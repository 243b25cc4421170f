import TrafficGeoModel
import TrafficGeoStore

/// How results are ordered; ties are broken by store id, so output is stable.
public enum QuerySort: String, Sendable, CaseIterable {
    case distance, updated, expires, title
    /// The most severe first (`Severity(stored:)`; none last).
    case severity
}
