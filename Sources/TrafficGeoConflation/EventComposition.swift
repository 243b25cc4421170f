import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// An event's fields, built from its reports (docs/conflation.md):
///   - the position, segment, title and words of the best placed report (a feed's coordinates
///     over a geocoded guess, the more precise guess, a segment over a point; ties: the earlier
///     report);
///   - the most specific kind across reports;
///   - the time from the earliest start to the latest end; ended only when every report has;
///     a recurring schedule only when every report has one (their rules together);
///   - severity, delay and lanes restricted: the worst reported;
///   - the source and feed id of its first report, which the event keeps while it lives.
package enum EventComposition {
    package struct Composed: Sendable {
        package var incident: Incident
        package var ended: Date?
        package var reports: [ReportReference]
    }

    /// The event of `members` (in the order they joined: the first one first; at least one).
    package static func compose(_ members: [StoredIncident]) -> Composed {
        precondition(!members.isEmpty, "an event has reports")
        let lead = members.indices.max { placement(members[$0]) < placement(members[$1]) || (placement(members[$0]) == placement(members[$1]) && $0 > $1) }!
        var incident = members[lead].incident
        let first = members[0].incident
        incident.source = first.source
        incident.id = first.id
        incident.endedAt = nil
        incident.road = incident.road ?? members.lazy.compactMap(\.incident.road).first
        incident.category = members.compactMap(\.incident.category).min { specificity($0) < specificity($1) }
        incident.updated = members.compactMap(\.incident.updated).max()

        // Over for each report: when it ended or expires, whichever is first; the event is over
        // when the last of them is, and ended when every report has.
        let overs = members.map { m in [m.ended, m.incident.expires].compactMap { $0 }.min() }
        incident.expires = overs.contains(where: { $0 == nil }) ? nil : overs.compactMap { $0 }.max()
        let ended: Date? = members.allSatisfy { $0.ended != nil } ? members.compactMap(\.ended).max() : nil

        var properties = incident.properties
        for m in members {
            for (key, value) in m.incident.properties where properties[key] == nil { properties[key] = value }
        }
        let starts = members.compactMap { m in m.incident.properties["valid_from"].flatMap(TimestampParser.parse) ?? m.incident.updated }
        if let start = starts.min() { properties["valid_from"] = TimestampParser.format(start) }
        if let worst = members.compactMap({ $0.incident.properties["severity"].flatMap(Severity.init(word:)) }).max() {
            properties["severity"] = worst.name
        }
        // The most any report says, read as the stores read it ("15-20" is 20).
        for measure in IncidentMeasure.allCases {
            if let most = members.compactMap({ measure.value(of: $0.incident) }).max() {
                properties[measure.property] = most == most.rounded() && most < 1e15 ? String(Int(most)) : String(most)
            }
        }
        properties.removeValue(forKey: Incident.snapshotPartProperty)
        // In effect while any report is: with a recurring schedule on every report, their rules
        // together, when they keep time alike and except the same days; otherwise none (a report
        // without one is in effect all day, and so is the event).
        if Set(members.map { $0.incident.properties[RecurringSchedule.property] }).count > 1 {
            properties[RecurringSchedule.property] = EventComposition.union(members.map(\.incident.schedule))?.text
        }
        incident.properties = properties
        return Composed(incident: incident, ended: ended, reports: members.map(ReportReference.init))
    }

    /// The schedule that holds when any of `schedules` does, if one can say it: all present, in
    /// the same zone and offset, with the same exceptions.
    static func union(_ schedules: [RecurringSchedule?]) -> RecurringSchedule? {
        let all = schedules.compactMap { $0 }
        guard all.count == schedules.count, let first = all.first,
              all.allSatisfy({ $0.zone == first.zone && $0.offsetMinutes == first.offsetMinutes && $0.exceptions == first.exceptions }) else { return nil }
        return RecurringSchedule(zone: first.zone, offsetMinutes: first.offsetMinutes, rules: all.flatMap(\.rules), exceptions: first.exceptions)
    }

    /// An event's reports in the order it lists them, then those it does not list yet (they
    /// joined in this run), earliest first: the order `compose` takes them in.
    package static func joiningOrder(_ rows: [StoredIncident], listed: [ReportReference]) -> [StoredIncident] {
        let order = Dictionary(listed.enumerated().map { ($0.element.storeID, $0.offset) }, uniquingKeysWith: { a, _ in a })
        return rows.sorted { a, b in
            (order[a.storeID] ?? Int.max, a.firstSeen, a.storeID) < (order[b.storeID] ?? Int.max, b.firstSeen, b.storeID)
        }
    }

    /// How well a report is placed: feed over geocoder, junction over town, a line over a point.
    static func placement(_ stored: StoredIncident) -> Int {
        let i = stored.incident
        guard i.position != nil else { return 0 }
        let source: Int
        switch i.positionSource?.kind {
        case .feed?, .weblink?: source = 4
        case .geocoder?:
            switch i.positionSource?.precision {
            case .junction?: source = 3
            case .address?, .town?: source = 2
            default: source = 1
            }
        case nil: source = 1
        }
        return source * 2 + ((i.segment?.count ?? 0) >= 2 ? 1 : 0)
    }

    /// The more specific kind first: a wrong-way driver or an accident says more than a hazard,
    /// stationary traffic more than slow traffic, any kind more than "other".
    static func specificity(_ category: IncidentCategory) -> Int {
        switch category {
        case .wrongWayDriver: 0
        case .accident: 1
        case .closure: 2
        case .obstacle: 3
        case .standstill: 4
        case .queue: 5
        case .slowTraffic: 6
        case .roadworks: 7
        case .detour: 8
        case .restriction: 9
        case .weather: 10
        case .event: 11
        case .danger: 12
        case .other: 13
        }
    }
}
