import Foundation
import Testing
@testable import TrafficGeoQuery

@Suite("Batch query points read from CSV")
struct QueryLocationsTests {
    /// Each way a queries file can be wrong is its own kind, with the file and the line to blame;
    /// the kinds a user must fix in the file are told from those where the file is not there.
    @Test func aBadFileIsAKindWithItsFileAndLine() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(String, QueryLocations.ReadError.Code, Int?)] = [
            ("qid,lat,lon\na,50.9,6.9\nb,95,6.9\n", .badRow, 3),
            ("qid,lat,lon\na,50.9,6.9\n\nb,51,7\na,52,8\n", .duplicateQID, 5),
            ("qid,lat,lon\na,50.9\n", .badRow, 2),
            ("name,x,y\na,50.9,6.9\n", .missingColumns, nil),
            ("", .missingColumns, nil),
        ]
        for (index, (text, code, line)) in cases.enumerated() {
            let file = try TestSupport.write(text, name: "q\(index).csv", in: folder)
            let error = #expect(throws: QueryLocations.ReadError.self) { try QueryLocations.read(path: file.path) }
            #expect(error?.code == code && error?.line == line && error?.path == file.path && error?.isUnreadable == false,
                    "\(index): \(String(describing: error))")
        }
        let missing = #expect(throws: QueryLocations.ReadError.self) { try QueryLocations.read(path: folder.appendingPathComponent("none.csv").path) }
        #expect(missing?.code == .notFound && missing?.isUnreadable == true)
        let isFolder = #expect(throws: QueryLocations.ReadError.self) { try QueryLocations.read(path: folder.path) }
        #expect(isFolder?.code == .unreadable && isFolder?.isUnreadable == true)
        let good = try TestSupport.write("ID,Latitude,Longitude,note\nk1,50.94,6.96,x\n\n\"k,2\",51.3,7.5,y\n", name: "good.csv", in: folder)
        #expect(try QueryLocations.read(path: good.path).map(\.qid) == ["k1", "k,2"])
    }
}
