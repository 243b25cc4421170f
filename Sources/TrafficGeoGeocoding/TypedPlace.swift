import Foundation
import NIOConcurrencyHelpers
import TrafficGeoModel
import TrafficGeoProjection
import TrafficGeoSupport

/// The names of the world's countries (`countries.tsv` beside the gazetteer, made by
/// `scripts/build-countries.py` from Debian's iso-codes): their ISO codes and their names in
/// English and the languages iso-codes translates them into, folded as the gazetteer folds.
public struct CountryNames: Sendable {
    /// Folded name → the lower-case alpha-2 codes it names (a name may be several countries').
    private let codesByName: [String: [String]]

    public init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var codes: [String: [String]] = [:]
        codes.reserveCapacity(40_000)
        // Split by bytes: the file is 0.8 MB, and splitting it as Characters took half a second.
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            for line in bytes.split(separator: UInt8(ascii: "\n")).dropFirst() {
                let f = line.split(separator: UInt8(ascii: "\t"), maxSplits: 1, omittingEmptySubsequences: false)
                guard f.count == 2 else { continue }
                let code = String(decoding: f[0], as: UTF8.self).lowercased()
                for name in f[1].split(separator: UInt8(ascii: "|")) {
                    let key = TextFolding.fold(String(decoding: name, as: UTF8.self))
                    if !(codes[key]?.contains(code) ?? false) { codes[key, default: []].append(code) }
                }
            }
        }
        codesByName = codes
    }

    /// The countries a name (Spain, España, ESP, ES, UK, England) stands for; empty if none.
    public func codes(of name: String) -> [String] {
        codesByName[TextFolding.fold(name)] ?? []
    }

    /// `countries.tsv` beside the default gazetteer (`Gazetteer.defaultPath`), nil when absent.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let home = Gazetteer.defaultPath(environment: environment) else { return nil }
        let path = URL(fileURLWithPath: home).deletingLastPathComponent().appendingPathComponent("countries.tsv").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    private static let loaded = NIOLockedValueBox<CountryNames??>(nil)

    /// The default list, loaded once per process; nil when it is not installed.
    public static func shared() -> CountryNames? {
        loaded.withLockedValue { loaded in
            if let loaded { return loaded }
            let names = defaultPath().flatMap { try? CountryNames(path: $0) }
            loaded = .some(names)
            return names
        }
    }
}

/// A place a person types (`near "Valencia, Spain"`), found as they mean it:
/// - a last part after a comma that names a country ("Spain", "España", "ES", "UK", "USA") is
///   looked up in that country only: "Valencia, Spain" is not Valencia, Venezuela;
/// - without one, of the places of that name, one near the incidents the store holds comes
///   first (a desk asks about its own region: `near Victoria` on British Columbia's incidents
///   is Victoria, BC), then the larger;
/// - the answer says which it took, and names the others of that name when they are far from
///   it, with the words that ask for them.
public struct TypedPlace: Sendable {
    /// The name without its country part, and the countries it was given in (none: anywhere).
    public var name: String
    public var countryCodes: [String]
    /// The country as typed ("Spain"), for messages.
    public var countryText: String?

    /// Reads "name, country" when the last part names a country; else the whole text. The
    /// list of countries is asked for only when the text has a comma.
    public init(_ text: String, countries: @autoclosure () -> CountryNames?) {
        let parts = text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
        name = parts.joined(separator: ", ")
        countryCodes = []
        countryText = nil
        unreadParts = []
        guard parts.count > 1, let countries = countries() else { return }
        // The last part that names a country, after the place's own name ("Valencia, Spain,
        // Europe"); what follows it, and what no country is ("Paris, Texas"), the geocoder may
        // read or not (`unreadParts`: said if the answer shows none of it).
        if let k = parts.indices.dropFirst().last(where: { !countries.codes(of: parts[$0]).isEmpty }) {
            name = parts[..<k].joined(separator: ", ")
            countryCodes = countries.codes(of: parts[k])
            countryText = parts[k]
            unreadParts = Array(parts[(k + 1)...])
        } else {
            unreadParts = Array(parts.dropFirst())
        }
    }

    /// Parts after the name that name no country (a state, a region: "Texas", "Europe").
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
        /// The country part named no place of that name there, so the name was looked up anywhere.
        public var countryIgnored: Bool
    }

    /// Looks the place up. `distanceToIncidents` gives how far a point is from the nearest
    /// incident with a position (nil: the store holds none, or there is no store); a candidate
    /// within `nearIncidents` of one comes before those that are not.
    public func find(with service: GeocodingService,
                     distanceToIncidents: (@Sendable (Coordinate) async throws -> Double?)? = nil) async throws -> Choice? {
        var countryIgnored = false
        var answer = try await service.search(GeocodeQuery(name, purpose: .any, countryCodes: countryCodes, limit: 10))
        if answer.candidates.isEmpty, !countryCodes.isEmpty {
            // "Denver, CO": CO is Colombia's code, and Colorado's; no Denver in Colombia.
            answer = try await service.search(GeocodeQuery(name, purpose: .any, limit: 10))
            countryIgnored = true
        }
        var candidates = answer.candidates
        guard !candidates.isEmpty else { return nil }
        var reason: String? = countryCodes.isEmpty || countryIgnored ? nil : "in \(countryText ?? countryCodes.joined(separator: "/"))"
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
        for candidate in candidates.dropFirst() where others.count < 3 {
            let distance = Geodesic.distance(from: taken.coordinate, to: candidate.coordinate)
            guard distance > Self.farApart,
                  others.allSatisfy({ Geodesic.distance(from: $0.place.coordinate, to: candidate.coordinate) > Self.farApart }) else { continue }
            others.append((candidate, distance))
        }
        return Choice(taken: taken, others: others, reason: reason, countryIgnored: countryIgnored)
    }
}
