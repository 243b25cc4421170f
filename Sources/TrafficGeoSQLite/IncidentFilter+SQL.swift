import Foundation
import GRDB
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

extension IncidentFilter {
    /// `IncidentFilter.began(_:by:)` in SQL, with one argument (`beganArguments`): the start
    /// column (whole seconds), else the update time, by the instant's whole second. The column
    /// spares parsing each row's JSON: json_extract on every row made `near --active-at` 1.5×
    /// slower.
    static func beganSQL(alias: String) -> String {
        "ifnull(coalesce(\(alias)valid_from, \(alias)updated) <= ?, 1)"
    }

    /// Its arguments at `date`. A start is compared in whole seconds (`startSeconds`), an update
    /// time exactly, as `IncidentFilter.began` does.
    static func beganArguments(_ date: Date) -> StatementArguments {
        [date.timeIntervalSince1970]
    }

    /// In effect at `t` (`IncidentFilter.matches` with `activeAt`), for the table aliased `i`:
    /// begun, not expired, not ended, and without an end heard of since `unconfirmedAfter`
    /// before t (`IncidentFilter.isUnconfirmed`), and within its recurring schedule if it has one
    /// (`IncidentFilter.isOffSchedule`). Stats, counts and filters all use this one.
    static func inEffectSQL(at t: Date, unconfirmedAfter: TimeInterval?) -> (String, StatementArguments) {
        let seconds = t.timeIntervalSince1970
        var sql = "(i.expires IS NULL OR ? < i.expires) AND (i.ended IS NULL OR ? < i.ended) AND " + beganSQL(alias: "i.")
            + " AND (i.schedule IS NULL OR \(RecurringSchedule.sqlFunctionName)(i.schedule, ?))"
        var arguments: StatementArguments = [seconds, seconds]
        arguments += beganArguments(t)
        arguments += [seconds]
        if let unconfirmedAfter {
            sql += " AND " + confirmedSQL
            arguments += [seconds - unconfirmedAfter, seconds - unconfirmedAfter, seconds - unconfirmedAfter]
        }
        return (sql, arguments)
    }

    /// Not `isUnconfirmed` (three arguments: the instant before which a report without an end
    /// is no longer in effect, thrice: its update, its start, a snapshot's listing). The cheap tests first: the snapshot's lookup runs only for
    /// the old rows with no end.
    static let confirmedSQL = "(i.expires IS NOT NULL OR i.ended IS NOT NULL OR coalesce(i.updated, i.first_seen) >= ? OR ifnull(i.valid_from >= ?, 0) OR ifnull((\(listedAtSQL)) >= ?, 0))"

    /// Whether a row is unconfirmed at `t` (for the statistics' count), with its arguments.
    static func unconfirmedSQL(at t: Date, after: TimeInterval) -> (String, StatementArguments) {
        let cut = t.timeIntervalSince1970 - after
        return ("(i.expires IS NULL AND i.ended IS NULL AND NOT " + confirmedSQL + ")", [cut, cut, cut])
    }

    /// The SQL condition on the table aliased `i`, with its arguments: the rows that answer for
    /// events (or with `reports`, for reports) and pass the filter.
    func sql() -> (String, StatementArguments) {
        // Events: reports of their own and events' rows; reports: reports of their own and merged ones.
        var clauses: [String] = [reports ? "i.role <> 2" : "i.role <> 1"]
        var arguments = StatementArguments()
        if let activeAt {
            let (sql, values) = Self.inEffectSQL(at: activeAt, unconfirmedAfter: unconfirmedAfter)
            clauses.append(sql)
            arguments += values
        }
        if let since {
            clauses.append("i.updated >= ?")
            arguments += [since.timeIntervalSince1970]
        }
        if let until {
            clauses.append("i.updated < ?")
            arguments += [until.timeIntervalSince1970]
        }
        if !roads.isEmpty {
            // Each road by the road index or the other roads' partial index (`other_roads > ''`
            // is what lets the planner read that index for its half of the OR).
            var terms: [String] = []
            for condition in RoadCondition.of(roads) {
                var term: String
                if condition.isName {
                    // A road's name whatever the case: SQLite's lower() lowers ASCII letters only,
                    // as RoadCondition.nameKey does (no index: names are asked rarely).
                    term = "(lower(i.road) = ? OR (i.other_roads > '' AND instr(lower(i.other_roads), ?) > 0))"
                    let key = RoadCondition.nameKey(condition.road)
                    arguments += [key, "|" + key + "|"]
                } else {
                    term = "(i.road = ? OR (i.other_roads > '' AND instr(i.other_roads, ?) > 0))"
                    arguments += [condition.road, "|" + condition.road + "|"]
                }
                if let country = condition.country {
                    term = "(\(term) AND ifnull(json_extract(i.properties, '$.\(Incident.countryProperty)') = ?, 1))"
                    arguments += [country]
                }
                terms.append(term)
            }
            clauses.append("(" + terms.joined(separator: " OR ") + ")")
        }
        if !categories.isEmpty {
            clauses.append("i.category IN (" + categories.map { _ in "?" }.joined(separator: ",") + ")")
            for c in categories { arguments += [c.rawValue] }
        }
        if let minSeverity {
            let words = Severity.words(atLeast: minSeverity)
            clauses.append("lower(json_extract(i.properties, '$.severity')) IN (" + words.map { _ in "?" }.joined(separator: ",") + ")")
            for w in words { arguments += [w] }
        }
        // In the measures' order, so that the same question is the same statement (cached).
        for measure in IncidentMeasure.allCases {
            guard let least = minimums[measure] else { continue }
            clauses.append("i.\(measure.column) >= ?")
            arguments += [least]
        }
        if let minConfidence {
            // position_source 2 = geocoder (PositionSource.Kind.storeCode); feed positions are as
            // given; no position is no confidence.
            clauses.append("(i.latitude IS NOT NULL AND (i.position_source IS NOT 2 OR i.geocode_confidence >= ?))")
            arguments += [minConfidence]
        }
        if !precisions.isEmpty {
            // No position is precision none.
            let unplaced = precisions.contains(.none) ? "i.latitude IS NULL OR" : "i.latitude IS NOT NULL AND"
            clauses.append("(\(unplaced) (i.position_source IS NOT 2 OR i.geocode_precision IN (" + precisions.map { _ in "?" }.joined(separator: ",") + ")))")
            for p in precisions { arguments += [p.rawValue] }
        }
        if let source {
            // An event of several reports is from every source of its reports.
            clauses.append("""
                (i.source_id = (SELECT id FROM sources WHERE name = ?) OR (i.role = 2 AND EXISTS (SELECT 1 FROM incidents r \
                WHERE r.event_id = i.id AND r.source_id = (SELECT id FROM sources WHERE name = ?))))
                """)
            arguments += [source, source]
        }
        for word in words {
            // Köln, Koeln and Koln: the word's fold in the text's, or both loosened (TextFolding.loosen).
            let text = "i.title || ' ' || coalesce(i.summary, '') || ' ' || coalesce(i.road, '')"
            clauses.append("(instr(\(TextFolding.sqlFunctionName)(\(text)), ?) > 0 OR instr(\(TextFolding.plainSQLFunctionName)(\(text)), ?) > 0)")
            arguments += [word, TextFolding.loosen(word)]
        }
        return (clauses.joined(separator: " AND "), arguments)
    }
}
