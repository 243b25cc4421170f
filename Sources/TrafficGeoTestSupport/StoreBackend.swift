import Foundation
import TrafficGeoPostGIS
import TrafficGeoSQLite
import TrafficGeoStore

/// The PostgreSQL server of the tests and benchmarks: `$TRAFFICGEO_TEST_POSTGRES`, a URL of a
/// private cluster that has a `trafficgeo_template` database with PostGIS
/// (`scripts/postgres-test-cluster start`, which `.ci/run` runs). Each user gets a database of
/// its own, dropped at the end.
public enum PostgresTestServer {
    public static let url: String? = ProcessInfo.processInfo.environment["TRAFFICGEO_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    /// Why a test that needs the server is skipped without one.
    public static let skipReasonText = "no PostgreSQL for the tests: set TRAFFICGEO_TEST_POSTGRES (scripts/postgres-test-cluster start prints it)"

    /// A new database made from the template; its URL.
    public static func makeDatabase() throws -> String {
        guard let url else { throw StoreError.cannotOpen("postgresql", reason: "TRAFFICGEO_TEST_POSTGRES is not set") }
        let name = "tg_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try PostgresAdministration.createDatabase(String(name), template: "trafficgeo_template", on: url)
        return try PostgresAdministration.url(url, database: String(name))
    }

    public static func dropDatabase(_ databaseURL: String) {
        guard let url, let name = try? PostgresLocation(url: databaseURL).database else { return }
        try? PostgresAdministration.dropDatabase(name, on: url)
    }
}

/// Which store a contract test runs on: the SQLite file or PostGIS.
public enum StoreBackend: String, Sendable, CaseIterable {
    case sqlite, postgis

    /// A new empty store, and how to clean up after it.
    public func makeStore() throws -> (store: any IncidentStore, location: String, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let folder = TestFolders.temporaryDirectory()
            let path = folder.appendingPathComponent("store.sqlite").path
            return (try SQLiteIncidentStore(path: path), path, { try? FileManager.default.removeItem(at: folder) })
        case .postgis:
            let url = try PostgresTestServer.makeDatabase()
            return (try PostGISIncidentStore(url: url), url, { PostgresTestServer.dropDatabase(url) })
        }
    }
}

public enum TestFolders {
    /// A new empty folder under the system's temporary directory.
    public static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trafficgeo-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
