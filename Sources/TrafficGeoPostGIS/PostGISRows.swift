import Foundation
import NIOCore
import PostgresNIO
import TrafficGeoModel
import TrafficGeoStore
import TrafficGeoSupport

/// The incidents table's columns as the PostGIS store reads and writes them, defined once:
/// `selection` (what a reading query selects, decoded by `decode`) and `NewRows` (the columns of
/// a batch written with one statement).
enum PostGISRows {
    /// What a query selects for a stored incident, table aliased `i`. Times are the stored
    /// seconds; the segment comes back as WKB (exact doubles), the properties as JSON text.
    static let selection = """
        i.id, (SELECT name FROM sources WHERE id = i.source_id), i.external_id, i.title, i.summary, i.weblink, i.icon_url, \
        i.updated, i.expires, i.road, i.category, i.latitude, i.longitude, ST_AsBinary(i.segment), i.position_source, \
        i.geocoder, i.geocode_query, i.geocode_precision, i.geocode_confidence, i.properties::text, i.first_seen, \
        i.last_changed, i.ended, i.content_hash, i.role, i.event_id, i.reports, (\(IncidentFilter.listedAtSQL))
        """
    /// How many columns `selection` has.
    static let selectionCount = 28

    /// The stored incident in `row`, whose `selection` columns start at column `c`.
    static func decode(_ row: PostgresRow, startingAt c: Int = 0) throws -> StoredIncident {
        try decode(PostgresRandomAccessRow(row), startingAt: c)
    }

    static func decode(_ row: PostgresRandomAccessRow, startingAt c: Int = 0) throws -> StoredIncident {
        func value<T: PostgresDecodable>(_ k: Int, _: T.Type = T.self) throws -> T? where T._DecodableType == T { try row[c + k].decode(T?.self) }
        func date(_ k: Int) throws -> Date? { try value(k, Double.self).map(Date.init(timeIntervalSince1970:)) }
        var incident = Incident(source: try value(1) ?? "", id: try value(2) ?? "", title: try value(3) ?? "")
        incident.summary = try value(4)
        incident.weblink = try value(5)
        incident.iconURL = try value(6)
        incident.updated = try date(7)
        incident.expires = try date(8)
        incident.road = try value(9)
        incident.category = try value(10, String.self).flatMap(IncidentCategory.init(rawValue:))
        if let lat = try value(11, Double.self), let lon = try value(12, Double.self) {
            incident.position = Coordinate(latitude: lat, longitude: lon)
        }
        incident.segment = try value(13, ByteBuffer.self).flatMap(SegmentWKB.decode)
        if let kind = try value(14, Int.self).flatMap { PositionSource.Kind(storeCode: Int64($0)) } {
            incident.positionSource = PositionSource(kind: kind, geocoder: try value(15), query: try value(16),
                                                     precision: try value(17, String.self).flatMap(GeocodePrecision.init(rawValue:)),
                                                     confidence: try value(18))
        }
        incident.properties = try value(19, String.self).map(PropertiesJSON.parse) ?? [:]
        let role = try value(24, Int.self).flatMap { EventRole(rawValue: $0) } ?? .report
        var members: [ReportReference] = []
        if role == .event {
            // An event's row is filed under the events' own source; it shows its first report's.
            members = try value(26, String.self).map(ReportReference.parse) ?? []
            incident.source = members.first?.source ?? ""
            incident.id = members.first?.id ?? ""
        }
        return StoredIncident(storeID: try value(0) ?? 0, incident: incident,
                              firstSeen: try date(20) ?? Date(timeIntervalSince1970: 0),
                              lastChanged: try date(21) ?? Date(timeIntervalSince1970: 0),
                              ended: try date(22), role: role, memberOf: role == .member ? try value(25) : nil, memberReports: members,
                              listedAt: try date(27))
    }

    /// The stored content hash in a `selection` row.
    static func contentHash(_ row: PostgresRandomAccessRow, startingAt c: Int = 0) throws -> Int64 {
        try row[c + 23].decode(Int64.self)
    }

    /// The change hash of what the store keeps of an incident (its identity aside): equal
    /// hashes, nothing to update.
    static func contentHash(_ i: Incident) -> Int64 {
        var hash = StableHash()
        // Numbers as their bytes, each with a tag byte (nil has its own): no text made per number.
        func number(_ x: Double?) {
            if let x {
                withUnsafeBytes(of: x.bitPattern.littleEndian) { hash.combine(raw: $0, tag: 0xfd) }
            } else {
                hash.combine(raw: UnsafeRawBufferPointer(start: nil, count: 0), tag: 0xfe)
            }
        }
        hash.combine(i.title)
        hash.combine(i.summary)
        hash.combine(i.weblink)
        hash.combine(i.iconURL)
        number(i.updated?.timeIntervalSince1970)
        number(i.expires?.timeIntervalSince1970)
        hash.combine(i.road)
        hash.combine(i.category?.rawValue)
        number(i.position?.latitude)
        number(i.position?.longitude)
        number(i.segment.map { Double($0.count) })
        for p in i.segment ?? [] { number(p.longitude); number(p.latitude) }
        number(i.positionSource.map { Double($0.kind.storeCode) })
        hash.combine(i.positionSource?.geocoder)
        hash.combine(i.positionSource?.query)
        hash.combine(i.positionSource?.precision?.rawValue)
        number(i.positionSource?.confidence)
        hash.combine(i.properties.isEmpty ? nil : PropertiesJSON.text(i.properties))
        return hash.int64
    }

    /// The text word search looks in (title, summary and road), folded (`IncidentFilter.words`),
    /// as UTF-8. The plain form is nil: word search loosens the folded column in SQL
    /// (`TextFolding.loosenSQL`), so `search_plain` is no longer read, and no longer filled.
    static func searchText(_ i: Incident) -> (folded: [UInt8], plain: [UInt8]?) {
        var out: [UInt8] = []
        out.reserveCapacity(i.title.utf8.count + (i.summary?.utf8.count ?? 0) + (i.road?.utf8.count ?? 0) + 2)
        TextFolding.append(i.title, to: &out)
        if let summary = i.summary { TextFolding.append(summary, to: &out) }
        if let road = i.road { TextFolding.append(road, to: &out) }
        return (out, nil)
    }

    /// A batch of whole rows, column by column, written by one `INSERT … SELECT … FROM (SELECT
    /// unnest(…), …)` (new incidents) or `UPDATE … FROM (SELECT unnest(…), …)` (changed ones).
    struct Batch {
        var id, sourceID, contentHash: ColumnArray<Int64>
        var externalID, title, summary, weblink, iconURL, road, category: ColumnArray<String>
        var updated, expires, latitude, longitude, geocodeConfidence, firstSeen, lastChanged: ColumnArray<Double>
        var segment: ColumnArray<ByteBuffer>
        var positionSource: ColumnArray<Int16>
        var geocoder, geocodeQuery, geocodePrecision, properties, searchFolded, searchPlain: ColumnArray<String>
        /// Each measure's number (`IncidentMeasure.allCases` order), read from the details.
        var measures: [ColumnArray<Double>]
        private(set) var count = 0

        /// A batch with room for `rows` rows (a guess for the text columns), so that its columns
        /// are not copied as they grow.
        init(rows: Int = 0) {
            (id, sourceID, contentHash) = (.init(rows: rows), .init(rows: rows), .init(rows: rows))
            (updated, expires, latitude, longitude) = (.init(rows: rows), .init(rows: rows), .init(rows: rows), .init(rows: rows))
            (geocodeConfidence, firstSeen, lastChanged) = (.init(rows: rows), .init(rows: rows), .init(rows: rows))
            (externalID, title, searchFolded) = (.init(rows: rows, bytesEach: 16), .init(rows: rows, bytesEach: 48), .init(rows: rows, bytesEach: 48))
            (summary, weblink, iconURL, road, category) = (.init(rows: rows), .init(rows: rows), .init(rows: rows), .init(rows: rows), .init(rows: rows))
            (geocoder, geocodeQuery, geocodePrecision, properties, searchPlain) = (.init(rows: rows), .init(rows: rows), .init(rows: rows), .init(rows: rows), .init(rows: rows))
            (segment, positionSource) = (.init(rows: rows), .init(rows: rows))
            measures = IncidentMeasure.allCases.map { _ in .init(rows: rows) }
        }

        mutating func append(storeID: Int64, sourceID source: Int64, incident original: Incident, firstSeen first: Double, lastChanged last: Double) {
            // The hash of the incident as read, so that reading it again finds it unchanged.
            contentHash.append(PostGISRows.contentHash(original))
            // Copied only when some text holds NUL (a copy of every row was a twentieth of a load).
            if PostgresText.holdsNUL(original) {
                appendFields(storeID: storeID, sourceID: source, incident: PostgresText.storable(original), firstSeen: first, lastChanged: last)
            } else {
                appendFields(storeID: storeID, sourceID: source, incident: original, firstSeen: first, lastChanged: last)
            }
        }

        /// Every column but the content hash, of an incident whose text PostgreSQL can store.
        private mutating func appendFields(storeID: Int64, sourceID source: Int64, incident i: Incident, firstSeen first: Double, lastChanged last: Double) {
            id.append(storeID)
            sourceID.append(source)
            externalID.append(i.id)
            title.append(i.title)
            summary.append(i.summary)
            weblink.append(i.weblink)
            iconURL.append(i.iconURL)
            updated.append(i.updated?.timeIntervalSince1970)
            expires.append(i.expires?.timeIntervalSince1970)
            road.append(i.road)
            category.append(i.category?.rawValue)
            latitude.append(i.position?.latitude)
            longitude.append(i.position?.longitude)
            segment.append(i.segment.map(SegmentWKB.encode))
            positionSource.append(i.positionSource.map { Int16($0.kind.storeCode) })
            geocoder.append(i.positionSource?.geocoder)
            geocodeQuery.append(i.positionSource?.query)
            geocodePrecision.append(i.positionSource?.precision?.rawValue)
            geocodeConfidence.append(i.positionSource?.confidence)
            properties.append(i.properties.isEmpty ? nil : PropertiesJSON.text(i.properties))
            firstSeen.append(first)
            lastChanged.append(last)
            let search = PostGISRows.searchText(i)
            searchFolded.append(utf8: search.folded)
            if let plain = search.plain { searchPlain.append(utf8: plain) } else { searchPlain.append(nil) }
            for (k, measure) in IncidentMeasure.allCases.enumerated() { measures[k].append(measure.value(of: i)) }
            count += 1
        }

        /// The columns as `unnest(…) AS u(…)`, in this order.
        static let columns = ["id", "source_id", "external_id", "title", "summary", "weblink", "icon_url", "updated", "expires", "road",
                              "category", "latitude", "longitude", "segment", "position_source", "geocoder", "geocode_query",
                              "geocode_precision", "geocode_confidence", "properties", "content_hash", "first_seen", "last_changed",
                              "search_folded", "search_plain"] + IncidentMeasure.allCases.map(\.column)
        private static let types = ["bigint", "bigint", "text", "text", "text", "text", "text", "float8", "float8", "text",
                                    "text", "float8", "float8", "bytea", "smallint", "text", "text",
                                    "text", "float8", "text", "bigint", "float8", "float8", "text", "text"]
            + IncidentMeasure.allCases.map { _ in "float8" }
        /// `(SELECT unnest($1::bigint[]) AS id, …) AS u`: the arrays of these columns zipped into
        /// rows. In the select list, not as `FROM unnest($1, $2, …)`, which materialises every
        /// array first: a third less of the server's time for an insert (measured on 200,000
        /// rows: 0.74 s against 1.07 s).
        private static func unnest(_ columns: [Int]) -> String {
            "(SELECT " + columns.enumerated().map { "unnest($\($0.offset + 1)::\(types[$0.element])[]) AS \(Self.columns[$0.element])" }
                .joined(separator: ", ") + ") AS u"
        }
        static let unnest = unnest(Array(columns.indices))
        /// What a column of `u` becomes in the table.
        static func value(_ column: String) -> String {
            switch column {
            case "segment": "ST_GeogFromWKB(u.segment)"
            case "properties": "u.properties::jsonb"
            default: "u." + column
            }
        }

        /// The columns in the order of `columns`.
        private var boundColumns: [any BoundColumn] {
            [id, sourceID, externalID, title, summary, weblink, iconURL, updated, expires, road, category, latitude, longitude, segment,
             positionSource, geocoder, geocodeQuery, geocodePrecision, geocodeConfidence, properties, contentHash, firstSeen,
             lastChanged, searchFolded, searchPlain] + measures
        }

        /// Every column, for `updateSQL` and `replaceSQL`.
        var bindings: PostgresBindings {
            var b = PostgresBindings(capacity: Self.columns.count)
            for column in boundColumns { column.bind(into: &b) }
            return b
        }

        /// The columns the position is made from: always sent.
        private static let coordinateColumns = Set(["latitude", "longitude"].map { columns.firstIndex(of: $0)! })

        /// New rows: the columns that hold a value in some row of the batch (a column NULL
        /// throughout is left to its default, NULL: many feeds fill half the columns, and each
        /// array costs the server its decoding and unnesting per row), and the position made from
        /// the coordinates.
        var insertQuery: PostgresQuery {
            let all = boundColumns
            let sent = all.indices.filter { !all[$0].allNull || Self.coordinateColumns.contains($0) }
            var b = PostgresBindings(capacity: sent.count)
            for k in sent { all[k].bind(into: &b) }
            let names = sent.map { Self.columns[$0] }
            let sql = "INSERT INTO incidents (" + names.joined(separator: ", ") + ", position) SELECT "
                + names.map(Self.value).joined(separator: ", ") + ", " + PostGISSchema.positionFromCoordinates + " FROM " + Self.unnest(sent)
            return PostgresQuery(unsafeSQL: sql, binds: b)
        }

        /// Every column but the identity and first seen; the position follows the coordinates.
        private static let assignments = columns.filter { !["id", "source_id", "external_id", "first_seen"].contains($0) }
            .map { "\($0) = \(value($0))" }.joined(separator: ", ") + ", position = " + PostGISSchema.positionFromCoordinates

        /// Rows whose fields were replaced in place (a geocoder's position), by id.
        static let replaceSQL = "UPDATE incidents i SET " + assignments + " FROM " + unnest + " WHERE i.id = u.id"

        /// Rows a feed listed again, changed, by id.
        static let updateSQL = "UPDATE incidents i SET " + assignments
            // Listed again: open again. New words without a position: worth asking the geocoder again.
            + ", ended = NULL, geocode_status = CASE WHEN u.latitude IS NULL THEN NULL ELSE i.geocode_status END"
            + ", geocode_error = CASE WHEN u.latitude IS NULL THEN NULL ELSE i.geocode_error END"
            + " FROM " + unnest + " WHERE i.id = u.id"
    }
}

/// PostgreSQL's text cannot hold the NUL character (U+0000), which SQLite and JSON feeds can:
/// it is kept as U+FFFD (the replacement character) instead of failing the whole ingest.
enum PostgresText {
    static func storable(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
    }

    static func storable(_ text: String?) -> String? { text.map(storable) }

    /// Whether any text of the incident holds NUL (what `storable` would change).
    static func holdsNUL(_ i: Incident) -> Bool {
        func nul(_ text: String?) -> Bool {
            guard let utf8 = text?.utf8 else { return false }
            // memchr where the bytes are contiguous (native strings): this test runs on every
            // field of every row a load writes.
            return utf8.withContiguousStorageIfAvailable { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false } ?? utf8.contains(0)
        }
        return nul(i.source) || nul(i.id) || nul(i.title) || nul(i.summary) || nul(i.weblink) || nul(i.iconURL) || nul(i.road)
            || nul(i.positionSource?.geocoder) || nul(i.positionSource?.query)
            || i.properties.contains { nul($0.key) || nul($0.value) }
    }

    static func storable(_ i: Incident) -> Incident {
        var i = i
        i.source = storable(i.source)
        i.id = storable(i.id)
        i.title = storable(i.title)
        i.summary = storable(i.summary)
        i.weblink = storable(i.weblink)
        i.iconURL = storable(i.iconURL)
        i.road = storable(i.road)
        if var source = i.positionSource {
            source.geocoder = storable(source.geocoder)
            source.query = storable(source.query)
            i.positionSource = source
        }
        if i.properties.contains(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }) {
            i.properties = Dictionary(i.properties.map { (storable($0.key), storable($0.value)) }, uniquingKeysWith: { a, _ in a })
        }
        return i
    }
}
