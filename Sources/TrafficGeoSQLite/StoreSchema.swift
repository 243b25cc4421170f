import GRDB
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles

/// The database schema, as GRDB migrations: add a migration, never edit a shipped one.
enum StoreSchema {
    /// The CRS of the spatial index's coordinates: geocentric (ECEF) metres, so that the index is right
    /// anywhere on Earth, across the antimeridian and at the poles, and the straight-line (chord)
    /// distance to a box is a lower bound of the geodesic distance.
    static let indexCRS = "EPSG:4978"

    /// The unique index of (source, feed id); dropped and rebuilt around a bulk load.
    static let identityIndex = "incidents_identity"
    static let identityIndexSQL = "CREATE UNIQUE INDEX \(identityIndex) ON incidents(source_id, external_id)"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: incidents, R*Tree, geocode cache") { db in
            try db.execute(sql: """
                CREATE TABLE store_info (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                CREATE TABLE incidents (
                    id INTEGER PRIMARY KEY,
                    source TEXT NOT NULL,
                    external_id TEXT NOT NULL,
                    title TEXT NOT NULL,
                    summary TEXT,
                    weblink TEXT,
                    icon_url TEXT,
                    updated REAL,            -- seconds since 1970, UTC
                    expires REAL,
                    road TEXT,               -- normalised: A4, B54
                    category TEXT,
                    latitude REAL,
                    longitude REAL,
                    segment TEXT,            -- JSON [[lon, lat], ...]
                    position_source TEXT,    -- feed | weblink | geocoder
                    geocoder TEXT,
                    geocode_query TEXT,
                    geocode_precision TEXT,
                    geocode_confidence REAL,
                    properties TEXT,         -- JSON object of the feed's other fields
                    content_hash INTEGER NOT NULL,
                    first_seen REAL NOT NULL,
                    last_changed REAL NOT NULL,
                    UNIQUE (source, external_id),
                    CHECK ((latitude IS NULL) = (longitude IS NULL)),
                    CHECK (latitude IS NULL OR (latitude BETWEEN -90 AND 90 AND longitude BETWEEN -180 AND 180))
                );
                CREATE INDEX incidents_updated ON incidents(updated);
                CREATE INDEX incidents_expires ON incidents(expires);
                CREATE INDEX incidents_road ON incidents(road);
                CREATE INDEX incidents_unlocated ON incidents(id) WHERE latitude IS NULL;

                -- One entry per located incident, id = incidents.id; boxes are float32, rounded outward by SQLite.
                CREATE VIRTUAL TABLE incident_index USING rtree(id, min_x, max_x, min_y, max_y, min_z, max_z);
                CREATE TRIGGER incidents_delete_index AFTER DELETE ON incidents BEGIN
                    DELETE FROM incident_index WHERE id = old.id;
                END;

                CREATE TABLE geocode_cache (
                    request TEXT PRIMARY KEY NOT NULL,   -- provider + normalised query
                    status TEXT NOT NULL,                -- found | not-found
                    response TEXT NOT NULL,              -- JSON of the candidates
                    fetched REAL NOT NULL
                );
                """)
            try db.execute(sql: "INSERT INTO store_info(key, value) VALUES ('index_crs', ?), ('schema', 'trafficgeo 1')",
                           arguments: [indexCRS])
        }
        migrator.registerMigration("v2: geocoding status per incident") { db in
            // NULL = not tried; 'found'; 'not-found' (definite, not retried unless asked); 'failed' (retried next run).
            try db.execute(sql: """
                ALTER TABLE incidents ADD COLUMN geocode_status TEXT;
                ALTER TABLE incidents ADD COLUMN geocode_error TEXT;
                ALTER TABLE incidents ADD COLUMN geocode_attempts INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX incidents_geocode_pending ON incidents(id) WHERE latitude IS NULL;
                DROP INDEX incidents_unlocated;
                """)
        }
        migrator.registerMigration("v3: partial indexes") { db in
            // Feeds without times or roads (and the 1M-point benchmarks) would otherwise index a
            // NULL per row; `road = ?` and `updated >= ?` imply NOT NULL, so queries still use them.
            try db.execute(sql: """
                DROP INDEX incidents_updated;
                DROP INDEX incidents_expires;
                DROP INDEX incidents_road;
                CREATE INDEX incidents_updated ON incidents(updated) WHERE updated IS NOT NULL;
                CREATE INDEX incidents_expires ON incidents(expires) WHERE expires IS NOT NULL;
                CREATE INDEX incidents_road ON incidents(road) WHERE road IS NOT NULL;
                """)
        }
        migrator.registerMigration("v4: block index, sources table, compact rows") { db in
            // The R*Tree of one entry per point becomes an R*Tree of blocks of consecutive
            // incidents (see BlockIndex). Incidents stored before keep single entries, with the
            // boxes they had; new ones are stored in curve order and indexed as blocks.
            // The incidents table is rebuilt smaller (a million rows: 167 → ~100 MiB with the
            // index change): the source's name once in `sources` instead of in every row and
            // index entry; the position's source as a small integer; `last_changed` NULL while it
            // equals `first_seen`; the identity index
            // an explicit one, so a bulk load can build it sorted (full pages) after the rows.
            try db.execute(sql: """
                CREATE VIRTUAL TABLE incident_blocks USING rtree(id, min_x, max_x, min_y, max_y, min_z, max_z);
                INSERT INTO incident_blocks SELECT -id, min_x, max_x, min_y, max_y, min_z, max_z FROM incident_index;
                DROP TRIGGER incidents_delete_index;
                DROP TABLE incident_index;

                CREATE TABLE sources (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE
                );
                INSERT INTO sources (name) SELECT DISTINCT source FROM incidents ORDER BY source;
                CREATE TABLE incidents_v4 (
                    id INTEGER PRIMARY KEY,
                    source_id INTEGER NOT NULL REFERENCES sources(id),
                    external_id TEXT NOT NULL,
                    title TEXT NOT NULL,
                    summary TEXT,
                    weblink TEXT,
                    icon_url TEXT,
                    updated REAL,            -- seconds since 1970, UTC
                    expires REAL,
                    road TEXT,               -- normalised: A4, B54
                    category TEXT,
                    latitude REAL,
                    longitude REAL,
                    segment TEXT,            -- JSON [[lon, lat], ...]
                    position_source INTEGER, -- 0 feed, 1 weblink, 2 geocoder (PositionSource.Kind.storeCode)
                    geocoder TEXT,
                    geocode_query TEXT,
                    geocode_precision TEXT,
                    geocode_confidence REAL,
                    properties TEXT,         -- JSON object of the feed's other fields
                    content_hash INTEGER NOT NULL,
                    first_seen REAL NOT NULL,
                    last_changed REAL,       -- NULL: unchanged since first_seen
                    geocode_status TEXT,     -- NULL = not tried; found | not-found | failed (retried)
                    geocode_error TEXT,
                    geocode_attempts INTEGER NOT NULL DEFAULT 0,
                    CHECK ((latitude IS NULL) = (longitude IS NULL)),
                    CHECK (latitude IS NULL OR (latitude BETWEEN -90 AND 90 AND longitude BETWEEN -180 AND 180))
                );
                INSERT INTO incidents_v4
                SELECT i.id, s.id, i.external_id, i.title, i.summary, i.weblink, i.icon_url, i.updated, i.expires, i.road,
                       i.category, i.latitude, i.longitude, i.segment, CASE i.position_source WHEN 'feed' THEN 0 WHEN 'weblink' THEN 1 WHEN 'geocoder' THEN 2 END, i.geocoder, i.geocode_query,
                       i.geocode_precision, i.geocode_confidence, i.properties, i.content_hash, i.first_seen,
                       NULLIF(i.last_changed, i.first_seen), i.geocode_status, i.geocode_error, i.geocode_attempts
                FROM incidents i JOIN sources s ON s.name = i.source ORDER BY i.id;
                DROP TABLE incidents;
                ALTER TABLE incidents_v4 RENAME TO incidents;
                \(identityIndexSQL);
                CREATE INDEX incidents_updated ON incidents(updated) WHERE updated IS NOT NULL;
                CREATE INDEX incidents_expires ON incidents(expires) WHERE expires IS NOT NULL;
                CREATE INDEX incidents_road ON incidents(road) WHERE road IS NOT NULL;
                CREATE INDEX incidents_geocode_pending ON incidents(id) WHERE latitude IS NULL;
                CREATE TRIGGER incidents_delete_index AFTER DELETE ON incidents BEGIN
                    DELETE FROM incident_blocks WHERE id = -old.id;
                END;
                """)
        }
        migrator.registerMigration("v5: junction knowledge") { db in
            // Where each road's junctions are (Geocoding/KnownJunction.swift): one observation per
            // (road, junction, observer) — `incident:ID`, `geocoder:PROVIDER`, `import:NAME` — and
            // their robust aggregate, which geocoding reads. Road '' = road unknown (OSM nodes).
            try db.execute(sql: """
                CREATE TABLE junction_observations (
                    road TEXT NOT NULL,
                    name_key TEXT NOT NULL,      -- JunctionName.key: folded, kind words dropped
                    observer TEXT NOT NULL,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,          -- AS | AK | AD | '' (JunctionMention.Kind)
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    origin TEXT NOT NULL,        -- feed | geocoder:NAME | import:NAME
                    PRIMARY KEY (road, name_key, observer)
                ) WITHOUT ROWID;
                CREATE TABLE junctions (
                    road TEXT NOT NULL,
                    name_key TEXT NOT NULL,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    latitude REAL NOT NULL,
                    longitude REAL NOT NULL,
                    support INTEGER NOT NULL,    -- observations that agree
                    spread_m REAL NOT NULL,      -- their median distance from the position
                    learned_from TEXT NOT NULL,
                    PRIMARY KEY (road, name_key)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v6: sources named by the feed") { db in
            // Sources were named by a file's absolute path; now by the feed's own identity, else the
            // file name (FeedIdentity). Renamed sources remember the old name until the feed's
            // next ingest adopts them (SourceNames).
            try SourceNames.migrateToFeedIdentities(db)
        }
        migrator.registerMigration("v7: ended incidents, change feed, feed health") { db in
            // The change feed (ChangeLog): one row per run of events on consecutive store ids,
            // so that a million new incidents of one ingest are one row; event k of a row has
            // sequence number seq + k and concerns incident first_id + k. The last sequence
            // number given out is kept in store_info, so that numbers are never reused after
            // old events are pruned.
            try db.execute(sql: """
                ALTER TABLE incidents ADD COLUMN ended REAL;    -- a snapshot of its source stopped listing it
                CREATE TABLE changes (
                    seq INTEGER PRIMARY KEY,
                    count INTEGER NOT NULL,
                    at REAL NOT NULL,
                    kind INTEGER NOT NULL,      -- 0 new, 1 updated, 2 ended, 3 removed (ChangeKind.storeCode)
                    first_id INTEGER NOT NULL
                );
                CREATE INDEX changes_at ON changes(at);
                INSERT INTO store_info (key, value) VALUES ('\(ChangeLog.sequenceKey)', '0');
                ALTER TABLE sources ADD COLUMN last_attempt REAL;
                ALTER TABLE sources ADD COLUMN last_success REAL;
                ALTER TABLE sources ADD COLUMN last_error TEXT;
                ALTER TABLE sources ADD COLUMN last_error_at REAL;
                ALTER TABLE sources ADD COLUMN empty_streak INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE sources ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE sources ADD COLUMN last_entries INTEGER;
                """)
        }
        migrator.registerMigration("v8: reports and events") { db in
            // Every incident a feed gives is a report; reports of one real-world event are one
            // event (docs/conflation.md, EventRole): role 0 a report that is an event of its own,
            // 1 a report merged into the event `event_id`, 2 that event's row (its fields merged
            // from its reports, listed in `reports`; source `EventRows.sourceName`). Existing rows
            // are reports of their own; `trafficgeo events --rebuild` merges them. The road index
            // gains the latitude: a report looks for the events near it on its road (`EventMerger`).
            try db.execute(sql: """
                ALTER TABLE incidents ADD COLUMN role INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE incidents ADD COLUMN event_id INTEGER;
                ALTER TABLE incidents ADD COLUMN reports TEXT;
                CREATE INDEX incidents_event ON incidents(event_id) WHERE event_id IS NOT NULL;
                DROP INDEX incidents_road;
                CREATE INDEX incidents_road ON incidents(road, latitude) WHERE road IS NOT NULL;
                """)
        }
        migrator.registerMigration("v9: when an incident begins") { db in
            // In effect from the feed's own start, not its last update (`IncidentFilter.began`):
            // the `valid_from` detail in whole seconds, beside the row's times, so that
            // `--active-at` reads no JSON. Filled from the details trafficgeo wrote
            // ("2025-08-14T05:00:00Z": its first 19 characters are UTC).
            try db.execute(sql: """
                ALTER TABLE incidents ADD COLUMN valid_from REAL;
                UPDATE incidents SET valid_from = unixepoch(substr(json_extract(properties, '$.valid_from'), 1, 19))
                WHERE instr(properties, '"valid_from"') > 0
                  AND json_extract(properties, '$.valid_from') GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*';
                """)
        }
        migrator.registerMigration("v10: when a snapshot last listed a source's reports; other roads") { db in
            // A source read as snapshots vouches for every report it still lists: a report with no
            // end is in effect while it was updated, first read or listed by a snapshot within
            // `IncidentFilter.unconfirmedAfter` (`IncidentFilter.listedAtSQL`).
            // The roads an incident is on besides its road (`IncidentRowLayout.Field.otherRoads`),
            // with a partial index: a road filter's "road = ? OR other roads hold it" reads both
            // indexes (older rows have none: their feeds were read with one road).
            try db.execute(sql: """
                ALTER TABLE sources ADD COLUMN last_snapshot REAL;
                ALTER TABLE incidents ADD COLUMN other_roads TEXT;
                CREATE INDEX incidents_other_roads ON incidents(other_roads) WHERE other_roads IS NOT NULL;
                """)
        }
        migrator.registerMigration("v11: recurring schedules") { db in
            // A report's recurring schedule (`RecurringSchedule`, the `schedule` detail in its
            // canonical form) beside its times, so that `--active-at` reads no JSON: NULL for
            // nearly every row. Older stores kept Open511's schedules as the feed wrote them,
            // which no query read: their reports get one when their feed is read again.
            try db.execute(sql: "ALTER TABLE incidents ADD COLUMN schedule TEXT")
        }
        // Each measure a filter compares (`IncidentMeasure`) as a number of its own, filled from
        // the details already stored: a new measure is its own migration, named by its column.
        for measure in IncidentMeasure.allCases {
            migrator.registerMigration("measure: \(measure.column)") { db in try addColumn(of: measure, db) }
        }
        return migrator
    }

    /// The measure's column, with the number of every stored row whose details give one
    /// (`IncidentMeasure.number(_:)`: the one reading of the detail's text, as new rows get it).
    static func addColumn(of measure: IncidentMeasure, _ db: Database) throws {
        try db.execute(sql: "ALTER TABLE incidents ADD COLUMN \(measure.column) REAL")
        let rows = try Row.fetchCursor(db, sql: """
            SELECT id, json_extract(properties, '$.\(measure.property)') FROM incidents WHERE instr(properties, '"\(measure.property)"') > 0
            """)
        let update = try db.makeStatement(sql: "UPDATE incidents SET \(measure.column) = ? WHERE id = ?")
        while let row = try rows.next() {
            guard let number = measure.number(row[1] as String?) else { continue }
            try update.execute(arguments: [number, row[0] as Int64])
        }
    }
}
