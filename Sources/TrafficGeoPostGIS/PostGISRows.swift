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
        i.last_changed, i.ended, i.content_hash
        """
    /// How many columns `selection` has.
    static let selectionCount = 24

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
        return StoredIncident(storeID: try value(0) ?? 0, incident: incident,
                              firstSeen: try date(20) ?? Date(timeIntervalSince1970: 0),
                              lastChanged: try date(21) ?? Date(timeIntervalSince1970: 0),
                              ended: try date(22))
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

    /// The text word search looks in, folded both ways (`IncidentFilter.words`).
    /// The plain folding is nil where it equals the other (text without umlauts): fewer bytes a row.
    static func searchText(_ i: Incident) -> (folded: String, plain: String?) {
        let text = i.title + " " + (i.summary ?? "") + " " + (i.road ?? "")
        let folded = TextFolding.fold(text), plain = TextFolding.foldPlain(text)
        return (folded, plain == folded ? nil : plain)
    }

    /// A batch of whole rows, column by column, written by one `INSERT … SELECT … FROM (SELECT
    /// unnest(…), …)` (new incidents) or `UPDATE … FROM (SELECT unnest(…), …)` (changed ones).
    struct Batch {
        var id = ColumnArray<Int64>(), sourceID = ColumnArray<Int64>(), externalID = ColumnArray<String>()
        var title = ColumnArray<String>(), summary = ColumnArray<String>(), weblink = ColumnArray<String>(), iconURL = ColumnArray<String>()
        var updated = ColumnArray<Double>(), expires = ColumnArray<Double>(), road = ColumnArray<String>(), category = ColumnArray<String>()
        var latitude = ColumnArray<Double>(), longitude = ColumnArray<Double>(), segment = ColumnArray<ByteBuffer>()
        var positionSource = ColumnArray<Int16>(), geocoder = ColumnArray<String>(), geocodeQuery = ColumnArray<String>()
        var geocodePrecision = ColumnArray<String>(), geocodeConfidence = ColumnArray<Double>(), properties = ColumnArray<String>()
        var contentHash = ColumnArray<Int64>(), firstSeen = ColumnArray<Double>(), lastChanged = ColumnArray<Double>()
        var searchFolded = ColumnArray<String>(), searchPlain = ColumnArray<String>()
        private(set) var count = 0

        mutating func append(storeID: Int64, sourceID source: Int64, incident original: Incident, firstSeen first: Double, lastChanged last: Double) {
            // The hash of the incident as read, so that reading it again finds it unchanged.
            contentHash.append(PostGISRows.contentHash(original))
            let i = PostgresText.storable(original)
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
            searchFolded.append(search.folded)
            searchPlain.append(search.plain)
            count += 1
        }

        /// The columns as `unnest(…) AS u(…)`, in this order.
        static let columns = ["id", "source_id", "external_id", "title", "summary", "weblink", "icon_url", "updated", "expires", "road",
                              "category", "latitude", "longitude", "segment", "position_source", "geocoder", "geocode_query",
                              "geocode_precision", "geocode_confidence", "properties", "content_hash", "first_seen", "last_changed",
                              "search_folded", "search_plain"]
        private static let types = ["bigint", "bigint", "text", "text", "text", "text", "text", "float8", "float8", "text",
                                    "text", "float8", "float8", "bytea", "smallint", "text", "text",
                                    "text", "float8", "text", "bigint", "float8", "float8", "text", "text"]
        /// `(SELECT unnest($1::bigint[]) AS id, …) AS u`: the arrays zipped into rows. In the select
        /// list, not as `FROM unnest($1, $2, …)`, which materialises every array first: a third
        /// less of the server's time for an insert (measured on 200,000 rows: 0.74 s against 1.07 s).
        static let unnest = "(SELECT " + zip(columns, types).enumerated().map { "unnest($\($0.offset + 1)::\($0.element.1)[]) AS \($0.element.0)" }
            .joined(separator: ", ") + ") AS u"
        /// What a column of `u` becomes in the table.
        static func value(_ column: String) -> String {
            switch column {
            case "segment": "ST_GeogFromWKB(u.segment)"
            case "properties": "u.properties::jsonb"
            default: "u." + column
            }
        }

        var bindings: PostgresBindings {
            var b = PostgresBindings(capacity: 25)
            b.append(id); b.append(sourceID); b.append(externalID); b.append(title); b.append(summary); b.append(weblink)
            b.append(iconURL); b.append(updated); b.append(expires); b.append(road); b.append(category); b.append(latitude)
            b.append(longitude); b.append(segment); b.append(positionSource); b.append(geocoder); b.append(geocodeQuery)
            b.append(geocodePrecision); b.append(geocodeConfidence); b.append(properties); b.append(contentHash)
            b.append(firstSeen); b.append(lastChanged); b.append(searchFolded); b.append(searchPlain)
            return b
        }

        /// New rows: every column, and the position made from the coordinates.
        static let insertSQL = "INSERT INTO incidents (" + columns.joined(separator: ", ") + ", position) SELECT "
            + columns.map(value).joined(separator: ", ") + ", " + PostGISSchema.positionFromCoordinates + " FROM " + unnest

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
