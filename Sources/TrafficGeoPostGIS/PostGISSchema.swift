import Foundation
import Logging
import PostgresNIO
import TrafficGeoModel
import TrafficGeoStore

/// The PostGIS store's schema, as numbered migrations applied in order and recorded in
/// `trafficgeo_migrations`: add a migration, never edit a shipped one.
///
/// The tables mirror the SQLite store's (`StoreSchema` there), with PostgreSQL's types: times are
/// seconds since 1970 as `double precision` (the same values the file keeps, so filters compare
/// alike), the position a `geography(Point,4326)` made from the exact latitude and longitude
/// columns by every statement that writes them (`positionFromCoordinates`), with a GiST index
/// for `<->` and `ST_DWithin`, and the segment a `geography` LineString. Word search reads two folded copies of the text (`TextFolding`),
/// written by trafficgeo, since PostgreSQL cannot call Swift's folding.
enum PostGISSchema {
    struct Migration {
        var version: Int
        var name: String
        var sql: String
        /// Whole statements run after `sql`'s, such as a function whose body holds semicolons.
        var routines: [String] = []
        /// Work in Swift after the statements, in the same transaction (filling a measure's column
        /// from the details by the one reading, `IncidentMeasure.number(_:)`).
        var fill: (@Sendable (PostgresConnection, Logger) throws -> Void)?

        /// The statements of `sql` (each ends with a semicolon at the end of a line), then the routines.
        var statements: [String] {
            sql.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .map { $0.hasSuffix(";") ? String($0.dropLast()) : $0 }.filter { !$0.isEmpty } + routines
        }
    }

    /// What `store_info.index` says: where the nearest search comes from.
    static let indexDescription = "PostGIS GiST on geography(Point,4326)"
    static let sequenceKey = "change_sequence"
    static let nextIncidentKey = "next_incident_id"
    /// The advisory lock every writing transaction takes first: writers go one at a time, so that
    /// change-feed sequence numbers become visible in order (a reader never sees event 11 while
    /// 10 is still uncommitted, and so never skips it).
    static let writerLock: Int64 = 0x7472_6166_6765_6f31   // "trafgeo1"
    /// Taken by the migrating process: two trafficgeo starting on a new database at once.
    static let migrationLock: Int64 = 0x7472_6166_6765_6f30

    /// An index of the incidents table as of the latest migration. A bulk load into an empty
    /// table drops them and builds each once at its end (`PostGISIncidentWriter`), several times
    /// faster than keeping them up to date row by row, except a partial index that few of the
    /// rows enter (`indexes`): kept, it costs a predicate test per row; rebuilt, a scan of the
    /// whole table.
    struct IncidentIndex: Sendable {
        var name: String
        var sql: String
        /// For a partial index, whether a new row enters it (its `WHERE`, in Swift).
        var indexes: (@Sendable (Incident) -> Bool)?
    }

    static let incidentIndexes: [IncidentIndex] = version1Indexes.map { index in
        // Migration 3: the road index holds the latitude too (a report looks for the events near
        // it on its road, `EventMerger`).
        guard index.name == "incidents_road" else { return index }
        return IncidentIndex(name: "incidents_road", sql: "CREATE INDEX incidents_road ON incidents (road, latitude) WHERE road IS NOT NULL",
                             indexes: { $0.road != nil })
    } + [
        // New rows are reports of their own.
        IncidentIndex(name: "incidents_event", sql: "CREATE INDEX incidents_event ON incidents (event_id) WHERE event_id IS NOT NULL",
                      indexes: { _ in false }),
        // Migration 4: the rows on more than one road.
        IncidentIndex(name: "incidents_other_roads",
                      sql: "CREATE INDEX incidents_other_roads ON incidents ((properties ->> 'other_roads')) WHERE properties ? 'other_roads'",
                      indexes: { !$0.otherRoads.isEmpty }),
    ]

    /// The indexes migration 1 made (as shipped: never edit).
    private static let version1Indexes: [IncidentIndex] = [
        IncidentIndex(name: "incidents_identity", sql: "CREATE UNIQUE INDEX incidents_identity ON incidents (source_id, external_id)"),
        IncidentIndex(name: "incidents_position", sql: "CREATE INDEX incidents_position ON incidents USING gist (position)"),
        IncidentIndex(name: "incidents_updated", sql: "CREATE INDEX incidents_updated ON incidents (updated) WHERE updated IS NOT NULL",
                      indexes: { $0.updated != nil }),
        IncidentIndex(name: "incidents_expires", sql: "CREATE INDEX incidents_expires ON incidents (expires) WHERE expires IS NOT NULL",
                      indexes: { $0.expires != nil }),
        // New rows have not ended.
        IncidentIndex(name: "incidents_ended", sql: "CREATE INDEX incidents_ended ON incidents (ended) WHERE ended IS NOT NULL",
                      indexes: { _ in false }),
        IncidentIndex(name: "incidents_road", sql: "CREATE INDEX incidents_road ON incidents (road) WHERE road IS NOT NULL",
                      indexes: { $0.road != nil }),
        IncidentIndex(name: "incidents_geocode_pending", sql: "CREATE INDEX incidents_geocode_pending ON incidents (id) WHERE latitude IS NULL",
                      indexes: { $0.position == nil }),
    ]

    /// The primary key: kept up to date row by row it is a quarter of a bulk insert's time on
    /// the server; built at the end from the (ascending) ids, a fraction of that.
    static let primaryKey = (name: "incidents_pkey", sql: "ALTER TABLE incidents ADD CONSTRAINT incidents_pkey PRIMARY KEY (id)")

    /// The incidents' foreign key to their source: checked per row, it is half the cost of a bulk
    /// insert, so a bulk load drops it too and adds it back (one validating join) at its end.
    static let sourceForeignKey = (name: "incidents_source_id_fkey",
                                   sql: "ALTER TABLE incidents ADD CONSTRAINT incidents_source_id_fkey FOREIGN KEY (source_id) REFERENCES sources(id)")

    /// The position as written since migration 2 (`PostGISRows.Batch`), from the exact latitude
    /// and longitude of the rows being written (`u`).
    static let positionFromCoordinates =
        "CASE WHEN u.latitude IS NULL THEN NULL ELSE ST_SetSRID(ST_MakePoint(u.longitude, u.latitude), 4326)::geography END"

    static let migrations: [Migration] = [
        Migration(version: 1, name: "incidents, sources, change feed, geocode cache, junctions", sql: """
            CREATE TABLE store_info (
                key text PRIMARY KEY,
                value text NOT NULL
            );
            CREATE TABLE sources (
                id bigserial PRIMARY KEY,
                name text NOT NULL UNIQUE,
                renamed_from text,
                last_attempt double precision,
                last_success double precision,
                last_error text,
                last_error_at double precision,
                empty_streak integer NOT NULL DEFAULT 0,
                failure_streak integer NOT NULL DEFAULT 0,
                last_entries integer
            );
            CREATE TABLE incidents (
                id bigint PRIMARY KEY,
                source_id bigint NOT NULL REFERENCES sources(id),
                external_id text NOT NULL,
                title text NOT NULL,
                summary text,
                weblink text,
                icon_url text,
                updated double precision,         -- seconds since 1970, UTC
                expires double precision,
                road text,                        -- normalised: A4, B54
                category text,
                latitude double precision,        -- exact, as the feed or geocoder gave it
                longitude double precision,
                position geography(Point, 4326) GENERATED ALWAYS AS (
                    CASE WHEN latitude IS NULL THEN NULL
                         ELSE ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)::geography END) STORED,
                segment geography(Geometry, 4326),  -- a LineString (a Point when the feed gave one point)
                position_source smallint,         -- 0 feed, 1 weblink, 2 geocoder
                geocoder text,
                geocode_query text,
                geocode_precision text,
                geocode_confidence double precision,
                properties jsonb,                 -- the feed's other fields
                content_hash bigint NOT NULL,
                first_seen double precision NOT NULL,
                last_changed double precision NOT NULL,
                ended double precision,           -- a snapshot of its source stopped listing it
                geocode_status text,              -- NULL not tried; found | not-found | failed (retried)
                geocode_error text,
                geocode_attempts integer NOT NULL DEFAULT 0,
                search_folded text NOT NULL,      -- TextFolding.fold(title summary road)
                search_plain text,                -- no longer filled or read (word search loosens search_folded)
                CHECK ((latitude IS NULL) = (longitude IS NULL)),
                CHECK (latitude IS NULL OR (latitude BETWEEN -90 AND 90 AND longitude BETWEEN -180 AND 180))
            );
            \(version1Indexes.map { $0.sql + ";" }.joined(separator: "\n"))

            -- The change feed, as in the SQLite store: one row per run of events on consecutive
            -- store ids; event k of a row has sequence number seq + k and concerns first_id + k.
            CREATE TABLE changes (
                seq bigint PRIMARY KEY,
                count bigint NOT NULL,
                at double precision NOT NULL,
                kind smallint NOT NULL,           -- 0 new, 1 updated, 2 ended, 3 removed
                first_id bigint NOT NULL
            );
            CREATE INDEX changes_at ON changes (at);

            CREATE TABLE geocode_cache (
                request text PRIMARY KEY,         -- provider + normalised query
                status text NOT NULL,             -- found | not-found
                response text NOT NULL,           -- JSON of the candidates
                fetched double precision NOT NULL
            );

            CREATE TABLE junction_observations (
                road text NOT NULL,
                name_key text NOT NULL,
                observer text NOT NULL,
                name text NOT NULL,
                kind text NOT NULL,
                latitude double precision NOT NULL,
                longitude double precision NOT NULL,
                origin text NOT NULL,
                PRIMARY KEY (road, name_key, observer)
            );
            CREATE TABLE junctions (
                road text NOT NULL,
                name_key text NOT NULL,
                name text NOT NULL,
                kind text NOT NULL,
                latitude double precision NOT NULL,
                longitude double precision NOT NULL,
                support integer NOT NULL,
                spread_m double precision NOT NULL,
                learned_from text NOT NULL,
                PRIMARY KEY (road, name_key)
            );
            INSERT INTO store_info (key, value) VALUES
                ('schema', 'trafficgeo postgis 1'), ('index', '\(indexDescription)'),
                ('\(sequenceKey)', '0'), ('\(nextIncidentKey)', '1');
            """),
        // A generated column cost a quarter of a bulk insert's time on the server (computing the
        // same expression in the INSERT, a tenth): the writers compute it now, and a check keeps
        // it present exactly when the coordinates are.
        Migration(version: 2, name: "position written with the coordinates", sql: """
            ALTER TABLE incidents ALTER COLUMN position DROP EXPRESSION;
            ALTER TABLE incidents ADD CONSTRAINT incidents_position_known CHECK ((position IS NULL) = (latitude IS NULL));
            UPDATE store_info SET value = 'trafficgeo postgis 2' WHERE key = 'schema';
            """),
        // Reports and events (docs/conflation.md, the SQLite store's v8): role 0 a report that is
        // an event of its own, 1 a report merged into the event `event_id`, 2 that event's row
        // (fields merged from its reports, listed in `reports`; filed under
        // `EventRole.eventSourceName`). Existing rows are reports of their own.
        Migration(version: 3, name: "reports and events", sql: """
            ALTER TABLE incidents ADD COLUMN role smallint NOT NULL DEFAULT 0;
            ALTER TABLE incidents ADD COLUMN event_id bigint;
            ALTER TABLE incidents ADD COLUMN reports text;
            CREATE INDEX incidents_event ON incidents (event_id) WHERE event_id IS NOT NULL;
            DROP INDEX incidents_road;
            CREATE INDEX incidents_road ON incidents (road, latitude) WHERE road IS NOT NULL;
            UPDATE store_info SET value = 'trafficgeo postgis 3' WHERE key = 'schema';
            """),
        // A source read as snapshots vouches for the reports it still lists: a report with no
        // end stays in effect while updated, first read or listed within `unconfirmedAfter`
        // (`IncidentFilter.listedAtSQL`).
        // The other roads an incident is on are a detail (`Incident.otherRoadsProperty`); a
        // partial index over the rows that have any lets a road filter read only those besides
        // its road's rows.
        Migration(version: 4, name: "when a snapshot last listed a source's reports; other roads", sql: """
            ALTER TABLE sources ADD COLUMN last_snapshot double precision;
            CREATE INDEX incidents_other_roads ON incidents ((properties ->> 'other_roads')) WHERE properties ? 'other_roads';
            UPDATE store_info SET value = 'trafficgeo postgis 4' WHERE key = 'schema';
            """),
        // A report's recurring schedule (the `schedule` detail, `RecurringSchedule`) decides
        // `--active-at` with the function `inScheduleFunction`, the same rules as the SQLite
        // store's (which calls `RecurringSchedule.isInEffect`).
        Migration(version: 5, name: "recurring schedules", sql: """
            UPDATE store_info SET value = 'trafficgeo postgis 5' WHERE key = 'schema';
            """, routines: [inScheduleFunction]),
    ] + measureMigrations(after: 5)

    /// Each measure a filter compares (`IncidentMeasure`) as a number of its own, filled from the
    /// details already stored: a new measure is its own migration, numbered after the others in
    /// the order of `IncidentMeasure.allCases` (so add a measure at its end).
    private static func measureMigrations(after last: Int) -> [Migration] {
        IncidentMeasure.allCases.enumerated().map { k, measure in
            let version = last + 1 + k
            return Migration(version: version, name: "measure: \(measure.column)", sql: """
                ALTER TABLE incidents ADD COLUMN \(measure.column) double precision;
                UPDATE store_info SET value = 'trafficgeo postgis \(version)' WHERE key = 'schema';
                """, fill: { connection, logger in try fillColumn(of: measure, connection, logger: logger) })
        }
    }

    /// The measure's number in every stored row whose details give one, read as new rows are.
    @available(*, noasync, message: "waits on an EventLoopFuture: call it from a store thread")
    private static func fillColumn(of measure: IncidentMeasure, _ connection: PostgresConnection, logger: Logger) throws {
        let rows = try connection.rows(PostgresQuery(unsafeSQL: "SELECT id, properties ->> '\(measure.property)' FROM incidents WHERE properties ? '\(measure.property)'"),
                                       logger: logger)
        var ids: [Int64] = [], numbers: [Double] = []
        for row in rows {
            let (id, text) = try row.decode((Int64, String?).self)
            if let number = measure.number(text) { ids.append(id); numbers.append(number) }
        }
        for start in stride(from: 0, to: ids.count, by: 10_000) {
            let end = min(ids.count, start + 10_000)
            var binds = PostgresBindings(capacity: 2)
            binds.append(Array(ids[start..<end]))
            binds.append(Array(numbers[start..<end]))
            try connection.run(PostgresQuery(unsafeSQL: """
                UPDATE incidents i SET \(measure.column) = u.v FROM (SELECT unnest($1::bigint[]) AS id, unnest($2::float8[]) AS v) AS u WHERE i.id = u.id
                """, binds: binds), logger: logger)
        }
    }

    /// `tg_in_schedule(schedule text, t double precision)`: whether a schedule's canonical text
    /// (`RecurringSchedule.text`) holds at `t` (seconds since 1970), as
    /// `RecurringSchedule.isInEffect` decides; true for a text `RecurringSchedule(text:)` does not
    /// read (not that form: an older store's raw text, a CSV column named so), which constrains
    /// nothing there either. First the text is checked as that initializer checks it, then the
    /// day's windows (its exception's, else its rules'), then the day before's overnight ones.
    static let inScheduleFunction = #"""
        CREATE OR REPLACE FUNCTION tg_in_schedule(schedule text, t double precision) RETURNS boolean
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
        DECLARE
          s jsonb; r jsonb; x record; w text; wall timestamp; day date; secs double precision;
          a int; b int; n int := 0;
          date_form constant text := '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
          window_form constant text := '^([01][0-9]|2[0-3]):[0-5][0-9]-(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';
        BEGIN
          IF left(schedule, 1) <> '{' OR octet_length(schedule) > 65536 THEN RETURN true; END IF;
          s := schedule::jsonb;
          IF jsonb_typeof(s -> 'rules') IS DISTINCT FROM 'array' OR jsonb_typeof(s -> 'offset') IS DISTINCT FROM 'number'
             OR (s ->> 'offset') !~ '^-?[0-9]+$' THEN RETURN true; END IF;
          IF EXISTS (SELECT 1 FROM jsonb_array_elements(s -> 'rules') e WHERE jsonb_typeof(e) <> 'object') THEN RETURN true; END IF;
          FOR r IN SELECT e FROM jsonb_array_elements(s -> 'rules') WITH ORDINALITY AS q(e, o) WHERE o <= 1000 LOOP
            IF coalesce(jsonb_typeof(r -> 'from') <> 'string' OR (r ->> 'from') !~ date_form
                        OR to_char((r ->> 'from')::date, 'YYYY-MM-DD') <> (r ->> 'from'), true)
               OR coalesce(jsonb_typeof(r -> 'times') <> 'string' OR (r ->> 'times') !~ window_form, true)
               OR coalesce(jsonb_typeof(r -> 'days') <> 'array', true)
               OR (r ? 'until' AND coalesce(jsonb_typeof(r -> 'until') <> 'string' OR (r ->> 'until') !~ date_form
                                            OR to_char((r ->> 'until')::date, 'YYYY-MM-DD') <> (r ->> 'until'), true)) THEN
              RETURN true;
            END IF;
          END LOOP;
          IF jsonb_typeof(s -> 'exceptions') = 'object' THEN
            FOR x IN SELECT key, value FROM jsonb_each(s -> 'exceptions') LOOP
              IF x.key !~ date_form OR to_char(x.key::date, 'YYYY-MM-DD') <> x.key OR jsonb_typeof(x.value) <> 'array' THEN RETURN true; END IF;
            END LOOP;
          END IF;

          wall := (to_timestamp(t) AT TIME ZONE 'UTC') + make_interval(mins => (s ->> 'offset')::int);
          IF jsonb_typeof(s -> 'zone') = 'string' THEN
            BEGIN
              wall := to_timestamp(t) AT TIME ZONE (s ->> 'zone');
            EXCEPTION WHEN others THEN NULL;
            END;
          END IF;
          day := wall::date;
          secs := extract(epoch FROM wall - day::timestamp);

          -- The day: its exception's windows, else the windows of the rules that take it.
          IF jsonb_typeof(s -> 'exceptions') = 'object' AND (s -> 'exceptions') ? to_char(day, 'YYYY-MM-DD') THEN
            FOR w IN SELECT jsonb_array_elements_text(s -> 'exceptions' -> to_char(day, 'YYYY-MM-DD')) LOOP
              CONTINUE WHEN w !~ window_form;
              a := split_part(split_part(w, '-', 1), ':', 1)::int * 60 + split_part(split_part(w, '-', 1), ':', 2)::int;
              b := split_part(split_part(w, '-', 2), ':', 1)::int * 60 + split_part(split_part(w, '-', 2), ':', 2)::int;
              IF secs >= a * 60 AND (b <= a OR secs < b * 60) THEN RETURN true; END IF;
            END LOOP;
          ELSE
            FOR r IN SELECT e FROM jsonb_array_elements(s -> 'rules') WITH ORDINALITY AS q(e, o) WHERE o <= 1000 LOOP
              CONTINUE WHEN (r ->> 'from')::date > day OR (r ? 'until' AND (r ->> 'until')::date < day)
                            OR NOT (r -> 'days') @> to_jsonb(extract(isodow FROM day)::int);
              w := r ->> 'times';
              a := split_part(split_part(w, '-', 1), ':', 1)::int * 60 + split_part(split_part(w, '-', 1), ':', 2)::int;
              b := split_part(split_part(w, '-', 2), ':', 1)::int * 60 + split_part(split_part(w, '-', 2), ':', 2)::int;
              IF secs >= a * 60 AND (b <= a OR secs < b * 60) THEN RETURN true; END IF;
            END LOOP;
          END IF;

          -- The overnight windows begun the day before, as that day allows them.
          IF jsonb_typeof(s -> 'exceptions') = 'object' AND (s -> 'exceptions') ? to_char(day - 1, 'YYYY-MM-DD') THEN RETURN false; END IF;
          FOR r IN SELECT e FROM jsonb_array_elements(s -> 'rules') WITH ORDINALITY AS q(e, o) WHERE o <= 1000 LOOP
            CONTINUE WHEN (r ->> 'from')::date > day - 1 OR (r ? 'until' AND (r ->> 'until')::date < day - 1)
                          OR NOT (r -> 'days') @> to_jsonb(extract(isodow FROM day - 1)::int);
            w := r ->> 'times';
            a := split_part(split_part(w, '-', 1), ':', 1)::int * 60 + split_part(split_part(w, '-', 1), ':', 2)::int;
            b := split_part(split_part(w, '-', 2), ':', 1)::int * 60 + split_part(split_part(w, '-', 2), ':', 2)::int;
            IF b <= a AND secs < b * 60 THEN RETURN true; END IF;
          END LOOP;
          RETURN false;
        EXCEPTION WHEN others THEN
          RETURN true;
        END
        $fn$
        """#

    static var latestVersion: Int { migrations.map(\.version).max() ?? 0 }

    /// The version the database is at: 0 for none (no trafficgeo tables).
    static func version(_ connection: PostgresConnection, logger: Logger) throws -> Int {
        let exists = try connection.rows("SELECT to_regclass('trafficgeo_migrations') IS NOT NULL", logger: logger)
        guard try exists.first?.decode(Bool.self) == true else { return 0 }
        return try connection.rows("SELECT coalesce(max(version), 0) FROM trafficgeo_migrations", logger: logger).first?.decode(Int.self) ?? 0
    }

    /// Creates or upgrades the schema, each migration in its own transaction, under an advisory
    /// lock (a second process waits, then finds the work done). Tests stop at an older version
    /// (`target`) to see a store of that version upgraded.
    static func migrate(_ session: PostgresSession, upTo target: Int = latestVersion) throws {
        try session.withConnection { connection in
            let logger = session.logger
            guard try version(connection, logger: logger) < target else { return }
            try connection.run("SELECT pg_advisory_lock(\(migrationLock))", logger: logger)
            defer { _ = try? connection.run("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger) }
            try ensurePostGIS(connection, session: session)
            try connection.run("""
                CREATE TABLE IF NOT EXISTS trafficgeo_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            let current = try version(connection, logger: logger)
            for migration in migrations where migration.version > current && migration.version <= target {
                try connection.run("BEGIN", logger: logger)
                do {
                    // Our own SQL, one statement at a time (the extended protocol takes one per query).
                    for statement in migration.statements { try connection.run(PostgresQuery(unsafeSQL: statement), logger: logger) }
                    try migration.fill?(connection, logger)
                    try connection.run("INSERT INTO trafficgeo_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                    try connection.run("COMMIT", logger: logger)
                } catch {
                    _ = try? connection.run("ROLLBACK", logger: logger)
                    throw StoreError.incompatible(session.location.redacted, reason: "migration \(migration.version) (\(migration.name)) failed: \(PostgresErrorText.describe(error))")
                }
            }
        }
    }

    /// Creates the PostGIS extension if the database lacks it (which needs a superuser, or the
    /// database's owner on PostgreSQL 13+ where the extension is trusted); says what to do if not.
    private static func ensurePostGIS(_ connection: PostgresConnection, session: PostgresSession) throws {
        let installed = try connection.rows("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'", logger: session.logger)
        if try installed.first?.decode(Int.self) ?? 0 > 0 { return }
        do {
            try connection.run("CREATE EXTENSION IF NOT EXISTS postgis", logger: session.logger)
        } catch {
            throw StoreError.cannotOpen(session.location.redacted, reason: """
                the database has no PostGIS and trafficgeo cannot add it (\(PostgresErrorText.describe(error))); \
                install PostGIS on the server (Debian: postgresql-15-postgis-3) and run CREATE EXTENSION postgis as a superuser
                """)
        }
    }
}
