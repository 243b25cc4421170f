import Foundation
import TrafficGeoPostGIS
import TrafficGeoSQLite
import TrafficGeoStore

/// Which store a location names, opened: the one place that picks an `IncidentStore`
/// implementation, so commands and library users never name one. A `postgresql://` URL is a
/// PostGIS store (`PostGISIncidentStore`); anything else is the path of an SQLite file.
public enum StoreOpening {
    /// The default store: `$TRAFFICGEO_DB` (a path or a `postgresql://` URL), else
    /// `$XDG_DATA_HOME/trafficgeo/incidents.sqlite` (`~/.local/share/trafficgeo/incidents.sqlite`).
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        SQLiteIncidentStore.defaultPath(environment: environment)
    }

    /// Whether `location` names a server database rather than a file.
    public static func isServer(_ location: String) -> Bool { PostgresLocation.isURL(location) }

    /// Opens (and creates or migrates, unless `readOnly`) the store at `location`.
    @available(*, noasync, message: "blocks its thread: use it on a store thread (StoreThreads.run, store.perform) in async code")
    public static func open(_ location: String, readOnly: Bool = false) throws -> any IncidentStore {
        if PostgresLocation.isURL(location) { return try PostGISIncidentStore(url: location, readOnly: readOnly) }
        return try SQLiteIncidentStore(path: location, readOnly: readOnly)
    }

    /// `open` on a store thread: opening connects (PostgreSQL) or migrates (a file) and blocks.
    public static func open(_ location: String, readOnly: Bool = false) async throws -> any IncidentStore {
        try await StoreThreads.run { try open(location, readOnly: readOnly) }
    }
}
