import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// The raw fields of one feed entry, as text, before they are checked and turned into an `Incident`.
///
/// Every reader fills one of these per entry and calls `makeIncident`, so that the rules of
/// the feed rules (docs/architecture.md: default title, whitespace, weblink coordinates, dates) live in one place.
struct EntryFields {
    var id: String?
    var title: String?
    var summary: String?
    var weblink: String?
    var iconURL: String?
    var updated: String?
    var expires: String?
    var road: String?
    var category: String?
    var latitude: String?
    var longitude: String?
    /// Why the position the entry gives cannot be kept (it came in another CRS and did not
    /// convert); the entry is kept without it, like one whose latitude is out of range.
    var positionProblem: String?
    /// GeoRSS `georss:point`: "lat lon".
    var point: String?
    var segment: [Coordinate]?
    /// A category the format itself implies (the Autobahn `roadworks` service, say).
    var impliedCategory: IncidentCategory?
    /// Used only when neither the feed nor the words say what happened (a traffic-flow code, say).
    var fallbackCategory: IncidentCategory?
    var properties: [String: String] = [:]

    enum Failure: Error {
        case invalid(String)

        var reason: String {
            switch self { case let .invalid(reason): reason }
        }
    }

    /// Builds the incident, or says why the entry cannot be kept.
    func makeIncident(source: String, index: Int) throws(Failure) -> Incident {
        // "unknown", "undefined", "N/A" in a feed's field are no title or text (PlaceholderText).
        let title = PlaceholderText.meaningful(self.title?.nonEmptyNormalized) ?? Incident.unknownTitle
        let summary = PlaceholderText.meaningful(self.summary?.nonEmptyNormalized)
        let weblink = self.weblink?.trimmed.nilIfEmpty
        let updated = try Self.date(self.updated, "updated")
        let expires = try Self.date(self.expires, "expires")
        var position: Coordinate?, positionSource: PositionSource?
        var properties = self.properties
        do {
            (position, positionSource) = try located(weblink: weblink)
        } catch {
            // A position that cannot be (latitude 95, NaN, "fünfzig", one of the two missing) is
            // dropped, not the message: its words still say where, and the reason is kept.
            properties[Incident.positionProblemProperty] = error.reason
        }
        // (0, 0) is how real feeds (the Autobahn API among them) say "no position": an incident
        // there would sit in the Gulf of Guinea. Such an entry is geocoded from its words instead.
        if let p = position, p.isNullIsland { (position, positionSource) = (nil, nil) }
        var segment: [Coordinate]?
        if let line = self.segment?.filter({ !$0.isNullIsland }), line.count >= 2 {
            segment = line
            if position == nil {
                position = line[0]
                positionSource = .feed
            }
        }
        // The roads the feed's field names ("Merritt Parkway/CT 15", "US 1&9"): the first is the
        // road, the others are kept as the incident's other roads, so `--road` finds it by any.
        let (fieldRoad, otherRoads) = Incident.roadAndOthers(road.map { RoadReference.roads(inFields: [$0]) } ?? [])
        if let otherRoads { properties[Incident.otherRoadsProperty] = otherRoads }
        // Built in one piece at the end: filling in a `var incident` field by field made the
        // compiler copy the whole incident (every string retained and released) twice an entry.
        return Incident(
            source: source,
            id: id?.trimmed.nilIfEmpty ?? weblink ?? syntheticID(title: title, summary: summary),
            title: title, summary: summary, weblink: weblink, iconURL: iconURL?.trimmed.nilIfEmpty,
            updated: updated, expires: expires,
            // The road from the feed's field, else the title, else the text ("A1: km 441.67 --> …"),
            // as the message parser reads it: the same message names the same road in every format.
            road: fieldRoad ?? RoadReference.first(in: title) ?? summary.flatMap { RoadReference.first(in: $0) },
            category: category.flatMap { IncidentCategory(loose: $0) ?? CategoryClassifier.classify($0) }
                ?? impliedCategory ?? CategoryClassifier.classify(title, summary) ?? fallbackCategory,
            position: position, segment: segment, positionSource: positionSource, properties: properties)
    }

    /// A date field read, nil when absent or blank.
    private static func date(_ text: String?, _ field: String) throws(Failure) -> Date? {
        guard let text = text?.trimmed.nilIfEmpty else { return nil }
        guard let date = TimestampParser.parseDateField(text) else { throw .invalid("\(field): unreadable date '\(text.prefix(40))'") }
        return date
    }

    /// The position the entry gives, first of: latitude and longitude fields, a GeoRSS point,
    /// the weblink's query.
    private func located(weblink: String?) throws(Failure) -> (Coordinate?, PositionSource?) {
        do {
            if let positionProblem { throw Failure.invalid(positionProblem) }
            if let latitude = latitude?.nilIfBlank, let longitude = longitude?.nilIfBlank {
                if Self.looksSwapped(latitude, longitude) {
                    throw Failure.invalid("latitude \(latitude.prefix(20)) is out of range, and longitude \(longitude.prefix(20)) would be a valid latitude: are latitude and longitude swapped?")
                }
                return (try Self.coordinate(latitude, longitude), .feed)
            } else if (latitude?.nilIfBlank == nil) != (longitude?.nilIfBlank == nil) {
                throw Failure.invalid("has a latitude or a longitude but not both")
            } else if let point = point?.nilIfBlank {
                let parts = point.split(whereSeparator: { $0 == " " || $0 == "," || $0.isNewline || $0 == "\t" })
                guard parts.count == 2 else { throw Failure.invalid("georss:point '\(point.prefix(40))' is not 'lat lon'") }
                return (try Self.coordinate(String(parts[0]), String(parts[1])), .feed)
            } else if let weblink, let fromLink = try Self.weblinkCoordinate(weblink) {
                return (fromLink, .weblink)
            }
            return (nil, nil)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .invalid("\(error)")   // a CoordinateError, in its own words
        }
    }

    /// Entries without an id get one from their content, so that re-reading the feed matches them.
    private func syntheticID(title: String, summary: String?) -> String {
        var hash = StableHash()
        hash.combine(title)
        hash.combine(summary)
        hash.combine(updated)
        return "urn:trafficgeo:\(hash.hex)"
    }

    /// The latitude is outside ±90° but inside ±180°, and the longitude would be a valid latitude:
    /// the only reading that makes a coordinate is the swapped one. Reported, not silently fixed
    /// (a typo such as 91 for 51 looks the same).
    static func looksSwapped(_ latitude: String, _ longitude: String) -> Bool {
        guard let lat = DecimalText.double(latitude.trimmed), let lon = DecimalText.double(longitude.trimmed) else { return false }
        return abs(lat) > 90 && abs(lat) <= 180 && abs(lon) <= 90
    }

    static func coordinate(_ latitude: String, _ longitude: String) throws(CoordinateError) -> Coordinate {
        try Coordinate(parsingLatitude: latitude, longitude: longitude)
    }

    /// `lat=`/`lon=` query items of a weblink (`lng`, `long`, `latitude`, `longitude` too; any
    /// case; the first of each counts).
    static func weblinkCoordinate(_ link: String) throws(CoordinateError) -> Coordinate? {
        // The query by hand over the bytes: URLComponents was a tenth of the time of reading a
        // feed entry, and splitting by Character a fifth.
        var link = link
        let found = link.withUTF8 { bytes -> WeblinkValues in
            guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return .none }
            let end = bytes[(question + 1)...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
            var latitude: Range<Int>?, longitude: Range<Int>?
            var start = question + 1
            while start < end {
                var stop = start
                while stop < end, bytes[stop] != UInt8(ascii: "&"), bytes[stop] != UInt8(ascii: ";") { stop += 1 }
                if let eq = bytes[start..<stop].firstIndex(of: UInt8(ascii: "=")), eq - start <= 9 {
                    let key = UnsafeBufferPointer(rebasing: bytes[start..<eq])
                    if latitude == nil, latitudeKeys.contains(where: { asciiCaseInsensitiveEqual(key, $0) }) {
                        latitude = (eq + 1)..<stop
                    } else if longitude == nil, longitudeKeys.contains(where: { asciiCaseInsensitiveEqual(key, $0) }) {
                        longitude = (eq + 1)..<stop
                    }
                }
                start = stop + 1
            }
            guard let latitude, let longitude else { return .none }
            // Plain decimals (nearly every link) straight from the bytes; anything else (percent
            // escapes, exponents, spaces) as text through `coordinate`, which reads the same
            // decimals the same way.
            if let lat = DecimalText.plainDecimal(UnsafeBufferPointer(rebasing: bytes[latitude])),
               let lon = DecimalText.plainDecimal(UnsafeBufferPointer(rebasing: bytes[longitude])) {
                return .numbers(lat, lon)
            }
            return .texts(String(decoding: UnsafeBufferPointer(rebasing: bytes[latitude]), as: UTF8.self),
                          String(decoding: UnsafeBufferPointer(rebasing: bytes[longitude]), as: UTF8.self))
        }
        func decoded(_ value: String) -> String {
            value.utf8.contains(UInt8(ascii: "%")) ? value.removingPercentEncoding ?? value : value
        }
        switch found {
        case .none: return nil
        case let .numbers(latitude, longitude): return try Coordinate(validatingLatitude: latitude, longitude: longitude)
        case let .texts(latitude, longitude): return try coordinate(decoded(latitude), decoded(longitude))
        }
    }

    /// The coordinate values a weblink's query holds.
    private enum WeblinkValues {
        case none
        case numbers(Double, Double)
        case texts(String, String)
    }

    private static let latitudeKeys: [StaticString] = ["lat", "latitude"]
    private static let longitudeKeys: [StaticString] = ["lon", "lng", "long", "longitude"]

    /// `key` equals the lower-case ASCII `name` in any case.
    private static func asciiCaseInsensitiveEqual(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        let name = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for i in 0..<key.count {
            let byte = key[i]
            if (0x41...0x5A).contains(byte) ? byte | 0x20 != name[i] : byte != name[i] { return false }
        }
        return true
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
    /// `nil` when the string is only whitespace. Scans scalars (no trimmed copy): ingest calls it
    /// for every field of every entry.
    var nilIfBlank: String? {
        unicodeScalars.contains { !String.isTrimmable($0) } ? self : nil
    }
}
