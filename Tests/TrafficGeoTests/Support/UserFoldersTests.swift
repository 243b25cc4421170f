import Foundation
import Testing
import TrafficGeoFeeds
import TrafficGeoSQLite
import TrafficGeoSupport

/// The default database, a watch's state and the Autobahn cache go where the XDG specification
/// says, under `$HOME` when no variable names them: not under the account's home from the
/// password database, which is what Foundation's `NSHomeDirectory()` gives on Linux.
@Suite("Where a user's files go")
struct UserFoldersTests {
    @Test func homeIsTheEnvironmentsHome() {
        let env = ["HOME": "/tmp/someone"]
        #expect(SQLiteIncidentStore.defaultPath(environment: env) == "/tmp/someone/.local/share/trafficgeo/incidents.sqlite")
        #expect(UserFolders.folder(.state, environment: env) == "/tmp/someone/.local/state")
        #expect(AutobahnAPI.defaultCacheDirectory(environment: env).path == "/tmp/someone/.cache/trafficgeo/autobahn")
    }

    @Test func anXDGVariableWins_butNotARelativeOne() {
        #expect(SQLiteIncidentStore.defaultPath(environment: ["HOME": "/h", "XDG_DATA_HOME": "/data"]) == "/data/trafficgeo/incidents.sqlite")
        #expect(UserFolders.folder(.data, environment: ["HOME": "/h", "XDG_DATA_HOME": "data"]) == "/h/.local/share", "relative: ignored, as the specification says")
        #expect(SQLiteIncidentStore.defaultPath(environment: ["TRAFFICGEO_DB": "/x.sqlite", "HOME": "/h"]) == "/x.sqlite")
    }

    @Test func withoutHomeTheAccountsHome() {
        #expect(UserFolders.home(environment: [:]) == NSHomeDirectory())
    }
}
