import Foundation

/// The raw fields of one feed entry, as text, before they are checked and turned into an `Incident`.
///
/// Every reader fills one of these per entry and calls `makeIncident`, so that the rules of
/// DESIGN.md section 2 (default title, whitespace, weblink coordinates, dates) live in one place.
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
    /// GeoRSS `georss:point`: "lat lon".
    var point: String?
    var segment: [Coordinate]?
    /// A category the format itself implies (the Autobahn `roadworks` service, say).
    var impliedCategory: IncidentCategory?
    /// Used only when neither the feed nor the words say what happened (a traffic-flow code, say).
    var fallbackCategory: IncidentCategory?
    var properties: [String: String] = [:]

    enum Failure: Error { case invalid(String) }

    /// Builds the incident, or says why the entry cannot be kept.
    func makeIncident(source: String, index: Int) -> Result<Incident, Failure> {
        let title = self.title?.nonEmptyNormalized ?? Incident.unknownTitle
        let summary = self.summary?.nonEmptyNormalized
        let weblink = self.weblink?.trimmed.nilIfEmpty
        var incident = Incident(source: source, id: "", title: title, summary: summary, weblink: weblink,
                                iconURL: iconURL?.trimmed.nilIfEmpty)
        incident.properties = properties

        if let text = updated?.trimmed.nilIfEmpty {
            guard let date = TimestampParser.parse(text) else { return .failure(.invalid("updated: unreadable date '\(text.prefix(40))'")) }
            incident.updated = date
        }
        if let text = expires?.trimmed.nilIfEmpty {
            guard let date = TimestampParser.parse(text) else { return .failure(.invalid("expires: unreadable date '\(text.prefix(40))'")) }
            incident.expires = date
        }

        do {
            if let latitude = latitude?.nilIfBlank, let longitude = longitude?.nilIfBlank {
                if Self.looksSwapped(latitude, longitude) {
                    return .failure(.invalid("latitude \(latitude.prefix(20)) is out of range, and longitude \(longitude.prefix(20)) would be a valid latitude: are latitude and longitude swapped?"))
                }
                incident.position = try Self.coordinate(latitude, longitude)
                incident.positionSource = .feed
            } else if (latitude?.nilIfBlank == nil) != (longitude?.nilIfBlank == nil) {
                return .failure(.invalid("has a latitude or a longitude but not both"))
            } else if let point = point?.nilIfBlank {
                let parts = point.split(whereSeparator: { $0 == " " || $0 == "," || $0.isNewline || $0 == "\t" })
                guard parts.count == 2 else { return .failure(.invalid("georss:point '\(point.prefix(40))' is not 'lat lon'")) }
                incident.position = try Self.coordinate(String(parts[0]), String(parts[1]))
                incident.positionSource = .feed
            } else if let weblink, let fromLink = try Self.weblinkCoordinate(weblink) {
                incident.position = fromLink
                incident.positionSource = .weblink
            }
        } catch {
            return .failure(.invalid(error.description))
        }
        if let segment, segment.count >= 2 {
            incident.segment = segment
            if incident.position == nil {
                incident.position = segment[0]
                incident.positionSource = .feed
            }
        }

        incident.road = road.flatMap { RoadReference.first(in: $0) } ?? RoadReference.first(in: title)
        incident.category = category.flatMap { IncidentCategory(loose: $0) ?? CategoryClassifier.classify($0) }
            ?? impliedCategory ?? CategoryClassifier.classify(title, summary) ?? fallbackCategory
        incident.id = id?.trimmed.nilIfEmpty
            ?? weblink ?? syntheticID(title: title, summary: summary)
        return .success(incident)
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
        guard let lat = DecimalText.double(latitude.trimmed) else { throw .unreadable(latitude) }
        guard let lon = DecimalText.double(longitude.trimmed) else { throw .unreadable(longitude) }
        return try Coordinate(validatingLatitude: lat, longitude: lon)
    }

    /// `lat=`/`lon=` query items of a weblink (`lng`, `long`, `latitude`, `longitude` too; any
    /// case; the first of each counts).
    static func weblinkCoordinate(_ link: String) throws(CoordinateError) -> Coordinate? {
        // The query by hand over the bytes: URLComponents was a tenth of the time of reading a
        // feed entry, and splitting by Character a fifth.
        var link = link
        let (latitude, longitude) = link.withUTF8 { bytes -> (String?, String?) in
            guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return (nil, nil) }
            let end = bytes[(question + 1)...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
            var latitude: String?, longitude: String?
            var start = question + 1
            while start < end {
                var stop = start
                while stop < end, bytes[stop] != UInt8(ascii: "&"), bytes[stop] != UInt8(ascii: ";") { stop += 1 }
                if let eq = bytes[start..<stop].firstIndex(of: UInt8(ascii: "=")), eq - start <= 9 {
                    let key = UnsafeBufferPointer(rebasing: bytes[start..<eq])
                    let value = { String(decoding: UnsafeBufferPointer(rebasing: bytes[(eq + 1)..<stop]), as: UTF8.self) }
                    if latitude == nil, latitudeKeys.contains(where: { asciiCaseInsensitiveEqual(key, $0) }) {
                        latitude = value()
                    } else if longitude == nil, longitudeKeys.contains(where: { asciiCaseInsensitiveEqual(key, $0) }) {
                        longitude = value()
                    }
                }
                start = stop + 1
            }
            return (latitude, longitude)
        }
        func decoded(_ value: String) -> String {
            value.utf8.contains(UInt8(ascii: "%")) ? value.removingPercentEncoding ?? value : value
        }
        guard let latitude, let longitude else { return nil }
        return try coordinate(decoded(latitude), decoded(longitude))
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
