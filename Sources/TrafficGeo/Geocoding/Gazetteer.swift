import Foundation

/// The offline gazetteer: GeoNames places (CC BY 4.0) from `data/gazetteer/places.tsv`, built by
/// `scripts/build-gazetteer.py`. Looked up by folded name, so Koeln, Köln and KÖLN are one key.
public final class Gazetteer: Sendable {
    public struct Place: Sendable, Equatable {
        public var geonameID: Int
        public var name: String
        public var countryCode: String
        public var coordinate: Coordinate
        public var population: Int
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
            let place = Place(geonameID: id, name: String(f[1]), countryCode: String(f[2]).lowercased(),
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

    /// Places of that name (any spelling GeoNames knows), most populous first.
    public func lookup(_ name: String, countryCodes: [String] = []) -> [Place] {
        let hits = (byName[TextFolding.fold(name)] ?? []).map { places[$0] }
            .filter { countryCodes.isEmpty || countryCodes.contains($0.countryCode) }
        return hits.sorted { $0.population != $1.population ? $0.population > $1.population : $0.geonameID < $1.geonameID }
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
        let sourceTree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(sourceTree.appendingPathComponent("data/gazetteer/places.tsv").path)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    private static let cache = GazetteerCache()

    /// The default gazetteer, loaded once per process.
    public static func shared() throws -> Gazetteer {
        try cache.get()
    }
}

private final class GazetteerCache: @unchecked Sendable {
    private let lock = NSLock()
    private var loaded: Gazetteer?

    func get() throws -> Gazetteer {
        lock.lock(); defer { lock.unlock() }
        if let loaded { return loaded }
        guard let path = Gazetteer.defaultPath() else {
            throw GeocodingError.configuration("no gazetteer found: set TRAFFICGEO_GAZETTEER to data/gazetteer/places.tsv, or install it as share/trafficgeo/places.tsv")
        }
        let g = try Gazetteer(path: path)
        loaded = g
        return g
    }
}

/// The offline geocoder over the gazetteer: the embedded default when no HTTP geocoder is set.
public struct GazetteerProvider: GeocodingProvider {
    public let name = "gazetteer"
    public let gazetteer: Gazetteer
    public var cacheIdentity: String { "gazetteer" }

    public init(gazetteer: Gazetteer) { self.gazetteer = gazetteer }

    public func search(_ query: GeocodeQuery) async throws -> GeocodeAnswer {
        // The name as written first, then the spellings a gazetteer may know it by.
        for (variant, quality) in NameVariants.of(query.text) {
            let places = gazetteer.lookup(variant, countryCodes: query.countryCodes)
            guard !places.isEmpty else { continue }
            let candidates = places.prefix(query.limit).map { p in
                GeocodeCandidate(coordinate: p.coordinate, name: p.name, displayName: "\(p.name), \(p.countryCode.uppercased())",
                                 kind: .town, score: quality * min(1, log10(Double(max(p.population, 1))) / 7),
                                 population: p.population, countryCode: p.countryCode, osmTag: "place/geonames")
            }
            return GeocodeAnswer(provider: name, candidates: Array(candidates), attribution: Gazetteer.attribution)
        }
        return GeocodeAnswer(provider: name, candidates: [], attribution: Gazetteer.attribution)
    }

    public func reverse(_ coordinate: Coordinate) async throws -> ReverseAddress {
        guard let (place, _) = gazetteer.nearest(to: coordinate) else { return ReverseAddress(provider: name) }
        return ReverseAddress(displayName: place.name, country: nil, countryCode: place.countryCode, postcode: nil,
                              locality: place.name, road: nil, coordinate: place.coordinate, provider: name,
                              attribution: Gazetteer.attribution)
    }
}
