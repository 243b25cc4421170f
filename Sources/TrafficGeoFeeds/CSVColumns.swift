import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Which column of a CSV feed is which field of an incident: named by the user (a field
/// mapping, the command line's `--field title=advisorymessage`), else recognised by the column's name and by what it holds.
///
/// Names are read as words ("head_latitude", "fechaFin", "Road Event ID" are head·latitude,
/// fecha·fin, road·event·id), in the languages the feeds are written in: a column is the
/// latitude when one of its words is a word for latitude, the start of a stretch before its end
/// (head, start, begin, from); the id when it is an id of the record (road_event_id, not
/// data_source_id). Contents decide what names cannot: a column whose values are WKT geometry
/// is the geometry, whatever it is called.
public struct CSVColumns: Sendable, Equatable {
    /// The fields a column can stand for, as a field mapping names them.
    public enum Role: String, CaseIterable, Sendable {
        case id, title, summary, latitude, longitude, geometry, road, category, updated, starts, expires, weblink, icon
        /// A measure (`IncidentMeasure`): only when named (`--field delay=Verzug`); a column
        /// called `delay_minutes` or `lanes_restricted` is the measure already, as every column
        /// no field takes is kept under its own name.
        case delay, lanesRestricted = "lanes_restricted"

        /// The measure a role's column fills.
        var measure: IncidentMeasure? {
            switch self {
            case .delay: return .delayMinutes
            case .lanesRestricted: return .lanesRestricted
            default: return nil
            }
        }

        /// The roles that fill a measure, with it: asked once, not for every row.
        static let measures: [(role: Role, measure: IncidentMeasure)] = allCases.compactMap { role in role.measure.map { (role, $0) } }
    }

    /// The column of each role that has one.
    public private(set) var columns: [Role: Int] = [:]
    /// Every column of WKT, the chosen first: a row's geometry is the first of them it fills
    /// (an export with a `geometry_linestring` and a `geometry_multipoint` column fills one a row).
    public private(set) var geometryColumns: [Int] = []
    /// A time of day in a column of its own, beside a date column of the same role ("hora" beside "fecha").
    public private(set) var clockColumns: [Role: Int] = [:]
    /// What the user can do about a position the columns did not give (x/y in metres with no
    /// CRS given), for the note that says what was recognised.
    public var hint: String?
    /// The roles that were recognised rather than named (said aloud by the ingest).
    public private(set) var guessed: Set<Role> = []

    public subscript(role: Role) -> Int? { columns[role] }

    /// The words of a column's name: split at `_`, `-`, `.`, spaces and a lower-to-upper case
    /// change, lower case.
    static func words(_ name: String) -> [String] {
        var words: [String] = [], current = ""
        var previousLower = false
        for c in name {
            if c == "_" || c == "-" || c == "." || c == " " || c == "/" {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousLower = false
                continue
            }
            if c.isUppercase, previousLower, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current += c.lowercased()
            previousLower = c.isLowercase || c.isNumber
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    // MARK: - Words for each field, in the feeds' languages (English, German, French, Spanish, Italian, Dutch)

    static let latitudeWords: Set<String> = ["lat", "latitude", "breite", "breitengrad", "latitud", "latitudine", "breedtegraad", "y"]
    static let longitudeWords: Set<String> = ["lon", "lng", "long", "longitude", "laenge", "länge", "laengengrad", "längengrad", "longitud", "longitudine", "lengtegraad", "x"]
    static let geometryWords: Set<String> = ["wkt", "geometry", "geom", "geometrie", "geometria", "shape", "the_geom"]
    static let idWords: Set<String> = ["id", "identifier", "guid", "uuid", "objectid", "fid", "identificador", "identifiant", "identificativo", "codigo", "código", "kennung"]
    /// An id of the record, not of something it refers to: the word before "id".
    static let recordWords: Set<String> = ["event", "incident", "record", "situation", "feature", "object", "item", "message", "report",
                                           "closure", "alert", "road", "work", "zone", "incidencia", "evento", "meldung", "ereignis"]
    static let foreignWords: Set<String> = ["source", "feed", "data", "provider", "publisher", "parent", "related", "organization",
                                            "org", "agency", "user", "device", "camera", "sensor", "segment", "lane"]
    static let titleWords: Set<String> = ["title", "headline", "name", "subject", "titel", "titre", "titulo", "título", "nombre", "nom", "titolo", "naam", "libelle", "libellé", "intitule", "intitulé"]
    static let summaryWords: Set<String> = ["summary", "description", "desc", "subtitle", "text", "message", "comment", "comments", "details",
                                            "remarks", "notes", "advisory", "beschreibung", "meldung", "descripcion", "descripción",
                                            "description", "descrizione", "omschrijving", "texto", "mensaje", "observaciones"]
    static let roadWords: Set<String> = ["road", "roads", "roadway", "roadname", "route", "highway", "hwy", "motorway", "freeway", "street", "strasse", "straße",
                                         "carretera", "via", "voie", "autoroute", "autopista", "autovia", "autovía", "strada", "weg", "snelweg"]
    static let roadQualifiers: Set<String> = ["name", "names", "number", "nr", "no", "num", "nombre", "numero", "nummer", "ref", "code"]
    static let categoryWords: Set<String> = ["category", "type", "kind", "class", "cause", "tipo", "typ", "art", "kategorie", "categoria",
                                             "categoría", "categorie", "causa", "cause", "soort"]
    static let dateWords: Set<String> = ["date", "timestamp", "datetime", "fecha", "datum", "data", "dia", "día", "jour"]
    static let clockWords: Set<String> = ["time", "hora", "zeit", "uhrzeit", "heure", "ora", "tijd"]
    static let timeWords = dateWords.union(clockWords)
    static let startWords: Set<String> = ["start", "starts", "begin", "beginning", "from", "inicio", "desde", "beginn", "debut", "début", "inizio", "valid"]
    static let endWords: Set<String> = ["end", "ends", "ending", "fin", "finish", "expires", "expiry", "expiration", "until", "hasta", "ende", "bis",
                                        "fine", "eind", "to"]
    static let updateWords: Set<String> = ["updated", "update", "modified", "lastupdate", "published", "created", "creation", "reported",
                                           "actualizacion", "actualización", "aktualisiert", "geaendert", "mise"]
    static let linkWords: Set<String> = ["weblink", "url", "link", "href", "uri", "web", "website"]
    static let iconWords: Set<String> = ["icon", "iconurl"]
    /// The head of a stretch (its first point) before its tail.
    static let headWords: Set<String> = ["head", "start", "begin", "beginning", "from", "origin", "first", "inicio"]
    static let tailWords: Set<String> = ["tail", "end", "to", "last", "fin", "destination"]

    /// A name's score for a role: higher is more surely it, 0 is not it.
    static func score(_ role: Role, words w: [String]) -> Int {
        // A plural is its word too ("Begins", "comments", "roadNames").
        let set = Set(w).union(w.lazy.filter { $0.count > 3 && $0.hasSuffix("s") && !$0.hasSuffix("ss") }.map { String($0.dropLast()) })
        func any(_ words: Set<String>) -> Bool { !set.isDisjoint(with: words) }
        let headBonus = any(headWords) ? 2 : any(tailWords) ? -1 : 0
        switch role {
        case .latitude:
            guard any(latitudeWords), !any(longitudeWords.subtracting(["long"])) else { return 0 }
            // "y" alone is a latitude only as a whole name.
            if set == ["y"] { return 3 }
            return w.contains("y") && w.count > 1 ? 0 : 5 + headBonus
        case .longitude:
            guard any(longitudeWords), !any(latitudeWords) else { return 0 }
            if set == ["x"] { return 3 }
            return w.contains("x") && w.count > 1 ? 0 : 5 + headBonus
        case .geometry:
            return any(geometryWords) || w.joined(separator: "_") == "the_geom" ? 4 : 0
        case .id:
            if w.count == 1, any(idWords) { return 10 }
            guard let last = w.last, idWords.contains(last), !any(foreignWords) else { return 0 }
            return w.dropLast().contains(where: recordWords.contains) ? 8 : 3
        case .title:
            guard any(titleWords), !any(roadWords), !any(idWords) else { return 0 }
            return w.count == 1 ? 6 : 4
        case .summary:
            guard any(summaryWords), !any(idWords) else { return 0 }
            return w.count == 1 ? 6 : 4
        case .road:
            guard any(roadWords), !any(idWords), !any(categoryWords), !any(timeWords) else { return 0 }
            // "road", "road_name", "roadway_names"; not "road_event_type".
            let others = set.subtracting(roadWords).subtracting(roadQualifiers)
            guard others.isEmpty || others.isSubset(of: ["primary", "main", "principal", "1"]) else { return 0 }
            return w.count == 1 ? 6 : set.contains("name") || set.contains("names") ? 5 : 4
        case .category:
            guard any(categoryWords), !any(idWords), !any(timeWords) else { return 0 }
            // A cause is the kind less surely than a type is.
            let cause = any(["cause", "causa"])
            return w.count == 1 ? (cause ? 4 : 6) : w.contains("event") || w.contains("incident") ? 5 : 3
        case .starts:
            guard any(startWords), any(timeWords) || w.count == 1 || w == ["valid", "from"] else { return 0 }
            guard !any(endWords.subtracting(["to"])), !any(latitudeWords), !any(longitudeWords), !any(foreignWords) else { return 0 }
            return any(clockWords) && !any(dateWords) ? 4 : 5
        case .expires:
            guard any(endWords), any(timeWords) || w.count == 1 || any(["expires", "expiry", "expiration"]) else { return 0 }
            guard !any(latitudeWords), !any(longitudeWords), !any(startWords), !any(foreignWords) else { return 0 }
            return any(clockWords) && !any(dateWords) ? 4 : 5
        case .updated:
            // The feed's own update time is not the report's.
            guard !any(foreignWords) else { return 0 }
            if any(updateWords) { return any(["created", "creation"]) ? 3 : 6 }
            // A plain date column ("fecha", "date"): the report's time; a time of day ("hora") less surely.
            guard any(timeWords), !any(startWords), !any(endWords), !any(latitudeWords), !any(longitudeWords) else { return 0 }
            return w.count == 1 ? (any(dateWords) ? 4 : 3) : 2
        case .weblink:
            return any(linkWords) ? (w.count == 1 ? 6 : 3) : 0
        case .icon:
            return any(iconWords) ? 5 : 0
        case .delay, .lanesRestricted:
            return 0   // named, never guessed
        }
    }

    /// The columns of a header, given `named` (role → column name, a field mapping) and a sample
    /// of the first rows. Throws when a named column is not in the header.
    /// `exact`: names that are a role whatever the rules say (the names trafficgeo's own CSV and
    /// the Autobahn export have always used: `startTimestamp` is when the report was updated).
    /// `inDegrees`: coordinates are latitudes and longitudes (not x/y in a CRS given), so a
    /// coordinate column must hold values in their ranges.
    /// `unrecognised`: roles no column is recognised for (a GIS layer's geometry is the
    /// position: no attribute is taken for a coordinate), unless the user names one.
    public static func choose(header: [String], sample: [[String]], named: [Role: String] = [:],
                              exact: [Role: [String]] = [:], unrecognised: Set<Role> = [], inDegrees: Bool = true) throws(Problem) -> CSVColumns {
        var result = CSVColumns()
        var taken: Set<Int> = []
        let folded = header.map { TextFolding.fold($0) }
        for (role, name) in named {
            guard let i = header.firstIndex(of: name) ?? folded.firstIndex(of: TextFolding.fold(name)) else {
                throw Problem("the field mapping \(role.rawValue)=\(name): the header has no column '\(name)'; it has \(header.joined(separator: ", ").prefix(200))")
            }
            result.columns[role] = i
            taken.insert(i)
        }
        let lowered = header.map { $0.lowercased() }
        // A coordinate column holds coordinates, whatever it is called: x and y in metres are no
        // degrees (a row's bad latitude is that row's problem, not the column's).
        func plausible(_ i: Int, _ role: Role) -> Bool {
            guard inDegrees, role == .latitude || role == .longitude else { return true }
            let limit = role == .latitude ? 90.0 : 180.0
            let values = sample.compactMap { i < $0.count ? DecimalText.double($0[i]) : nil }
            return values.filter { abs($0) <= limit }.count * 2 >= values.count
        }
        for role in Role.allCases where result.columns[role] == nil {
            guard let names = exact[role], let i = names.lazy.compactMap({ name in lowered.indices.first { lowered[$0] == name && !taken.contains($0) && plausible($0, role) } }).first else { continue }
            result.columns[role] = i
            taken.insert(i)
        }
        let words = header.map(Self.words)
        // Contents first: a column of WKT is the geometry, whatever its name.
        if result.columns[.geometry] == nil, !unrecognised.contains(.geometry) {
            let wkt = header.indices.filter { i in
                !taken.contains(i) && {
                    let values = sample.compactMap { i < $0.count ? $0[i] : nil }.filter { !$0.isEmpty }
                    return !values.isEmpty && values.filter(WKTGeometry.looksLikeWKT).count * 10 >= values.count * 8
                }()
            }
            // Then columns named as geometry that the sample left empty (filled further down).
            let named = header.indices.filter { i in
                !taken.contains(i) && !wkt.contains(i) && score(.geometry, words: words[i]) > 0
                    && sample.allSatisfy { i >= $0.count || $0[i].isEmpty }
            }
            let ordered = wkt.sorted { (score(.geometry, words: words[$0]), -$0) > (score(.geometry, words: words[$1]), -$1) } + (wkt.isEmpty ? [] : named)
            if let i = ordered.first {
                result.columns[.geometry] = i
                result.geometryColumns = ordered
                result.guessed.insert(.geometry)
                taken.formUnion(ordered)
            }
        }
        // Then names, the surest role first (an id before a title, both before a road's name).
        let order: [Role] = [.id, .latitude, .longitude, .starts, .expires, .updated, .weblink, .icon, .category, .road, .title, .summary]
        for role in order where result.columns[role] == nil && !unrecognised.contains(role) {
            var candidates = header.indices.filter { !taken.contains($0) }.map { ($0, score(role, words: words[$0])) }.filter { $0.1 > 0 }
            // A column the sample leaves empty loses to one it fills (LIBKML's empty `begin`
            // and `end` beside a layer's own start_time and end_time).
            let filled = candidates.filter { c in sample.contains { c.0 < $0.count && !$0[c.0].isEmpty } }
            if !filled.isEmpty { candidates = filled }
            guard var best = candidates.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) else { continue }
            // A coordinate column must hold coordinates.
            if role == .latitude || role == .longitude {
                let limit = role == .latitude ? 90.0 : 180.0
                let plausible = candidates.filter { c in
                    let values = sample.compactMap { c.0 < $0.count ? $0[c.0] : nil }.filter { !$0.isEmpty }
                    return values.allSatisfy { DecimalText.double($0).map { abs($0) <= limit } ?? false }
                }
                guard let chosen = plausible.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) else { continue }
                best = chosen
            }
            // A date column must hold dates, where any of its candidates does; a time of day
            // ("hora") is kept to complete a date-only column of the same role ("fecha").
            if [.updated, .starts, .expires].contains(role) {
                func values(_ i: Int) -> [String] {
                    sample.compactMap { i < $0.count ? $0[i] : nil }.filter { !PlaceholderText.isPlaceholder($0) }
                }
                let dated = candidates.filter { c in
                    let v = values(c.0)
                    let order = CSVDates(sample: v)
                    return !v.isEmpty && v.filter { order.normalized($0) != nil }.count * 2 >= v.count
                }
                if let chosen = dated.max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) { best = chosen }
                let dateOnly = values(best.0)
                if !dateOnly.isEmpty, dateOnly.allSatisfy(CSVDates.isDateOnly),
                   let clock = candidates.filter({ $0.0 != best.0 && !values($0.0).isEmpty && values($0.0).allSatisfy(CSVDates.isClockTime) })
                    .max(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 > $1.0) }) {
                    result.clockColumns[role] = clock.0
                    taken.insert(clock.0)
                }
            }
            result.columns[role] = best.0
            result.guessed.insert(role)
            taken.insert(best.0)
        }
        // No column named as a title or a text: the one whose values are the longest texts
        // (words, mostly letters) is the text, in whatever language its name is.
        if result.columns[.title] == nil, result.columns[.summary] == nil, !unrecognised.contains(.summary) {
            func words(_ i: Int) -> Double {
                let values = sample.compactMap { i < $0.count ? $0[i] : nil }.filter { !$0.isEmpty }
                guard !values.isEmpty, values.allSatisfy({ v in v.unicodeScalars.filter(CharacterSet.letters.contains).count * 2 >= v.unicodeScalars.count }) else { return 0 }
                return Double(values.map { $0.split(whereSeparator: \.isWhitespace).count }.reduce(0, +)) / Double(values.count)
            }
            if let text = header.indices.filter({ !taken.contains($0) }).map({ ($0, words($0)) }).filter({ $0.1 >= 4 }).max(by: { $0.1 < $1.1 }) {
                result.columns[.summary] = text.0
                result.guessed.insert(.summary)
                taken.insert(text.0)
            }
        }
        return result
    }

    /// What the ingest says it took: "id ← road_event_id, title ← name, …" (recognised columns only).
    public func describe(header: [String]) -> String {
        Role.allCases.compactMap { role in
            guard guessed.contains(role), let i = columns[role] else { return nil }
            let others = role == .geometry ? geometryColumns.dropFirst().map { " or \(header[$0])" }.joined() : ""
            return "\(role.rawValue) ← \(header[i])" + (clockColumns[role].map { " + \(header[$0])" } ?? "") + others
        }.joined(separator: ", ")
    }

    /// A field mapping that cannot be used.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// ROLE=COLUMN texts read into a mapping; refused with the roles there are.
    public static func mapping(_ texts: [String]) throws(Problem) -> [Role: String] {
        var out: [Role: String] = [:]
        for text in texts {
            guard let eq = text.firstIndex(of: "=") else { throw Problem("'\(text)' is not ROLE=COLUMN (e.g. title=advisorymessage)") }
            let name = String(text[..<eq]).trimmingCharacters(in: .whitespaces).lowercased()
            let column = String(text[text.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
            let aliases: [String: Role] = ["lat": .latitude, "lon": .longitude, "lng": .longitude, "description": .summary, "start": .starts,
                                           "end": .expires, "ends": .expires, "url": .weblink, "link": .weblink, "wkt": .geometry, "update": .updated,
                                           "delay_minutes": .delay, "lanes": .lanesRestricted]
            guard let role = Role(rawValue: name) ?? aliases[name] else {
                throw Problem("\(text): '\(name)' is no field; fields: \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard !column.isEmpty else { throw Problem("\(text): no column named") }
            out[role] = column
        }
        return out
    }
}
