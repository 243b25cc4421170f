import Foundation
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoSupport

/// The names of the world's countries and of their first-level subdivisions: `countries.tsv`
/// (made by `scripts/build-countries.py` from Debian's iso-codes: ISO codes, names in English and
/// the languages iso-codes translates them into) and `subdivisions.tsv` (made by
/// `scripts/build-subdivisions.py`: states and provinces by GeoNames' admin1 code, with ISO
/// 3166-2's codes and names), folded as the gazetteer folds.
public struct CountryNames: Sendable {
    /// Folded name → the areas it names (a name may be several: "IL" is Israel and Illinois).
    private let areasByName: [String: [PlaceArea]]
    /// A subdivision → how to write it shortly: its ISO code without the country ("IL", "ON"),
    /// else GeoNames' name (the first of its row).
    private let shortNames: [PlaceArea: String]

    /// Reads the countries' names, and the subdivisions' when a path is given.
    public init(path: String, subdivisionsPath: String? = nil) throws {
        var areas: [String: [PlaceArea]] = [:]
        var short: [PlaceArea: String] = [:]
        areas.reserveCapacity(60_000)
        for file in [path] + (subdivisionsPath.map { [$0] } ?? []) {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            // Split by bytes: the files are 1 MB, and splitting them as Characters took half a second.
            data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                let bytes = raw.bindMemory(to: UInt8.self)
                for line in bytes.split(separator: UInt8(ascii: "\n")).dropFirst() {
                    let f = line.split(separator: UInt8(ascii: "\t"), maxSplits: 1, omittingEmptySubsequences: false)
                    guard f.count == 2, let area = PlaceArea(code: String(decoding: f[0], as: UTF8.self)) else { continue }
                    for name in f[1].split(separator: UInt8(ascii: "|")) {
                        let text = String(decoding: name, as: UTF8.self)
                        let key = TextFolding.fold(text)
                        if !(areas[key]?.contains(area) ?? false) { areas[key, default: []].append(area) }
                        // A subdivision's first name is its label (scripts/build-subdivisions.py).
                        if area.admin1 != nil, short[area] == nil { short[area] = text }
                    }
                }
            }
        }
        areasByName = areas
        shortNames = short
    }

    /// A subdivision written shortly ("IL", "ON", "North Rhine-Westphalia"), nil when unknown.
    public func shortName(of area: PlaceArea) -> String? {
        shortNames[area]
    }

    /// "Springfield, IL, US": a gazetteer's place with its state or province where it has one;
    /// else (or without the names) the geocoder's own name for it.
    public static func label(_ candidate: GeocodeCandidate, names: CountryNames?) -> String {
        guard let admin1 = candidate.admin1, let country = candidate.countryCode,
              let state = names?.shortName(of: PlaceArea(country: country, admin1: admin1)) else { return candidate.displayName ?? candidate.name }
        return "\(candidate.name), \(state), \(country.uppercased())"
    }

    /// The countries and subdivisions a name (Spain, España, ESP, UK, England; IL, Ontario,
    /// CA-ON) stands for; empty if none.
    public func areas(of name: String) -> [PlaceArea] {
        areasByName[TextFolding.fold(name)] ?? []
    }

    /// The countries a name stands for (not its subdivisions).
    public func codes(of name: String) -> [String] {
        areas(of: name).filter { $0.admin1 == nil }.map(\.country)
    }

    /// `countries.tsv` beside the default gazetteer (`Gazetteer.defaultPath`), nil when absent.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        Gazetteer.defaultSiblingPath("countries.tsv", environment: environment)
    }

    // Absent or unreadable: a typed place's country part is then read as part of its name.
    private static let loaded = LoadedOnce<CountryNames?> {
        defaultPath().flatMap { try? CountryNames(path: $0, subdivisionsPath: Gazetteer.defaultSiblingPath("subdivisions.tsv")) }
    }

    /// The default list, loaded once per process; nil when it is not installed.
    public static func shared() -> CountryNames? {
        (try? loaded.get()) ?? nil
    }
}

/// A place a person types (`near "Valencia, Spain"`), found as they mean it:
/// - a last part after a comma that names a country ("Spain", "España", "ES", "UK", "USA") or a
///   state or province ("IL", "Oregon", "Ontario", "BC") is looked up there only: "Valencia,
///   Spain" is not Valencia, Venezuela, "London, Ontario" not London, England; a code that is
///   both ("IL": Israel, Illinois) is either; "Springfield, Illinois, USA" is Illinois;
/// - without one, of the places of that name, one near the incidents the store holds comes
///   first (a desk asks about its own region: `near Victoria` on British Columbia's incidents
///   is Victoria, BC), then the larger;
/// - the answer says which it took, and names the others of that name when they are far from
///   it, with the words that ask for them.
public struct TypedPlace: Sendable {
    /// The name without its country part, and the countries and subdivisions it was given in
    /// (none of either: anywhere).
    public var name: String
    public var countryCodes: [String]
    public var subdivisions: [PlaceArea]
    /// The country or subdivision as typed ("Spain", "IL", "Illinois, USA"), for messages.
    public var areaText: String?

    /// The whole text as typed (its parts trimmed).
    public var typedText: String

    /// What is said when the area named no place of the name, so it was looked up anywhere.
    public var areaIgnoredWarning: String {
        "no '\(name)' in \(areaText ?? "that country"); looked for it anywhere"
    }

    /// Anywhere: no part named a country or a subdivision.
    public var isAnywhere: Bool { countryCodes.isEmpty && subdivisions.isEmpty }

    /// Reads "name, area" when the last part names a country or a subdivision; else the whole
    /// text. The list of names is asked for only when the text has a comma.
    public init(_ text: String, countries: @autoclosure () -> CountryNames?) {
        let parts = text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
        name = parts.joined(separator: ", ")
        typedText = name
        countryCodes = []
        subdivisions = []
        areaText = nil
        unreadParts = []
        guard parts.count > 1, let countries = countries() else { return }
        // The last part that names an area, after the place's own name ("Valencia, Spain,
        // Europe"); what follows it, and what names none ("Paris, Texarkana"), the geocoder may
        // read or not (`unreadParts`: said if the answer shows none of it).
        guard let k = parts.indices.dropFirst().last(where: { !countries.areas(of: parts[$0]).isEmpty }) else {
            unreadParts = Array(parts.dropFirst())
            return
        }
        var first = k
        let areas = countries.areas(of: parts[k])
        let wholeCountries = areas.filter { $0.admin1 == nil }.map(\.country)
        // "Springfield, Illinois, USA": the subdivision before the country narrows it.
        if !wholeCountries.isEmpty, k >= 2 {
            let within = countries.areas(of: parts[k - 1]).filter { $0.admin1 != nil && wholeCountries.contains($0.country) }
            if !within.isEmpty {
                first = k - 1
                subdivisions = within
            }
        }
        if subdivisions.isEmpty {
            countryCodes = wholeCountries
            subdivisions = areas.filter { $0.admin1 != nil }
        }
        name = parts[..<first].joined(separator: ", ")
        areaText = parts[first...k].joined(separator: ", ")
        unreadParts = Array(parts[(k + 1)...])
    }

    /// Parts after the name that name no country or subdivision (a county, a continent: "Europe").
    public var unreadParts: [String]

    /// The parts of `unreadParts` that the place taken does not show in its name: the geocoder
    /// may have looked for the name alone ("Paris, Texas" answered by Paris, France).
    public func partsNotIn(_ candidate: GeocodeCandidate) -> [String] {
        let shown = TextFolding.fold([candidate.name, candidate.displayName ?? ""].joined(separator: " "))
        return unreadParts.filter { !shown.contains(TextFolding.fold($0)) }
    }

    /// Within this of an incident of the store, a place counts as near them (metres): a desk's
    /// feeds cover a region, and the town it asks about is in it, or close to its edge.
    public static let nearIncidents = 50_000.0
    /// Another place of the name this far from the one taken is named beside it (metres).
    public static let farApart = 50_000.0

    /// What was taken, and the others of the name worth naming.
    public struct Choice: Sendable {
        public var taken: GeocodeCandidate
        /// Other places of the name, far from the one taken (at most three), nearest to the
        /// store's incidents first.
        public var others: [(place: GeocodeCandidate, distance: Double)]
        /// Why this one: "near the store's incidents", "in Spain", or nil (the geocoder's first).
        public var reason: String?
        /// The country or subdivision part named no place of that name there, so the name was
        /// looked up anywhere.
        public var countryIgnored: Bool
    }

    /// The geocoder's answer for the place: in the area given; when that has none (or the
    /// subdivisions are not installed), anywhere (`areaIgnored`).
    public func search(with service: GeocodingService, limit: Int = 10) async throws -> (answer: GeocodeAnswer, areaIgnored: Bool) {
        let answer = try await service.search(GeocodeQuery(name, purpose: .any, countryCodes: countryCodes, subdivisions: subdivisions,
                                                           subdivisionText: areaText, limit: limit))
        guard answer.candidates.isEmpty, !isAnywhere else { return (answer, false) }
        let anywhere = try await service.search(GeocodeQuery(name, purpose: .any, limit: limit))
        // Then the text as typed: "Hauptstraße 5, Berlin" is an address in the town of Berlin,
        // not a street in the state of Berlin.
        guard anywhere.candidates.isEmpty else { return (anywhere, true) }
        return (try await service.search(GeocodeQuery(typedText, purpose: .any, limit: limit)), true)
    }

    /// Looks the place up. `distanceToIncidents` gives how far a point is from the nearest
    /// incident with a position (nil: the store holds none, or there is no store); a candidate
    /// within `nearIncidents` of one comes before those that are not.
    public func find(with service: GeocodingService,
                     distanceToIncidents: (@Sendable (Coordinate) async throws -> Double?)? = nil) async throws -> Choice? {
        let (answer, countryIgnored) = try await search(with: service)
        var candidates = answer.candidates
        guard !candidates.isEmpty else { return nil }
        var reason: String? = isAnywhere || countryIgnored ? nil : "in \(areaText ?? countryCodes.joined(separator: "/"))"
        if candidates.count > 1, let distanceToIncidents {
            var distances: [Double?] = []
            for candidate in candidates { distances.append(try await distanceToIncidents(candidate.coordinate)) }
            let near = candidates.indices.filter { (distances[$0] ?? .infinity) <= Self.nearIncidents }
            // Stable: among the near ones, and among the others, the geocoder's order (the larger first).
            if !near.isEmpty, near.first != 0 {
                let rest = candidates.indices.filter { !near.contains($0) }
                candidates = (near + rest).map { candidates[$0] }
                reason = "the one near the store's incidents"
            }
        }
        let taken = candidates[0]
        var others: [(place: GeocodeCandidate, distance: Double)] = []
        // Only places of that name: a gazetteer's alternate names hold former and local names
        // ("Kingston" for a district of another town), and a namesake is what a person asks for.
        let typedName = TextFolding.fold(name.split(separator: ",").first.map(String.init) ?? name)
        for candidate in candidates.dropFirst() where others.count < 3 && TextFolding.fold(candidate.name).contains(typedName) {
            let distance = Geodesic.distance(from: taken.coordinate, to: candidate.coordinate)
            guard distance > Self.farApart,
                  others.allSatisfy({ Geodesic.distance(from: $0.place.coordinate, to: candidate.coordinate) > Self.farApart }) else { continue }
            others.append((candidate, distance))
        }
        return Choice(taken: taken, others: others, reason: reason, countryIgnored: countryIgnored)
    }
}
