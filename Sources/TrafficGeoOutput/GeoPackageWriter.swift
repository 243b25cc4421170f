import Foundation
import GRDBSQLite
import TrafficGeoModel
import TrafficGeoPROJ
import TrafficGeoStore
import TrafficGeoSupport

/// `--format gpkg`: an OGC GeoPackage 1.3 (an SQLite file) with a point layer `incidents` and,
/// when any incident has a segment, a line layer `incident_segments`; the annotation properties
/// as columns, each layer with the R-tree spatial index the GeoPackage specification defines
/// (extension `gpkg_rtree_index`), positions in the output CRS. Written to a temporary file in
/// the same folder and renamed into place at the end: a failed export leaves nothing behind.
public final class GeoPackageWriter: ResultWriter {
    private let path: String
    private let temporaryPath: String
    private let crs: OutputCRS
    private var db: OpaquePointer?
    private var insertPoint: OpaquePointer?
    private var insertLine: OpaquePointer?
    private var indexPoint: OpaquePointer?
    private var indexLine: OpaquePointer?
    private var pointExtent = Extent()
    private var lineExtent = Extent()
    private var lines = 0

    static let pointTable = "incidents"
    static let lineTable = "incident_segments"
    static let columns: [(name: String, type: String)] = [
        ("id", "TEXT"), ("title", "TEXT"), ("subtitle", "TEXT"), ("pin_color", "TEXT"), ("road", "TEXT"), ("category", "TEXT"),
        ("updated", "DATETIME"), ("expires", "DATETIME"), ("weblink", "TEXT"), ("source", "TEXT"), ("position_source", "TEXT"),
        ("precision", "TEXT"), ("confidence", "REAL"), ("distance_m", "REAL"), ("bearing_deg", "REAL"),
        ("ended", "DATETIME"), ("state", "TEXT"), ("last_heard", "DATETIME"),
    ] + Annotation.detailColumns.map { ($0.property, "TEXT") } + [("event", "INTEGER"), ("reports", "TEXT")]

    /// GeoPackage's DATETIME: ISO 8601 in UTC with milliseconds, `2025-05-19T05:50:00.000Z`
    /// (requirement 5 of the encoding; GDAL calls anything else "non-conformant content").
    private let dateTimeFormat: ISO8601DateFormatter = {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        format.timeZone = TimeZone(identifier: "UTC")
        return format
    }()

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    struct Extent {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        var isEmpty: Bool { minX > maxX }
        mutating func add(_ x: Double, _ y: Double) {
            minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
    }

    public init(path: String, crs: OutputCRS = .wgs84) {
        self.path = path
        let url = URL(fileURLWithPath: path)
        temporaryPath = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp").path
        self.crs = crs
    }

    deinit { abandon() }

    // MARK: - ResultWriter

    public func begin() throws {
        try? FileManager.default.removeItem(atPath: temporaryPath)
        guard sqlite3_open_v2(temporaryPath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            abandon()
            throw Failure(description: "cannot create the GeoPackage \(path): \(message)")
        }
        let srs = spatialReference
        let columnList = Self.columns.map { "\"\($0.name)\" \($0.type)" }.joined(separator: ", ")
        try execute("""
            PRAGMA application_id = 1196444487;
            PRAGMA user_version = 10300;
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            BEGIN;
            CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
                organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT);
            CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE,
                description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
                min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
                CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
            CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
                srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
                CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name), CONSTRAINT uk_gc_table_name UNIQUE (table_name),
                CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
                CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
            CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL, definition TEXT NOT NULL,
                scope TEXT NOT NULL, CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
            INSERT INTO gpkg_spatial_ref_sys VALUES
                ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
                ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
                ('WGS 84 geodetic', 4326, 'EPSG', 4326, \(Self.literal(Self.wgs84WKT)), 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
            \(srs.id == 4326 ? "" : "INSERT INTO gpkg_spatial_ref_sys VALUES (\(Self.literal(srs.name)), \(srs.id), \(Self.literal(srs.organization)), \(srs.code), \(Self.literal(srs.definition)), \(Self.literal(srs.description)));")
            CREATE TABLE "\(Self.pointTable)" (fid INTEGER PRIMARY KEY AUTOINCREMENT, geom POINT, \(columnList));
            CREATE TABLE "\(Self.lineTable)" (fid INTEGER PRIMARY KEY AUTOINCREMENT, geom LINESTRING, \(columnList));
            CREATE VIRTUAL TABLE "rtree_\(Self.pointTable)_geom" USING rtree(id, minx, maxx, miny, maxy);
            CREATE VIRTUAL TABLE "rtree_\(Self.lineTable)_geom" USING rtree(id, minx, maxx, miny, maxy);
            """)
        let marks = Array(repeating: "?", count: Self.columns.count + 1).joined(separator: ", ")
        let names = Self.columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
        insertPoint = try prepare("INSERT INTO \"\(Self.pointTable)\" (geom, \(names)) VALUES (\(marks))")
        insertLine = try prepare("INSERT INTO \"\(Self.lineTable)\" (geom, \(names)) VALUES (\(marks))")
        indexPoint = try prepare("INSERT INTO \"rtree_\(Self.pointTable)_geom\" VALUES (?, ?, ?, ?, ?)")
        indexLine = try prepare("INSERT INTO \"rtree_\(Self.lineTable)_geom\" VALUES (?, ?, ?, ?, ?)")
    }

    public func write(_ result: QueryResult) throws {
        let incident = result.incident
        var point: [UInt8]?
        // A position the CRS cannot hold gets a NULL geometry (and is counted), not a wrong one.
        if let p = incident.position, let (x, y) = crs.position(p) {
            pointExtent.add(x, y)
            point = Self.geometry(srsID: spatialReference.id, points: [(x, y)], line: false)
            try insert(insertPoint, geometry: point, result)
            try index(indexPoint, minX: x, minY: y, maxX: x, maxY: y)
        } else {
            try insert(insertPoint, geometry: nil, result)
        }
        if let segment = incident.segment, segment.count >= 2 {
            var extent = Extent()
            var points: [(Double, Double)] = []
            for c in segment {
                guard let (x, y) = crs.position(c) else { return }
                extent.add(x, y)
                points.append((x, y))
            }
            lineExtent.add(extent.minX, extent.minY)
            lineExtent.add(extent.maxX, extent.maxY)
            try insert(insertLine, geometry: Self.geometry(srsID: spatialReference.id, points: points, line: true, extent: extent), result)
            try index(indexLine, minX: extent.minX, minY: extent.minY, maxX: extent.maxX, maxY: extent.maxY)
            lines += 1
        }
    }

    public func end() throws {
        finalizeStatements()
        let srs = spatialReference.id
        var layers = [(Self.pointTable, "POINT", pointExtent, "Road-traffic incidents (points)")]
        if lines > 0 {
            layers.append((Self.lineTable, "LINESTRING", lineExtent, "Road-traffic incidents along their road (segments)"))
        } else {
            try execute("DROP TABLE \"\(Self.lineTable)\"; DROP TABLE \"rtree_\(Self.lineTable)_geom\";")
        }
        var sql = ""
        for (table, type, extent, description) in layers {
            let box = extent.isEmpty ? "NULL, NULL, NULL, NULL" : "\(extent.minX), \(extent.minY), \(extent.maxX), \(extent.maxY)"
            sql += """
                INSERT INTO gpkg_contents (table_name, data_type, identifier, description, min_x, min_y, max_x, max_y, srs_id)
                    VALUES ('\(table)', 'features', '\(table)', \(Self.literal(description)), \(box), \(srs));
                INSERT INTO gpkg_geometry_columns VALUES ('\(table)', 'geom', '\(type)', \(srs), 0, 0);
                \(Self.rtreeIndex(table: table))
                """
        }
        try execute(sql + "COMMIT;")
        guard sqlite3_close(db) == SQLITE_OK else { throw Failure(description: "cannot finish the GeoPackage \(path)") }
        db = nil
        do {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
        } catch {
            abandon()
            throw Failure(description: "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Closes and deletes the unfinished file.
    public func abandon() {
        if db != nil {
            finalizeStatements()
            sqlite3_close(db)
            db = nil
        }
        try? FileManager.default.removeItem(atPath: temporaryPath)
    }

    private func finalizeStatements() {
        for statement in [insertPoint, insertLine, indexPoint, indexLine] { sqlite3_finalize(statement) }
        (insertPoint, insertLine, indexPoint, indexLine) = (nil, nil, nil, nil)
    }

    // MARK: - Rows

    /// The row just inserted into the layer's R-tree (SQLite keeps its boxes in 32-bit floats,
    /// rounded outwards).
    private func index(_ statement: OpaquePointer?, minX: Double, minY: Double, maxX: Double, maxY: Double) throws {
        sqlite3_reset(statement)
        sqlite3_bind_int64(statement, 1, sqlite3_last_insert_rowid(db))
        for (i, v) in [minX, maxX, minY, maxY].enumerated() { sqlite3_bind_double(statement, Int32(i + 2), v) }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw Failure(description: "cannot index the GeoPackage \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func insert(_ statement: OpaquePointer?, geometry: [UInt8]?, _ result: QueryResult) throws {
        let a = Annotation(result)
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        if let geometry {
            _ = geometry.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), transient) }
        }
        let i = result.incident
        let texts: [String?] = [a.id, a.title, a.subtitle, a.pinColor.rawValue, a.road, a.category,
                                i.updated.map(dateTimeFormat.string), i.expires.map(dateTimeFormat.string), a.weblink,
                                a.source, a.positionSource, a.precision]
        let numbers = [a.confidence, a.distanceMeters, a.bearingDegrees]
        let heard = a.lastHeard == nil ? nil : dateTimeFormat.string(from: IncidentFilter.lastHeard(result.stored))
        let lastTexts = [result.stored.ended.map(dateTimeFormat.string), a.state.rawValue, heard] + Annotation.detailColumns.map { a.details[$0.property] }
        for (k, text) in (texts + numbers.map { _ in nil } + lastTexts).enumerated() {
            if let text { sqlite3_bind_text(statement, Int32(k + 2), text, -1, transient) }
        }
        for (k, number) in numbers.enumerated() {
            if let number { sqlite3_bind_double(statement, Int32(texts.count + 2 + k), number) }
        }
        // The event (a number) and its reports (JSON text), last.
        let eventColumn = Int32(texts.count + numbers.count + lastTexts.count + 2)
        sqlite3_bind_int64(statement, eventColumn, a.event)
        if !a.reports.isEmpty { sqlite3_bind_text(statement, eventColumn + 1, a.reportsJSON, -1, transient) }
        guard sqlite3_step(statement) == SQLITE_DONE else {
            throw Failure(description: "cannot write to the GeoPackage \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    // MARK: - GeoPackage pieces

    private struct SpatialReference {
        var id: Int
        var name: String
        var organization: String
        var code: Int
        var definition: String
        var description: String
    }

    /// The output CRS's row: its authority code as the id (EPSG's codes are what GIS tools look
    /// for), or 100000 with organisation NONE for a CRS no authority names.
    private lazy var spatialReference: SpatialReference = {
        guard let d = crs.description else {
            return SpatialReference(id: 4326, name: "WGS 84 geodetic", organization: "EPSG", code: 4326, definition: Self.wgs84WKT, description: "")
        }
        if let (authority, code) = d.authority, let number = Int(code), number > 0 {
            return SpatialReference(id: number, name: d.name, organization: authority, code: number, definition: d.wkt1 ?? "undefined", description: d.definition)
        }
        return SpatialReference(id: 100_000, name: d.name, organization: "NONE", code: 100_000, definition: d.wkt1 ?? "undefined", description: d.definition)
    }()

    /// GeoPackage binary: the "GP" header (version 0, little-endian, an envelope for lines,
    /// none for points), the SRS id, then the geometry as little-endian WKB.
    static func geometry(srsID: Int, points: [(Double, Double)], line: Bool, extent: Extent? = nil) -> [UInt8] {
        var bytes: [UInt8] = [0x47, 0x50, 0]
        bytes.append(extent != nil ? 0b0000_0011 : 0b0000_0001)
        func int32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        func double(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        int32(UInt32(bitPattern: Int32(truncatingIfNeeded: srsID)))
        if let e = extent { double(e.minX); double(e.maxX); double(e.minY); double(e.maxY) }
        bytes.append(1)
        int32(line ? 2 : 1)
        if line { int32(UInt32(points.count)) }
        for (x, y) in points { double(x); double(y) }
        return bytes
    }

    /// The rest of the spatial index as the GeoPackage specification (extension F.3) defines it
    /// (the R-tree itself is filled as the rows are written): its extension row and triggers for whoever edits the file later (they call
    /// ST_MinX and its kin, which GeoPackage readers such as GDAL provide).
    static func rtreeIndex(table t: String) -> String {
        let r = "rtree_\(t)_geom"
        let values = "NEW.fid, ST_MinX(NEW.geom), ST_MaxX(NEW.geom), ST_MinY(NEW.geom), ST_MaxY(NEW.geom)"
        return """
            INSERT INTO gpkg_extensions VALUES ('\(t)', 'geom', 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only');
            CREATE TRIGGER "\(r)_insert" AFTER INSERT ON "\(t)" WHEN (new.geom NOT NULL AND NOT ST_IsEmpty(NEW.geom))
            BEGIN INSERT OR REPLACE INTO "\(r)" VALUES (\(values)); END;
            CREATE TRIGGER "\(r)_update1" AFTER UPDATE OF geom ON "\(t)" WHEN OLD.fid = NEW.fid AND (NEW.geom NOTNULL AND NOT ST_IsEmpty(NEW.geom))
            BEGIN INSERT OR REPLACE INTO "\(r)" VALUES (\(values)); END;
            CREATE TRIGGER "\(r)_update2" AFTER UPDATE OF geom ON "\(t)" WHEN OLD.fid = NEW.fid AND (NEW.geom ISNULL OR ST_IsEmpty(NEW.geom))
            BEGIN DELETE FROM "\(r)" WHERE id = OLD.fid; END;
            CREATE TRIGGER "\(r)_update3" AFTER UPDATE ON "\(t)" WHEN OLD.fid != NEW.fid AND (NEW.geom NOTNULL AND NOT ST_IsEmpty(NEW.geom))
            BEGIN DELETE FROM "\(r)" WHERE id = OLD.fid; INSERT OR REPLACE INTO "\(r)" VALUES (\(values)); END;
            CREATE TRIGGER "\(r)_update4" AFTER UPDATE ON "\(t)" WHEN OLD.fid != NEW.fid AND (NEW.geom ISNULL OR ST_IsEmpty(NEW.geom))
            BEGIN DELETE FROM "\(r)" WHERE id IN (OLD.fid, NEW.fid); END;
            CREATE TRIGGER "\(r)_delete" AFTER DELETE ON "\(t)" WHEN old.geom NOT NULL
            BEGIN DELETE FROM "\(r)" WHERE id = OLD.fid; END;

            """
    }

    // MARK: - SQLite

    private func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw Failure(description: "cannot write the GeoPackage \(path): \(text)")
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: "cannot write the GeoPackage \(path): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// EPSG:4326 as GDAL writes it into GeoPackages (OGC WKT 1), so that a WGS84 export needs no PROJ.
    static let wgs84WKT = #"GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]"#
}
