#ifndef TRAFFICGEO_SQLITE_CONFIG_H
#define TRAFFICGEO_SQLITE_CONFIG_H

/// sqlite3_db_config is variadic, which Swift cannot call: these wrap the one option trafficgeo
/// needs. `connection` is a sqlite3 * (GRDB's Database.sqliteConnection).

/// Whether SQLITE_DBCONFIG_DEFENSIVE is on for the connection (1), off (0), or unknown (-1).
int trafficgeo_sqlite_is_defensive(void *connection);

/// Turns SQLITE_DBCONFIG_DEFENSIVE on (1) or off (0); returns SQLite's result code.
int trafficgeo_sqlite_set_defensive(void *connection, int on);

#endif
