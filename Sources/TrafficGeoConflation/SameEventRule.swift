import Foundation
import TrafficGeoModel
import TrafficGeoRoadTitles

/// When two reports are one real-world event (docs/conflation.md): all of
///   - other sources (a feed's own ids tell its reports apart);
///   - the same road;
///   - compatible kinds (`KindFamily`);
///   - overlapping validity (`ConflationSettings.timeSlack`);
///   - not opposite carriageways (`TravelDirection.relation`, and junctions named the other way round);
///   - close along the road for the precision of each position (`ReportTraits.reach`); where both
///     name their stretch by junctions, by those names: the same stretch matches up to
///     `namedStretchReach`, stretches that only touch end to end or share no junction do not.
package struct SameEventRule: Sendable {
    package let settings: ConflationSettings

    package init(settings: ConflationSettings) { self.settings = settings }

    /// Why two reports are not one event (the evaluation counts wrong and missed merges by it).
    package enum Difference: String, Sendable, CaseIterable {
        case sameSource = "same source", road, kind, time, oppositeCarriageway = "opposite carriageway"
        case place, otherStretch = "other stretch", noPosition = "no position"
    }

    package enum Verdict: Sendable, Equatable {
        /// One event; the lower the score, the closer the match (0 for the same place, names,
        /// carriageway and time; about 1.5 at most).
        case same(score: Double)
        case distinct(Difference)

        package var isSame: Bool { if case .same = self { true } else { false } }
    }

    package func verdict(_ a: ReportTraits, _ b: ReportTraits) -> Verdict {
        if a.source == b.source { return .distinct(.sameSource) }
        guard let road = a.road, road == b.road else { return .distinct(.road) }
        if !a.kinds.contains(where: { k in b.kinds.contains { k.isCompatible(with: $0) } }) { return .distinct(.kind) }
        let gap = max(a.start, b.start) - min(a.end, b.end)
        if gap > settings.timeSlack { return .distinct(.time) }
        // Kilometre posts that count the other way: the other carriageway.
        if let x = a.kilometreDirection, let y = b.kilometreDirection, x != y { return .distinct(.oppositeCarriageway) }
        let direction = Self.direction(a, b, oppositeAngle: settings.oppositeAngle)
        if direction == .opposite { return .distinct(.oppositeCarriageway) }
        // Of several matches the best: the closer in place (the names alike first), on the
        // carriageway known to be the same rather than one not known, overlapping in time.
        var penalty = max(0, gap) / max(settings.timeSlack, 1) * 0.1
        // Of two otherwise alike, the one that began nearer in time (a twentieth an hour).
        penalty += min(abs(a.start - b.start) / 3600, 10) * 0.05
        if direction == .unknown { penalty += a.places.towards != nil && b.places.towards != nil ? 0.5 : 0.25 }
        let stretch = Self.stretch(a, b)
        if stretch == .reversed { return .distinct(.oppositeCarriageway) }
        let distance = ReportTraits.distance(a.shape, b.shape)
        if let x = a.kilometres, let y = b.kilometres {
            // The same stretch by kilometre posts (half a kilometre apart at most): one event, also
            // where one of them has no position; stretches apart: two.
            guard x.lowerBound - settings.kilometreSlack <= y.upperBound, y.lowerBound - settings.kilometreSlack <= x.upperBound else {
                return .distinct(.otherStretch)
            }
            guard distance.isInfinite || distance <= settings.namedStretchReach else { return .distinct(.place) }
            return .same(score: (distance.isFinite ? distance / max(settings.namedStretchReach, 1) / 2 : 0.25) + penalty)
        }
        // Two lines a feed gave run along each other where they are one stretch: a name they
        // share may be the point where one stretch ends and the next begins.
        var share: Double?
        if let ra = a.reach, let rb = b.reach, ra <= settings.feedReach, rb <= settings.feedReach {
            share = ReportTraits.overlap(a.shape, b.shape, tolerance: (ra + rb) / 2)
        }
        switch stretch {
        case .same, .contained:
            // Named alike: the names place them, up to the reach a geocoder's namesake may be off.
            guard distance <= settings.namedStretchReach else { return .distinct(.place) }
            if let share, share < settings.lineOverlap { return .distinct(.place) }
            return .same(score: distance / max(settings.namedStretchReach, 1) / 2 + penalty)
        case .adjacent, .disjoint:
            return .distinct(.otherStretch)
        case .overlapping, .unnamed, .reversed:
            guard let ra = a.reach, let rb = b.reach else { return .distinct(.noPosition) }
            let limit = ra + rb
            guard distance <= limit else { return .distinct(.place) }
            // Two stretches of road as lines are one event where they run along each other, not
            // where they only touch end to end (a corridor's work zones, a queue and the next).
            if let share, share < settings.lineOverlap { return .distinct(.place) }
            return .same(score: distance / max(limit, 1) + penalty)
        }
    }

    /// Whether two reports are on one carriageway: either about both ways, the same; else the
    /// places their words name decide, then compass names, then the bearings of feeds' lines
    /// (or of compass directions); else it is not known.
    static func direction(_ a: ReportTraits, _ b: ReportTraits, oppositeAngle: Double) -> TravelDirection.Relation {
        if a.bothWays || b.bothWays { return .same }
        if let byPlaces = a.places.relation(byNamesTo: b.places) { return byPlaces }
        if let byCompass = a.compass.relation(byNamesTo: b.compass) { return byCompass }
        if let x = a.lineBearing ?? a.compass.bearing, let y = b.lineBearing ?? b.compass.bearing {
            return TravelDirection.angle(x, y) > oppositeAngle ? .opposite : .same
        }
        return .unknown
    }

    /// What the rule sees of two reports and what it decides, in words (`trafficgeo events --explain`).
    package func explain(_ a: StoredIncident, _ b: StoredIncident) -> String {
        let ta = ReportTraits(a, settings: settings), tb = ReportTraits(b, settings: settings)
        func describe(_ t: ReportTraits, _ s: StoredIncident) -> String {
            let direction = [t.places.from.map { "from \($0)" }, t.places.towards.map { "towards \($0)" },
                             t.compass.towards.map { "\($0)bound" }, t.lineBearing.map { "line bearing \(Int($0.rounded()))°" },
                             t.bothWays ? "both ways" : nil].compactMap { $0 }
            return """
                \(s.storeID) \(s.incident.source) #\(s.incident.id): \(s.incident.title)
                  road \(t.road ?? "-"), kinds \(t.kinds.map { "\($0)" }.sorted().joined(separator: "+")), \
                valid \(Date(timeIntervalSince1970: t.start)) … \(Date(timeIntervalSince1970: t.end)), \
                direction \(direction.isEmpty ? "unknown" : direction.joined(separator: ", ")), \
                junctions \(t.from ?? "-") → \(t.to ?? "-"), reach \(t.reach.map { "\(Int($0)) m" } ?? "none")
                """
        }
        let verdict: String
        switch self.verdict(ta, tb) {
        case let .same(score): verdict = String(format: "one event (score %.2f; lower is closer)", score)
        case let .distinct(why): verdict = "two events: \(why.rawValue)"
        }
        return describe(ta, a) + "\n" + describe(tb, b) + String(format: "\n  %.0f m apart, stretches %@: ", ReportTraits.distance(ta.shape, tb.shape), "\(Self.stretch(ta, tb))") + verdict
    }

    /// How the stretches two reports name by junctions relate.
    enum Stretch: Equatable {
        /// Both name the same junctions (in the same order where two), or the one junction both name.
        case same
        /// One names some of the junctions the other names, and no other ("at X" and "between W and X").
        case contained
        /// They share a junction at the same end and differ at the other (a queue that grew).
        case overlapping
        /// One ends where the other begins: two stretches of road, end to end.
        case adjacent
        /// Each names the other's junctions the other way round: the opposite carriageway.
        case reversed
        /// Both name junctions, none in common.
        case disjoint
        /// At least one names none.
        case unnamed
    }

    static func stretch(_ a: ReportTraits, _ b: ReportTraits) -> Stretch {
        let na = Array(Set([a.from, a.to].compactMap { $0 })), nb = Array(Set([b.from, b.to].compactMap { $0 }))
        guard !na.isEmpty, !nb.isEmpty else { return .unnamed }
        func same(_ x: String?, _ y: String?) -> Bool { x.flatMap { x in y.map { sameJunction(x, $0) } } ?? false }
        if let af = a.from, let at = a.to, let bf = b.from, let bt = b.to, af != at, bf != bt {
            if same(af, bf), same(at, bt) { return .same }
            if same(af, bt), same(at, bf) { return .reversed }
            if same(af, bf) || same(at, bt) { return .overlapping }
            if same(af, bt) || same(at, bf) { return .adjacent }
            return .disjoint
        }
        let aInB = na.allSatisfy { x in nb.contains { sameJunction(x, $0) } }, bInA = nb.allSatisfy { y in na.contains { sameJunction(y, $0) } }
        if aInB, bInA { return .same }
        if aInB || bInA { return .contained }
        return na.contains { x in nb.contains { sameJunction(x, $0) } } ? .overlapping : .disjoint
    }

    /// Two folded junction names that name one junction: equal, or one of two words or more the
    /// whole words of the other ("tower road" and "exit 286 tower road", "lowell boulevard" and
    /// "exit 271b lowell boulevard"; not "koblenz" and "koblenz nord": a town is not its junction).
    static func sameJunction(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let (short, long) = a.count <= b.count ? (a, b) : (b, a)
        guard short.contains(" ") else { return false }
        return (" " + long + " ").contains(" " + short + " ")
    }
}
