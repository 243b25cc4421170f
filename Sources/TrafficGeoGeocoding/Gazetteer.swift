import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// The offline gazetteer: GeoNames places (CC BY 4.0) from `data/gazetteer/places.tsv`, built by
/// `scripts/build-gazetteer.py`. Looked up by folded name, so Koeln, Köln and KÖLN are one key.
public final class Gazetteer: Sendable {
    public struct Place: Sendable, Equatable {
        public var geonameID: Int
        public var name: String
        public var countryCode: String
        /// GeoNames' first-level subdivision (a state, a province; "il", "08"), lower case; may be empty.
        public var admin1: String
        public var coordinate: Coordinate
        public var population: Int

        /// The order lookups answer in: most populous first, then by GeoNames id.
        public static func mostPopulousFirst(_ a: Place, _ b: Place) -> Bool {
            a.population != b.population ? a.population > b.population : a.geonameID < b.geonameID
        }
    }

    public static let attribution = "GeoNames (https://www.geonames.org), CC BY 4.0"

    public let places: [Place]
    private let byName: [String: [Int]]

    /// Loads a gazetteer TSV (header row; geonameid, name, country, admin1, latitude, longitude,
    /// population, alternatenames separated by `|`).
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GeocodingError.configuration("cannot read the gazetteer \(path) (build it with scripts/build-gazetteer.py, or set TRAFFICGEO_GAZETTEER)")
        }
        var places: [Place] = []
        var byName: [String: [Int]] = [:]
        let text = String(decoding: data, as: UTF8.self)
        for (n, line) in text.split(separator: "\n").enumerated() where n > 0 {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count >= 7, let id = Int(f[0]), let lat = Double(f[4]), let lon = Double(f[5]) else { continue }
            let place = Place(geonameID: id, name: String(f[1]), countryCode: String(f[2]).lowercased(), admin1: String(f[3]).lowercased(),
                              coordinate: Coordinate(latitude: lat, longitude: lon), population: Int(f[6]) ?? 0)
            let index = places.count
            places.append(place)
            var keys = Set([TextFolding.fold(place.name)])
            if f.count > 7 { for alt in f[7].split(separator: "|") { keys.insert(TextFolding.fold(String(alt))) } }
            for key in keys where !key.isEmpty { byName[key, default: []].append(index) }
        }
        guard !places.isEmpty else { throw GeocodingError.configuration("the gazetteer \(path) holds no places") }
        self.places = places
        self.byName = byName
    }

    /// Places of that name (any spelling GeoNames knows), most populous first; with countries
    /// or subdivisions, those in one of them.
    public func lookup(_ name: String, countryCodes: [String] = [], subdivisions: [PlaceArea] = []) -> [Place] {
        let anywhere = countryCodes.isEmpty && subdivisions.isEmpty
        let hits = (byName[TextFolding.fold(name)] ?? []).map { places[$0] }
            .filter { anywhere || countryCodes.contains($0.countryCode)
                || (!subdivisions.isEmpty && subdivisions.contains(PlaceArea(country: $0.countryCode, admin1: $0.admin1))) }
        return hits.sorted(by: Place.mostPopulousFirst)
    }

    /// The place nearest to a coordinate.
    public func nearest(to c: Coordinate) -> (place: Place, distance: Double)? {
        var best: (Place, Double)?
        for p in places {
            // A cheap equirectangular prefilter before the exact distance.
            let dLat = p.coordinate.latitude - c.latitude
            if let b = best, abs(dLat) * 111_000 > b.1 { continue }
            let d = Geodesic.distance(from: c, to: p.coordinate)
            if best == nil || d < best!.1 { best = (p, d) }
        }
        return best
    }

    // MARK: - Locating the data file

    /// `$TRAFFICGEO_GAZETTEER`, else `share/trafficgeo/places.tsv` beside the executable's folder,
    /// else the `data/gazetteer/places.tsv` of the source tree this library was built from.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let path = environment["TRAFFICGEO_GAZETTEER"], !path.isEmpty { return path }
        var candidates: [String] = []
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("share/trafficgeo/places.tsv").path)
        // Sources/TrafficGeoGeocoding/Gazetteer.swift → the package root.
        let sourceTree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(sourceTree.appendingPathComponent("data/gazetteer/places.tsv").path)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The towns of the rest of the world (`world.tsv` beside the default gazetteer, built by
    /// the same script): for places a person types, never for placing a traffic message.
    public static func defaultWorldPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        defaultSiblingPath("world.tsv", environment: environment)
    }

    /// A file beside the default gazetteer (`world.tsv`, `countries.tsv`), nil when absent.
    public static func defaultSiblingPath(_ file: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let home = defaultPath(environment: environment) else { return nil }
        let path = URL(fileURLWithPath: home).deletingLastPathComponent().appendingPathComponent(file).path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    private static let home = LoadedOnce<Gazetteer> {
        guard let path = Gazetteer.defaultPath() else {
            throw GeocodingError.configuration("no gazetteer found: set TRAFFICGEO_GAZETTEER to data/gazetteer/places.tsv, or install it as share/trafficgeo/places.tsv")
        }
        return try Gazetteer(path: path)
    }
    // A world file that is absent or unreadable is none: typed places are then found at home only.
    private static let world = LoadedOnce<Gazetteer?> { defaultWorldPath().flatMap { try? Gazetteer(path: $0) } }

    /// The default gazetteer, loaded once per process.
    public static func shared() throws -> Gazetteer {
        try home.get()
    }

    /// The world's towns, loaded once per process when first asked for; nil when not installed.
    public static func sharedWorld() -> Gazetteer? {
        (try? world.get()) ?? nil
    }
}

/// The offline geocoder over the gazetteer: the embedded default when no HTTP geocoder is set.
public struct GazetteerProvider: GeocodingProvider {
    public let name = "gazetteer"
    public let gazetteer: Gazetteer
    /// Versioned: answers cached by an older gazetteer search (before addresses found their
    /// town; before a place came before its region, "Leipzig, Sachsen") are not reused.
    public var cacheIdentity: String { "gazetteer/4" }

    /// A home place this populous answers a typed name without the world's towns.
    static let homeCity = 100_000

    /// Beyond this (metres) from the nearest home place, a reverse lookup asks the world's towns.
    static let homeReach = 50_000.0

    /// The world's towns, asked only for free-form questions (`GeocodeQuery.Purpose.any`: a
    /// place a person types, `near London`) and for reverse lookups far from the home places:
    /// a traffic message's route end or junction is never placed abroad by a namesake.
    public let world: @Sendable () -> Gazetteer?

    public init(gazetteer: Gazetteer, world: @escaping @Sendable () -> Gazetteer? = { Gazetteer.sharedWorld() }) {
        self.gazetteer = gazetteer
        self.world = world
    }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        let home = lookup(query.text, query, scale: 1)
        // A typed place: the world's towns too, unless home has a city of that name (Köln,
        // Paris), which spares reading them (a third of a second).
        if query.purpose == .any, (home?.candidates.first?.population ?? 0) < Self.homeCity, let world = world(),
           let found = lookup(query.text, query, scale: 1, in: [gazetteer, world]) {
            return found
        }
        if let home { return home }
        // An address ("Hauptstraße 5, 69117 Heidelberg", "50667 Köln"): the gazetteer knows
        // towns, not streets, so the address's town answers, at town precision and less surely.
        // Only for free-form questions: the names a traffic message gives (junctions, route
        // ends) are not addresses, and a part of one is a guess a message must not rest on.
        if query.purpose == .any {
            for town in AddressParts.towns(in: query.text) {
                if let found = lookup(town, query, scale: 0.6) { return found }
            }
        }
        return GeocodeAnswer(provider: name, candidates: [], attribution: Gazetteer.attribution)
    }

    /// The places of a name as written first, then of the spellings a gazetteer may know it by;
    /// from several gazetteers, most populous first.
    private func lookup(_ text: String, _ query: GeocodeQuery, scale: Double, in gazetteers: [Gazetteer]? = nil) -> GeocodeAnswer? {
        for (variant, quality) in NameVariants.of(text) {
            var places: [Gazetteer.Place] = []
            for g in gazetteers ?? [gazetteer] { places += g.lookup(variant, countryCodes: query.countryCodes, subdivisions: query.subdivisions) }
            guard !places.isEmpty else { continue }
            places.sort(by: Gazetteer.Place.mostPopulousFirst)
            let candidates = places.prefix(query.limit).map { p in
                var candidate = GeocodeCandidate(coordinate: p.coordinate, name: p.name, displayName: "\(p.name), \(p.countryCode.uppercased())",
                                                 kind: .town, score: scale * quality * min(1, log10(Double(max(p.population, 1))) / 7),
                                                 population: p.population, countryCode: p.countryCode, osmTag: "place/geonames")
                candidate.admin1 = p.admin1.isEmpty ? nil : p.admin1
                return candidate
            }
            return GeocodeAnswer(provider: name, candidates: Array(candidates), attribution: Gazetteer.attribution)
        }
        return nil
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        var nearest = gazetteer.nearest(to: coordinate)
        // Far from every home place (Colorado, England): the world's towns may be nearer.
        if nearest.map({ $0.distance > Self.homeReach }) ?? true, let far = world()?.nearest(to: coordinate),
           nearest.map({ far.distance < $0.distance }) ?? true {
            nearest = far
        }
        guard let (place, _) = nearest else { return ReverseAddress(provider: name) }
        return ReverseAddress(displayName: place.name, country: nil, countryCode: place.countryCode, postcode: nil,
                              locality: place.name, road: nil, coordinate: place.coordinate, provider: name,
                              attribution: Gazetteer.attribution)
    }
}

/// The parts of a postal address that may name its town, most likely first: the part with a
/// postcode ("69117 Heidelberg", "D-50667 Köln", "Köln 50667"), then the other comma-separated
/// parts from the last ("Hauptstraße 5, Heidelberg"), except a first part without a number,
/// which is a place before its region ("Leipzig, Sachsen"). Only numeric postcodes are recognised
/// (most of Europe's); a British "SW1A 1AA London" is tried as a part like any other.
enum AddressParts {
    static func towns(in text: String) -> [String] {
        let parts = text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
        var withCode: [String] = [], others: [String] = []
        for part in parts.reversed() {
            let words = part.split(separator: " ")
            let kept = words.filter { !isPostcode($0) }
            guard !kept.isEmpty else { continue }
            let name = kept.joined(separator: " ")
            if kept.count < words.count { withCode.append(name) } else if parts.count > 1 { others.append(name) }
        }
        // No postcode, and a first part with no house number: a place and its region ("Leipzig,
        // Sachsen"), the place first; a street's part ("Hauptstraße 5, Heidelberg") keeps the
        // town after it first.
        if withCode.isEmpty, parts.count > 1, let first = parts.first, !first.contains(where: \.isNumber), let i = others.lastIndex(of: first) {
            others.insert(others.remove(at: i), at: 0)
        }
        var seen = Set<String>()
        return (withCode + others).filter { $0 != text && seen.insert($0).inserted }
    }

    /// 4–5 digits, maybe after a country letter and a dash (D-50667, A-1010, CH-8001).
    private static func isPostcode(_ word: Substring) -> Bool {
        let digits = word.split(separator: "-").last ?? word
        guard (4...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return digits.count == word.count || word.split(separator: "-").first.map { $0.count <= 2 && $0.allSatisfy(\.isLetter) } == true
    }
}
