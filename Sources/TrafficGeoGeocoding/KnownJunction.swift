import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// A junction of a road whose position the store has learned: from positioned messages that name
/// it, from a geocoder's junction answers, or from an import (an OSM export, a CSV).
///
///     let j = KnownJunction(road: "A4", name: "Krombach", kind: .exit, coordinate: c, support: 12, spreadMeters: 140, learnedFrom: "feed")
///     j.key   // "krombach"
public struct KnownJunction: Sendable, Equatable, Codable {
    /// Normalised road reference ("A4"); empty when the junction's road is not known (an OSM node).
    public var road: String
    /// The name as first seen ("Kreuz Heidelberg", "Ilshofen/Wolpertshausen").
    public var name: String
    public var kind: JunctionMention.Kind
    public var coordinate: Coordinate
    /// How many observations agree with the position (outliers excluded).
    public var support: Int
    /// The median distance of those observations from the position, in metres.
    public var spreadMeters: Double
    /// Where the observations came from: `feed`, `geocoder:nominatim`, `import:osm`, … (most common first).
    public var learnedFrom: String

    public var key: String { JunctionName.key(name) }

    public init(road: String, name: String, kind: JunctionMention.Kind, coordinate: Coordinate, support: Int,
                spreadMeters: Double, learnedFrom: String) {
        self.road = road
        self.name = name
        self.kind = kind
        self.coordinate = coordinate
        self.support = support
        self.spreadMeters = spreadMeters
        self.learnedFrom = learnedFrom
    }

    /// Well attested: several agreeing observations close together, or an authoritative import.
    public var isWellAttested: Bool {
        (support >= 3 && spreadMeters < 1500) || learnedFrom.hasPrefix("import")
    }
}

extension JunctionMention.Kind: Codable {}

/// One estimate of where a junction is, from one message or one import row.
public struct JunctionObservation: Sendable, Equatable {
    public var road: String
    /// The name as the message wrote it; `key` is what identifies the junction.
    public let name: String
    public var kind: JunctionMention.Kind
    public var coordinate: Coordinate
    /// `feed`, `geocoder:PROVIDER`, `import:NAME`.
    public var origin: String
    /// `JunctionName.key(name)`, folded once.
    public let key: String

    public init(road: String, name: String, kind: JunctionMention.Kind, coordinate: Coordinate, origin: String) {
        self.road = road
        self.name = name
        self.kind = kind
        self.coordinate = coordinate
        self.origin = origin
        key = JunctionName.key(name)
    }
}

/// The key a junction is known by: its folded name without the words that only say its kind, so
/// that "AK Heidelberg", "Kreuz Heidelberg" and "Autobahnkreuz Heidelberg" are one junction and
/// "Bayreuth / Kulmbach" is "Bayreuth/Kulmbach".
public enum JunctionName {
    static let kindWords: Set<String> = ["as", "ak", "ad", "anschlussstelle", "ausfahrt", "autobahnkreuz", "autobahndreieck",
                                         "kreuz", "dreieck", "anschluss"]

    public static func key(_ name: String) -> String {
        var words = TextFolding.fold(name).split(separator: " ")
        while words.count > 1, let first = words.first, kindWords.contains(String(first)) { words.removeFirst() }
        return words.joined(separator: " ")
    }

    /// The kind a name implies by its words ("Kreuz X" an interchange), else `fallback`.
    static func kind(of name: String, fallback: JunctionMention.Kind) -> JunctionMention.Kind {
        guard fallback == .unspecified else { return fallback }
        let first = TextFolding.fold(name).split(separator: " ").first.map(String.init) ?? ""
        switch first {
        case "kreuz", "autobahnkreuz", "ak": return .interchange
        case "dreieck", "autobahndreieck", "ad": return .triangle
        case "as", "anschlussstelle", "ausfahrt": return .exit
        default: return .unspecified
        }
    }
}
