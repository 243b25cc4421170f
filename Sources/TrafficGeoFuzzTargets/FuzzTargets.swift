import Foundation
import TrafficGeoFeeds
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoRoadTitles
import TrafficGeoStore

/// The code that reads bytes from elsewhere, as fuzz targets: every feed reader, the road-title
/// parser, every geocoder response decoder and `serve`'s CQL2 filter. Each must turn any input into values or a
/// reported error: never crash, hang or grow without bound.
///
/// `Fuzz/` builds them into a libFuzzer binary (`scripts/fuzz`); the test suite replays the seed
/// and regression corpora in `Fuzz/corpus/<target>/` through the same functions.
public enum FuzzTargets {
    public static let all = ["atom", "rss", "autobahn", "geojson", "csv", "datex2", "wzdx", "open511", "waze", "title", "nominatim", "photon", "pelias", "legacy-csv", "cql2"]


    /// Runs `target` on `data`. Returns how many values came out (so the work is not optimised away).
    @discardableResult
    public static func run(_ target: String, _ data: Data) -> Int {
        switch target {
        case "atom": return readFeed(data, as: .atom)
        case "rss": return readFeed(data, as: .rss)
        case "autobahn": return readFeed(data, as: .autobahn)
        case "geojson": return readFeed(data, as: .geojson)
        case "csv": return readFeed(data, as: .csv)
        case "datex2": return readFeed(data, as: .datex2)
        case "wzdx": return readFeed(data, as: .wzdx)
        case "open511": return readFeed(data, as: .open511)
        case "waze": return readFeed(data, as: .waze)
        case "title":
            let text = String(decoding: data, as: UTF8.self)
            let (title, rest) = text.firstIndex(of: "\n").map { (String(text[..<$0]), String(text[$0...])) } ?? (text, "")
            let message = TrafficMessageParser.parse(title: title, text: rest.isEmpty ? nil : rest)
            _ = RoadReference.first(in: text)
            _ = CategoryClassifier.classify(title, rest)
            _ = NameVariants.of(title)
            return message.routeEnds.count + (message.from == nil ? 0 : 1) + (message.to == nil ? 0 : 1)
        case "cql2": return filter(String(decoding: data, as: UTF8.self))
        case "nominatim", "photon", "pelias", "legacy-csv":
            return decodeGeocoderAnswer(data, provider: target)
        default:
            preconditionFailure("unknown fuzz target \(target); known: \(all.joined(separator: ", "))")
        }
    }

    private static func readFeed(_ data: Data, as format: FeedFormat) -> Int {
        // Readers stream from files: one per input (the test suite replays inputs in parallel).
        let feedFile = FileManager.default.temporaryDirectory.appendingPathComponent("trafficgeo-fuzz-\(UUID().uuidString).input")
        guard (try? data.write(to: feedFile)) != nil else { return 0 }
        defer { try? FileManager.default.removeItem(at: feedFile) }
        var count = 0
        do {
            try FeedReading.reader(for: format).read(FeedInput(localFile: feedFile.path), source: "fuzz") { event in
                if case let .incident(incident) = event {
                    // What the store requires of every incident the readers let through.
                    if let p = incident.position {
                        precondition(p.latitude.isFinite && abs(p.latitude) <= 90 && p.longitude.isFinite && abs(p.longitude) <= 180,
                                     "reader let an impossible coordinate through: \(p)")
                    }
                    precondition(!incident.id.isEmpty && !incident.title.isEmpty, "reader made an incident without id or title")
                    count += 1
                }
            }
        } catch {
            _ = "\(error)" // errors must describe themselves without crashing
        }
        return count
    }

    /// A filter read, translated and checked against a few incidents: how many it lets through
    /// plus one (0: refused).
    private static func filter(_ text: String) -> Int {
        do {
            let question = try CQL2Question(CQL2Expression(text: text), asked: QueryText(), base: IncidentFilter(), hasBox: false)
            _ = try question.asked.filter()
            let places = [Coordinate(latitude: 50.94, longitude: 6.96), Coordinate(latitude: -15, longitude: 179.9), Coordinate(latitude: 0, longitude: 0)]
            var passed = 1
            for (n, place) in places.enumerated() {
                let incident = Incident(source: "fuzz", id: "\(n)", title: "A\(n) | Köln", updated: Date(timeIntervalSince1970: 1_750_000_000 + Double(n) * 86_400),
                                        road: "A\(n)", category: .roadworks, position: place, properties: ["severity": "high"])
                let stored = StoredIncident(storeID: Int64(n + 1), incident: incident, firstSeen: Date(), lastChanged: Date())
                if question.remainder?.matches(stored) ?? true { passed += 1 }
            }
            return passed
        } catch {
            _ = "\(error)"
            return 0
        }
    }

    private static func decodeGeocoderAnswer(_ data: Data, provider: String) -> Int {
        let base = URL(string: "http://127.0.0.1:1/")!
        do {
            let answer: GeocodeAnswer
            switch provider {
            case "nominatim": answer = try NominatimProvider(baseURL: base).decodeSearch(data)
            case "photon": answer = try PhotonProvider(baseURL: base).decode(data)
            case "pelias": answer = try PeliasProvider(baseURL: base).decode(data)
            default: answer = try LegacyCSVProvider(baseURL: base).decode(data)
            }
            for c in answer.candidates {
                precondition(c.coordinate.latitude.isFinite && abs(c.coordinate.latitude) <= 90
                             && c.coordinate.longitude.isFinite && abs(c.coordinate.longitude) <= 180,
                             "decoder let an impossible coordinate through: \(c.coordinate)")
            }
            return answer.candidates.count
        } catch {
            _ = "\(error)"
            return 0
        }
    }
}
