import PostgresNIO
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// SQL text with its bound parameters, numbered as they are added (`$1`, `$2`, …): values never
/// go into the text.
struct BoundSQL {
    var sql = ""
    private(set) var bindings = PostgresBindings()
    private var count = 0

    init(_ sql: String = "") { self.sql = sql }

    /// Binds `value` and returns its placeholder.
    mutating func bind<T: PostgresDynamicTypeEncodable>(_ value: T) -> String {
        bindings.append(value)
        count += 1
        return "$\(count)"
    }

    mutating func bindNull() -> String {
        bindings.appendNull()
        count += 1
        return "$\(count)"
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: bindings) }
}

extension IncidentFilter {
    /// `IncidentFilter.began(_:by:)` in SQL, as the SQLite store's: `start` and `seconds` are
    /// the instant as start text and as seconds (bound parameters or literals trafficgeo wrote).
    /// Compared byte by byte (COLLATE "C"), as the text is.
    static func beganSQL(alias: String, start: String, seconds: String) -> String {
        let value = "(\(alias)properties ->> 'valid_from')"
        let byUpdate = "\(alias)updated IS NULL OR \(alias)updated <= \(seconds)"
        return """
            (CASE WHEN NOT coalesce(\(alias)properties ? 'valid_from', false) THEN \(byUpdate) \
            ELSE coalesce(CASE WHEN \(value) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' \
            THEN left(\(value), \(IncidentFilter.startTextLength)) COLLATE "C" <= \(start) COLLATE "C" END, \(byUpdate)) END)
            """
    }

    /// In effect at the instant `seconds` (start text `start`), for the table aliased `i`, as the
    /// SQLite store's `inEffectSQL`; `cut` (seconds): the instant before which a report without
    /// an end is no longer in effect (`IncidentFilter.isUnconfirmed`), nil for never.
    static func inEffectSQL(seconds: String, start: String, cut: String?) -> String {
        var sql = "(i.expires IS NULL OR \(seconds) < i.expires) AND (i.ended IS NULL OR \(seconds) < i.ended) AND "
            + beganSQL(alias: "i.", start: start, seconds: seconds)
            + " AND (NOT (i.properties ? '\(RecurringSchedule.property)') OR tg_in_schedule(i.properties ->> '\(RecurringSchedule.property)', \(seconds)))"
        if let cut { sql += " AND " + confirmedSQL(cut: cut) }
        return sql
    }

    /// `IncidentFilter.startSeconds` of the table aliased `i`: the `valid_from` detail's first 19
    /// characters (UTC, as trafficgeo writes it) in seconds, NULL when it is not in that form.
    static let startSecondsSQL = """
        (CASE WHEN i.properties ->> 'valid_from' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}' \
        THEN extract(epoch FROM (left(i.properties ->> 'valid_from', \(IncidentFilter.startTextLength)) || '+00')::timestamptz)::double precision END)
        """

    /// Not `isUnconfirmed` before `cut`; the snapshot's lookup only for old rows with no end.
    static func confirmedSQL(cut: String) -> String {
        "(i.expires IS NOT NULL OR i.ended IS NOT NULL OR coalesce(i.updated, i.first_seen) >= \(cut) OR coalesce(\(startSecondsSQL) >= \(cut), false) OR coalesce((\(listedAtSQL)) >= \(cut), false))"
    }

    /// The condition on the incidents table aliased `i` (its parameters bound into `query`),
    /// the same conditions as the SQLite store's `IncidentFilter.sql()`: the rows that answer for
    /// events (or with `reports`, for reports) and pass the filter.
    func condition(binding query: inout BoundSQL) -> String {
        var clauses: [String] = [reports ? "i.role <> 2" : "i.role <> 1"]
        if let activeAt {
            let t = query.bind(activeAt.timeIntervalSince1970)
            let start = query.bind(IncidentFilter.startText(of: activeAt))
            let cut = unconfirmedAfter.map { query.bind(activeAt.timeIntervalSince1970 - $0) }
            clauses.append(Self.inEffectSQL(seconds: t, start: start, cut: cut))
        }
        if let since { clauses.append("i.updated >= \(query.bind(since.timeIntervalSince1970))") }
        if let until { clauses.append("i.updated < \(query.bind(until.timeIntervalSince1970))") }
        if !roads.isEmpty {
            // As the SQLite store's: the road, or one of the other roads (a partial index over the
            // rows that have any), in the country asked if the feed names one.
            let terms = RoadCondition.of(roads).map { condition -> String in
                var term: String
                if condition.isName {
                    // A road's name whatever the case: ASCII letters lowered by translate, exactly
                    // as RoadCondition.nameKey and SQLite's lower() do (PostgreSQL's lower() lowers
                    // every letter, and the stores would disagree on "Ö").
                    let key = RoadCondition.nameKey(condition.road)
                    let road = query.bind(PostgresText.storable(key))
                    let bars = query.bind(PostgresText.storable("|" + key + "|"))
                    func lowered(_ sql: String) -> String { "translate(\(sql), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')" }
                    term = "(\(lowered("i.road")) = \(road) OR (i.properties ? '\(Incident.otherRoadsProperty)' AND "
                        + "position(\(bars) in \(lowered("'|' || (i.properties ->> '\(Incident.otherRoadsProperty)') || '|'"))) > 0))"
                } else {
                    let road = query.bind(PostgresText.storable(condition.road))
                    let bars = query.bind(PostgresText.storable("|" + condition.road + "|"))
                    term = "(i.road = \(road) OR (i.properties ? '\(Incident.otherRoadsProperty)' AND "
                        + "position(\(bars) in '|' || (i.properties ->> '\(Incident.otherRoadsProperty)') || '|') > 0))"
                }
                if let country = condition.country {
                    term = "(\(term) AND coalesce(i.properties ->> '\(Incident.countryProperty)' = \(query.bind(country)), true))"
                }
                return term
            }
            clauses.append("(" + terms.joined(separator: " OR ") + ")")
        }
        if !categories.isEmpty { clauses.append("i.category = ANY(\(query.bind(categories.map(\.rawValue)))::text[])") }
        if let minSeverity {
            clauses.append("lower(i.properties ->> 'severity') = ANY(\(query.bind(Severity.words(atLeast: minSeverity)))::text[])")
        }
        for measure in IncidentMeasure.allCases {
            guard let least = minimums[measure] else { continue }
            clauses.append("i.\(measure.column) >= \(query.bind(least))")
        }
        if let minConfidence {
            // position_source 2 = geocoder; feed positions are as given; no position is no confidence.
            clauses.append("(i.latitude IS NOT NULL AND (i.position_source IS DISTINCT FROM 2 OR i.geocode_confidence >= \(query.bind(minConfidence))))")
        }
        if !precisions.isEmpty {
            // No position is precision none.
            let unplaced = precisions.contains(.none) ? "i.latitude IS NULL OR" : "i.latitude IS NOT NULL AND"
            clauses.append("(\(unplaced) (i.position_source IS DISTINCT FROM 2 OR i.geocode_precision = ANY(\(query.bind(precisions.map(\.rawValue)))::text[])))")
        }
        if let source {
            // An event of several reports is from every source of its reports.
            let id = "(SELECT id FROM sources WHERE name = \(query.bind(PostgresText.storable(source))))"
            clauses.append("(i.source_id = \(id) OR (i.role = 2 AND EXISTS (SELECT 1 FROM incidents r WHERE r.event_id = i.id AND r.source_id = \(id))))")
        }
        for word in words {
            // Köln, Koeln and Koln: the word's fold in the text's, or both loosened (TextFolding.loosen),
            // the text's loosened here from the folded column, so rows written before need nothing new.
            let w = query.bind(PostgresText.storable(word)), loose = query.bind(PostgresText.storable(TextFolding.loosen(word)))
            clauses.append("(strpos(i.search_folded, \(w)) > 0 OR strpos(\(TextFolding.loosenSQL("i.search_folded")), \(loose)) > 0)")
        }
        return clauses.joined(separator: " AND ")
    }
}
