import Foundation
import TrafficGeoGeocoding
import TrafficGeoModel
import TrafficGeoRoadTitles
import TrafficGeoSupport

/// What the same-event rule (`SameEventRule`) compares of a report, read from it once: its road,
/// kind, validity, where it is and how precisely, which way its traffic goes, and the stretch of
/// road its words name.
package struct ReportTraits: Sendable {
    package var storeID: Int64
    package let source: String
    /// The road, folded to compare ("I-25", "I 25" and "i25" alike); nil when the report names none.
    package let road: String?
    /// The kind of its category, and the kinds its words name ("Baustelle … Langsamer Verkehr":
    /// roadworks and congestion): two reports of one event may each lead with another.
    package let kinds: Set<KindFamily>
    /// Validity in seconds since 1970: from its start to its end (an open end: `openEnd…`).
    package let start: Double, end: Double
    /// Its stretch (a line, in the direction of travel where the feed says so) or its point;
    /// empty without a position.
    package let shape: [Coordinate]
    /// How far (metres) the event may lie from `shape`, by how the position was found; nil when
    /// the position says nothing (only the road is known).
    package let reach: Double?
    /// Which way its traffic goes: by the places its words name ("Olpe -> Köln", "direction
    /// Köln"), by a compass direction (a standard's field, "northbound"), by a feed's line.
    package let places: TravelDirection, compass: TravelDirection
    package let lineBearing: Double?
    /// The report is about both carriageways.
    package let bothWays: Bool
    /// The junctions the words name, folded: `from` the one the incident lies after in the
    /// direction of travel, `to` the one it lies before.
    package let from: String?, to: String?
    /// The stretch by kilometre posts ("km 434.27 --> km 431.83"), and which way they count in
    /// the direction of travel (+1 up, -1 down): a place on the road without a position.
    package let kilometres: ClosedRange<Double>?
    package let kilometreDirection: Double?

    package init(_ stored: StoredIncident, settings: ConflationSettings) {
        let i = stored.incident
        storeID = stored.storeID
        source = i.source
        road = i.road.map(Self.roadKey)
        let kind = KindFamily(i.category)
        var kinds = Set(CategoryClassifier.allCategories(i.title, i.summary).map { KindFamily($0) })
        kinds.insert(kind)
        if kinds.count > 1 { kinds.remove(.unknown) }
        self.kinds = kinds
        // Validity: the feed's own start (DATEX II validFrom, WZDx start_date, Open511's schedule),
        // else when it was last said, else when the store first saw it.
        let started = i.properties["valid_from"].flatMap(TimestampParser.parse) ?? i.updated ?? stored.firstSeen
        start = started.timeIntervalSince1970
        // Traffic that changes by the hour among its kinds (a queue at roadworks) ends soon.
        end = Self.end(start: start, updated: i.updated?.timeIntervalSince1970,
                       over: [stored.ended, i.expires].compactMap { $0?.timeIntervalSince1970 }.min(),
                       shortLived: kinds.contains(where: \.isShortLived), settings: settings)

        // The stretch by its junctions: German words, else English ones ("between J29A and J30").
        // The junctions only (what junction learning reads of every message), not the kind.
        let message = TrafficMessageParser.parseJunctions(title: i.title, text: i.summary)
        var names: (from: String?, to: String?)
        switch (message.from, message.to) {
        // A title's one name twice ("A1 : Köln-Niehl - Köln-Niehl") is that junction, as one mention.
        case let (first?, second?) where first.name == second.name: names = (message.comingFrom ?? first.name, first.name)
        case let (first?, second?): names = (first.name, second.name)
        // "0.8 km vor AS X, aus Richtung Y": between Y and X; "0.5 km hinter AS X": after X; "bei AS X": at X.
        case let (only?, nil) where only.relation == .before: names = (message.comingFrom, only.name)
        case let (only?, nil) where only.relation == .after: names = (only.name, nil)
        case let (only?, nil): names = (only.name, only.name)
        default: names = StretchWords.parse([i.summary, i.title].compactMap { $0 }.joined(separator: ". "))
        }
        let posts = TrafficMessageParser.kilometrePosts(in: i.summary ?? "").count >= 2 ? TrafficMessageParser.kilometrePosts(in: i.summary ?? "")
            : TrafficMessageParser.kilometrePosts(in: i.title)
        kilometres = posts.count >= 2 ? min(posts[0], posts[1])...max(posts[0], posts[1]) : nil
        kilometreDirection = posts.count >= 2 && posts[0] != posts[1] ? (posts[1] > posts[0] ? 1 : -1) : nil
        func key(_ name: String?) -> String? { name.map { TextFolding.loosen(JunctionName.key($0)) }.flatMap { $0.isEmpty ? nil : $0 } }
        from = key(names.from)
        // "at X" in English, one place: at it.
        to = key(names.to) ?? (names.from != nil && message.from == nil ? from : nil)

        let field = TravelDirection.of(field: i.properties["direction"])
        // The route the parser read ("Olpe -> Köln"), not read again.
        let route: [String]?? = message.isDirected && message.routeEnds.count == 2 ? .some(message.routeEnds) : nil
        let words = TravelDirection.of(words: i.title + " – " + (i.summary ?? ""), route: route)
        // Compass names from the words ("northbound") when the words name no place.
        let wordPlaces = words.bearing != nil && TravelDirection(compass: words.bearing!).towards == words.towards
            ? TravelDirection() : TravelDirection(towards: words.towards, from: words.from)
        places = wordPlaces
        compass = field.bearing != nil ? field : words.bearing.map { TravelDirection(compass: $0) } ?? TravelDirection()
        bothWays = field.bothWays || words.bothWays
        if let segment = i.segment, segment.count >= 2, let first = segment.first, let last = segment.last,
           [PositionSource.Kind.feed, .weblink].contains(i.positionSource?.kind ?? .feed),
           Self.metres(first, last) >= settings.directedLineLength {
            // A feed's line's point order is the direction of travel (the Autobahn API's extent,
            // WZDx upstream first, DATEX II's linear start and end); a geocoder's is not.
            lineBearing = Self.bearing(first, last)
        } else {
            lineBearing = nil
        }

        if let segment = i.segment, segment.count >= 2 {
            shape = segment
        } else {
            shape = i.position.map { [$0] } ?? []
        }
        switch i.positionSource?.kind {
        // A position nobody said the source of is the feed's (a library user's own incidents).
        case nil: reach = i.position == nil ? nil : settings.feedReach
        case .feed?, .weblink?: reach = settings.feedReach
        case .geocoder?:
            switch i.positionSource?.precision {
            case .junction?: reach = settings.junctionReach
            case .address?, .town?: reach = settings.townReach
            case .road?, .none?, nil: reach = nil
            }
        }
    }

    /// When a report is over: when it ended or expires (whichever is first), else an open end
    /// after the last it was said of (`openEndShort` or `openEndLong`); never before its start.
    package static func end(start: Double, updated: Double?, over: Double?, shortLived: Bool, settings: ConflationSettings) -> Double {
        let lastSaid = max(start, updated ?? start)
        return max(start, over ?? lastSaid + (shortLived ? settings.openEndShort : settings.openEndLong))
    }

    /// Whether a report's words name its stretch by two kilometre posts ("km 434.27 --> km 431.83").
    package static func namesKilometrePosts(_ stored: StoredIncident) -> Bool {
        TrafficMessageParser.kilometrePosts(in: stored.incident.summary ?? "").count >= 2
            || TrafficMessageParser.kilometrePosts(in: stored.incident.title).count >= 2
    }

    /// A road reference as compared: letters and digits only, upper case ("I-25", "I 25", "i25").
    package static func roadKey(_ road: String) -> String {
        String(road.uppercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
    }

    // MARK: - Geometry at the scale of a few kilometres

    /// Metres between two points (a sphere of the mean radius: the rule's thresholds are coarser
    /// than its error).
    package static func metres(_ a: Coordinate, _ b: Coordinate) -> Double {
        let (x, y) = local(b, around: a)
        return (x * x + y * y).squareRoot()
    }

    static func bearing(_ a: Coordinate, _ b: Coordinate) -> Double {
        let (x, y) = local(b, around: a)
        let degrees = atan2(x, y) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    /// The shortest distance between two shapes (points or lines), in metres.
    package static func distance(_ a: [Coordinate], _ b: [Coordinate]) -> Double {
        guard let origin = a.first, !b.isEmpty else { return .infinity }
        let pa = a.map { local($0, around: origin) }, pb = b.map { local($0, around: origin) }
        if pa.count >= 2, pb.count >= 2 {
            for i in 1..<pa.count {
                for j in 1..<pb.count where segmentsCross(pa[i - 1], pa[i], pb[j - 1], pb[j]) { return 0 }
            }
        }
        var best = Double.infinity
        for p in pa { best = min(best, distance(p, toLine: pb)) }
        for p in pb { best = min(best, distance(p, toLine: pa)) }
        return best
    }

    /// How much of the shorter of two lines lies within `tolerance` of the other (0 … 1), by 24
    /// points along it; nil unless both are lines.
    package static func overlap(_ a: [Coordinate], _ b: [Coordinate], tolerance: Double) -> Double? {
        guard a.count >= 2, b.count >= 2, let origin = a.first else { return nil }
        let pa = a.map { local($0, around: origin) }, pb = b.map { local($0, around: origin) }
        let (short, long) = length(pa) <= length(pb) ? (pa, pb) : (pb, pa)
        let samples = along(short, count: 24)
        guard !samples.isEmpty else { return nil }
        return Double(samples.filter { distance($0, toLine: long) <= tolerance }.count) / Double(samples.count)
    }

    private static func length(_ line: [Point]) -> Double {
        zip(line, line.dropFirst()).reduce(0) { $0 + hypot($1.1.x - $1.0.x, $1.1.y - $1.0.y) }
    }

    /// `count` points evenly spaced along a line, both ends included.
    private static func along(_ line: [Point], count: Int) -> [Point] {
        let total = length(line)
        guard total > 0 else { return line.isEmpty ? [] : [line[0]] }
        var points: [Point] = []
        var k = 0, walked = 0.0
        for (a, b) in zip(line, line.dropFirst()) {
            let piece = hypot(b.x - a.x, b.y - a.y)
            while k < count, Double(k) / Double(count - 1) * total <= walked + piece + 1e-9 {
                let t = piece == 0 ? 0 : (Double(k) / Double(count - 1) * total - walked) / piece
                points.append((a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)))
                k += 1
            }
            walked += piece
        }
        return points
    }

    private typealias Point = (x: Double, y: Double)

    private static let metresPerDegree = 6_371_008.8 * .pi / 180

    /// East and north metres of `p` from `origin` (equirectangular at the origin's latitude).
    private static func local(_ p: Coordinate, around origin: Coordinate) -> Point {
        var dLon = p.longitude - origin.longitude
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        return (dLon * metresPerDegree * cos(origin.latitude * .pi / 180), (p.latitude - origin.latitude) * metresPerDegree)
    }

    private static func distance(_ p: Point, toLine line: [Point]) -> Double {
        guard line.count >= 2 else { return line.first.map { hypot(p.x - $0.x, p.y - $0.y) } ?? .infinity }
        var best = Double.infinity
        for k in 1..<line.count {
            let a = line[k - 1], b = line[k]
            let dx = b.x - a.x, dy = b.y - a.y
            let length = dx * dx + dy * dy
            let t = length == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
            best = min(best, hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy)))
        }
        return best
    }

    private static func segmentsCross(_ a: Point, _ b: Point, _ c: Point, _ d: Point) -> Bool {
        func side(_ p: Point, _ q: Point, _ r: Point) -> Double { (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x) }
        let d1 = side(c, d, a), d2 = side(c, d, b), d3 = side(a, b, c), d4 = side(a, b, d)
        return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
    }
}

/// Kinds of incident that two reports of one event may give each other: a queue, stationary
/// traffic and slow traffic are one family; an accident and the queue behind it are not (a feed
/// that links them says so in one record, a DATEX II situation).
package enum KindFamily: Sendable, Equatable {
    case congestion, accident, obstacle, hazard, wrongWay, works, closure, management, weather, publicEvent
    /// No kind, or "other": compatible with any.
    case unknown

    package init(_ category: IncidentCategory?) {
        switch category {
        case .queue?, .slowTraffic?, .standstill?: self = .congestion
        case .accident?: self = .accident
        case .obstacle?: self = .obstacle
        case .danger?: self = .hazard
        case .wrongWayDriver?: self = .wrongWay
        case .roadworks?: self = .works
        case .closure?: self = .closure
        case .detour?, .restriction?: self = .management
        case .weather?: self = .weather
        case .event?: self = .publicEvent
        case .other?, nil: self = .unknown
        }
    }

    /// Traffic that changes by the hour: a report of it without an end lasts `openEndShort`.
    package var isShortLived: Bool {
        switch self {
        case .congestion, .accident, .obstacle, .hazard, .wrongWay, .weather, .unknown: true
        case .works, .closure, .management, .publicEvent: false
        }
    }

    /// Whether a report of this kind and one of `other` may be one event: the same family; a
    /// general hazard and any specific danger; roadworks and the closure, restriction or
    /// diversion they cause; a closure and its diversion.
    package func isCompatible(with other: KindFamily) -> Bool {
        if self == other || self == .unknown || other == .unknown { return true }
        let pair: Set<KindFamily> = [self, other]
        let dangers: Set<KindFamily> = [.accident, .obstacle, .wrongWay, .weather]
        if pair.contains(.hazard), pair.isSubset(of: dangers.union([.hazard])) { return true }
        let managed: Set<KindFamily> = [.works, .closure, .management]
        return pair.isSubset(of: managed)
    }
}
