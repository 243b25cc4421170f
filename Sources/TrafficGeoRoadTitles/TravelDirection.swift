import Foundation
import TrafficGeoSupport

/// Which way the traffic an incident concerns goes, as far as a report says it: a compass
/// direction ("northbound", DATEX II `northBound`, WZDx `direction`, Open511 `N`), a place it
/// goes to or comes from ("A4: Olpe -> Köln", "direction Köln", "Richtung Köln"), or both ways.
/// Two reports on opposite carriageways of one road are two events (docs/conflation.md).
///
///     TravelDirection.of(field: "southBound").bearing   // 180
///     TravelDirection.of(words: "A4: Olpe -> Köln, zwischen AS Krombach und AS Wenden").towards  // "koln"
public struct TravelDirection: Sendable, Equatable {
    /// The compass direction of travel, degrees clockwise from north.
    public var bearing: Double?
    /// The report is about both carriageways.
    public var bothWays = false
    /// Where the traffic goes, folded (`TextFolding.foldPlain`: Köln, Koeln and Koln alike).
    public var towards: String?
    /// Where it comes from, folded.
    public var from: String?

    public init(bearing: Double? = nil, bothWays: Bool = false, towards: String? = nil, from: String? = nil) {
        self.bearing = bearing
        self.bothWays = bothWays
        self.towards = towards
        self.from = from
    }

    /// Says nothing about the direction.
    public var isUnknown: Bool { bearing == nil && !bothWays && towards == nil && from == nil }

    /// What `other` says that this does not.
    public func filled(from other: TravelDirection) -> TravelDirection {
        TravelDirection(bearing: bearing ?? other.bearing, bothWays: bothWays || other.bothWays,
                        towards: towards ?? other.towards, from: from ?? other.from)
    }

    // MARK: - Reading

    /// A standard's direction field: DATEX II (`tpegDirection`, `directionBound`, ALERT-C
    /// `positive`/`negative`), WZDx (`northbound`, …), Open511 (`N`, `NB`, `BOTH`).
    public static func of(field: String?) -> TravelDirection {
        guard let field else { return TravelDirection() }
        let key = field.lowercased().filter(\.isLetter)
        if let bearing = compass[key] { return TravelDirection(compass: bearing) }
        switch key {
        case "both", "bothways", "bothdirections", "alldirections", "b", "bidirectional", "twoway":
            return TravelDirection(bothWays: true)
        // Ring roads (the M25): the two carriageways.
        case "clockwise", "innerring": return TravelDirection(towards: "clockwise", from: "anticlockwise")
        case "anticlockwise", "counterclockwise", "outerring": return TravelDirection(towards: "anticlockwise", from: "clockwise")
        // ALERT-C: along or against the location table's order of the road's points.
        case "positive": return TravelDirection(towards: "alert-c positive", from: "alert-c negative")
        case "negative": return TravelDirection(towards: "alert-c negative", from: "alert-c positive")
        default: return TravelDirection()
        }
    }

    /// The direction a report's words give, in English or German: "A4: Olpe -> Köln", "direction
    /// Köln", "towards Leeds", "Richtung Köln", "northbound", "in both directions", "in beiden
    /// Richtungen". Nothing for "aus Richtung X" alone (where a queue begins, not where it goes).
    /// `route`: the words' "X -> Y" when the caller has read it already (`TrafficMessageParser.directedRoute`).
    public static func of(words text: String, route given: [String]?? = nil) -> TravelDirection {
        var found = TravelDirection()
        guard !text.isEmpty else { return found }
        // One lower-case copy, searched by bytes (Foundation's case-insensitive search per word
        // was most of the time of comparing reports).
        let lower = text.lowercased()
        if bothWaysWords.occurs(in: lower[...]) { found.bothWays = true }
        let route = given ?? (text.utf8.contains(UInt8(ascii: ">")) ? TrafficMessageParser.directedRoute(in: text) : nil)
        if let route {
            found.from = TextFolding.foldPlain(route[0])
            found.towards = TextFolding.foldPlain(route[1])
        }
        if found.towards == nil, let place = placeAfter(lower) { found.towards = place }
        if let compassWord = firstCompassWord(lower), let bearing = compass[compassWord] {
            let named = TravelDirection(compass: bearing)
            found.bearing = bearing
            if found.towards == nil { (found.towards, found.from) = (named.towards, named.from) }
        }
        return found
    }

    private static let bothWaysWords = ByteNeedles(["both directions", "beiden richtungen", "beide richtungen", "both ways", "deux sens"])

    /// A compass direction, also by its name: "southbound" is the carriageway opposite
    /// "northbound" whatever way the road turns there (a route's direction is its sign, not the
    /// bearing of every bend).
    public init(compass bearing: Double) {
        let names = ["north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest"]
        let k = Int((bearing / 45).rounded()) % 8
        self.init(bearing: bearing, towards: names[k], from: names[(k + 4) % 8])
    }

    // MARK: - Comparing

    /// How two directions relate: the same carriageway, the opposite one, or not known.
    public enum Relation: Sendable, Equatable { case same, opposite, unknown }

    /// Names decide first (the same destination, or one's destination the other's origin), then
    /// compass bearings (opposite beyond `oppositeAngle` degrees). Both ways matches either.
    public func relation(to other: TravelDirection, oppositeAngle: Double = 90) -> Relation {
        if bothWays || other.bothWays { return .same }
        if let byNames = relation(byNamesTo: other) { return byNames }
        if let a = bearing, let b = other.bearing {
            return Self.angle(a, b) > oppositeAngle ? .opposite : .same
        }
        return .unknown
    }

    /// What the names alone say: the same destination, or one's destination the other's
    /// origin; nil when they say nothing (different places, or none).
    public func relation(byNamesTo other: TravelDirection) -> Relation? {
        if let a = towards, let b = other.towards, Self.samePlace(a, b) { return .same }
        if let a = towards, let from = other.from, Self.samePlace(a, from) { return .opposite }
        if let b = other.towards, let from, Self.samePlace(from, b) { return .opposite }
        return nil
    }

    /// The angle between two bearings, 0…180 degrees.
    public static func angle(_ a: Double, _ b: Double) -> Double {
        let d = abs((a - b).truncatingRemainder(dividingBy: 360))
        return d > 180 ? 360 - d : d
    }

    /// Folded place names that name one place: equal, or one the other's first words ("koln" and
    /// "koln mulheim", "leeds" and "leeds city centre").
    static func samePlace(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let (short, long) = a.count <= b.count ? (a, b) : (b, a)
        guard !short.isEmpty, long.hasPrefix(short) else { return false }
        let next = long[long.index(long.startIndex, offsetBy: short.count)...].first
        return next == " " || next == "-"
    }

    // MARK: - Pieces

    private static let compass: [String: Double] = [
        "n": 0, "nb": 0, "north": 0, "northbound": 0, "northeastbound": 45, "ne": 45, "neb": 45,
        "e": 90, "eb": 90, "east": 90, "eastbound": 90, "southeastbound": 135, "se": 135, "seb": 135,
        "s": 180, "sb": 180, "south": 180, "southbound": 180, "southwestbound": 225, "sw": 225, "swb": 225,
        "w": 270, "wb": 270, "west": 270, "westbound": 270, "northwestbound": 315, "nw": 315, "nwb": 315,
    ]

    private static let compassWords = ["northbound", "southbound", "eastbound", "westbound"]

    /// The first of "northbound" … "westbound" in the (lower-case) text, as a whole word.
    private static func firstCompassWord(_ lower: String) -> String? {
        guard lower.utf8.count >= 9, compassNeedles.occurs(in: lower[...]) else { return nil }
        var best: (String, String.Index)?
        for word in compassWords {
            guard let r = lower.utf8Range(of: word) else { continue }
            let before = r.lowerBound == lower.startIndex ? nil : lower[lower.index(before: r.lowerBound)]
            guard before.map({ !$0.isLetter }) ?? true else { continue }
            if best.map({ r.lowerBound < $0.1 }) ?? true { best = (word, r.lowerBound) }
        }
        return best?.0
    }

    private static let compassNeedles = ByteNeedles(compassWords)

    /// Words that put the place traffic goes to after them; "aus Richtung" (where from) is not one.
    private static let towardsWords = ["in direction of ", "direction ", "towards ", "toward ", "in richtung ", "fahrtrichtung ", "richtung "]

    /// The place after a towards-word in the (lower-case) text: up to punctuation, a
    /// conjunction or a few words.
    private static func placeAfter(_ lower: String) -> String? {
        guard towardsNeedles.occurs(in: lower[...]) else { return nil }
        for word in towardsWords {
            var searchStart = lower.startIndex
            while let r = lower.utf8Range(of: word, from: searchStart) {
                searchStart = r.upperBound
                let prefix = lower[..<r.lowerBound]
                if prefix.hasSuffix("aus ") || prefix.hasSuffix("from ") { continue }
                if let before = prefix.last, before.isLetter { continue }
                var words: [Substring] = []
                for w in lower[r.upperBound...].split(separator: " ", omittingEmptySubsequences: true) {
                    let stop = w.last.map { ",.;:!?)".contains($0) } ?? false
                    let word = stop ? w.dropLast() : w
                    if stopWords.contains(String(word)) { break }
                    if !word.isEmpty { words.append(word) }
                    if stop || words.count == 3 { break }
                }
                let place = TextFolding.foldPlain(words.joined(separator: " "))
                if !place.isEmpty { return place }
            }
        }
        return nil
    }

    private static let towardsNeedles = ByteNeedles(["direction", "toward", "richtung"])

    /// Words that end a place name after a towards-word.
    private static let stopWords: Set<String> = ["und", "and", "between", "zwischen", "at", "bei", "near", "from", "in", "auf", "on", "-"]
}
