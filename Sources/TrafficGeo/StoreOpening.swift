import Foundation
import TrafficGeoSQLite
import TrafficGeoStore

/// Which store a location names, opened: the one place that picks an `IncidentStore`
/// implementation, so commands and library users never name one. Today every location is an
/// SQLite file; a server database (`postgresql://…`) is the next implementation to go here.
public enum StoreOpening {
    /// The default store: `$TRAFFICGEO_DB`, else `$XDG_DATA_HOME/trafficgeo/incidents.sqlite`
    /// (`~/.local/share/trafficgeo/incidents.sqlite`).
    public static func defaultLocation(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        SQLiteIncidentStore.defaultPath(environment: environment)
    }

    /// Opens (and creates or migrates, unless `readOnly`) the store at `location`.
    public static func open(_ location: String, readOnly: Bool = false) throws -> any IncidentStore {
        try SQLiteIncidentStore(path: location, readOnly: readOnly)
    }
}
