#include <sqlite3.h>
#include "sqlite_config.h"

int trafficgeo_sqlite_is_defensive(void *connection) {
    int on = -1;
    if (sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_DEFENSIVE, -1, &on) != SQLITE_OK) return -1;
    return on;
}

int trafficgeo_sqlite_set_defensive(void *connection, int on) {
    int now = 0;
    return sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_DEFENSIVE, on, &now);
}
