import Foundation
import TrafficGeoModel
import TrafficGeoSupport

extension IncidentFilter {
    /// Whether a stored incident passes the filter: the same conditions a store puts in its query
    /// (`IncidentFilter+SQL` for SQLite), evaluated on an incident in memory, for standing
    /// queries that look at the incidents a change names (`trafficgeo watch`).
    public func matches(_ stored: StoredIncident) -> Bool {
        let i = stored.incident
        // Times compared as seconds since 1970, as the store keeps and compares them (a Date
        // counts from 2001: the same instant may differ in its last bit).
        let updated = i.updated?.timeIntervalSince1970
        if let activeAt {
            let t = activeAt.timeIntervalSince1970
            if !Self.began(i, by: activeAt) { return false }
            if let expires = i.expires?.timeIntervalSince1970, !(t < expires) { return false }
            if let ended = stored.ended?.timeIntervalSince1970, !(t < ended) { return false }
            if Self.isUnconfirmed(stored, at: activeAt, after: unconfirmedAfter) { return false }
            if Self.isOffSchedule(i, at: activeAt) { return false }
        }
        if let since = since?.timeIntervalSince1970 {
            guard let updated, updated >= since else { return false }
        }
        if let until = until?.timeIntervalSince1970 {
            guard let updated, updated < until else { return false }
        }
        if !roads.isEmpty {
            guard RoadCondition.of(roads).contains(where: { $0.matches(i) }) else { return false }
        }
        if let minSeverity {
            guard let severity = i.properties["severity"].flatMap(Severity.init(stored:)), severity >= minSeverity else { return false }
        }
        for (measure, least) in minimums {
            guard let value = measure.value(of: i), value >= least else { return false }
        }
        if !categories.isEmpty {
            guard let category = i.category, categories.contains(category) else { return false }
        }
        if let source, !stored.reports.contains(where: { $0.source == source }), i.source != source { return false }
        if !stored.role.answers(reports: reports) { return false }
        if i.position == nil {
            // No position: no confidence, and no precision but none (as both stores' SQL).
            if minConfidence != nil { return false }
            if !precisions.isEmpty, !precisions.contains(.none) { return false }
        } else if let geocoded = i.positionSource, geocoded.kind == .geocoder {
            if let minConfidence {
                guard let confidence = geocoded.confidence, confidence >= minConfidence else { return false }
            }
            if !precisions.isEmpty {
                guard let precision = geocoded.precision, precisions.contains(precision) else { return false }
            }
        }
        if !words.isEmpty {
            let text = i.title + " " + (i.summary ?? "") + " " + (i.road ?? "")
            let folded = TextFolding.fold(text), plain = TextFolding.foldPlain(text)
            for word in words where !folded.contains(word) && !plain.contains(TextFolding.loosen(word)) { return false }
        }
        return true
    }
}
