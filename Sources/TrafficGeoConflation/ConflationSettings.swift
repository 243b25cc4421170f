import Foundation
import TrafficGeoSupport

/// The thresholds of the rule that decides when two reports are one event (`SameEventRule`),
/// with the defaults measured on real warnings (docs/conflation.md says what each is for and
/// what it costs). A store keeps its settings (`IncidentStore.conflationSettings`), so that every
/// process writing to it merges alike: `trafficgeo events --set feed-reach=800m`.
public struct ConflationSettings: Sendable, Equatable, Codable {
    /// Whether reports are merged into events at all; off, every report is an event of its own.
    public var enabled = true
    /// How far (metres) a position a feed gave may lie from where the event is: two such
    /// reports are one event up to twice this apart (between points, or the lines of their
    /// stretches).
    public var feedReach = 1_000.0
    /// The same for a position a geocoder placed at a named junction: a junction is known, not
    /// the metre along the road.
    public var junctionReach = 2_500.0
    /// The same for a position placed at a town (or an address).
    public var townReach = 8_000.0
    /// Two reports that name the same stretch of road (the same junctions, the same way) are one
    /// event up to this far apart: a geocoder may have placed one at a namesake.
    public var namedStretchReach = 15_000.0
    /// How long (seconds) two validities may be apart and still count as overlapping: feeds
    /// publish minutes apart.
    public var timeSlack = 1_800.0
    /// How long a report without an end is taken to last, for traffic that changes by the hour
    /// (queues, accidents, obstacles, hazards, weather).
    public var openEndShort = 6 * 3_600.0
    /// The same for what lasts days (roadworks, closures, restrictions, public events).
    public var openEndLong = 30 * 86_400.0
    /// Two travel directions that differ by more than this many degrees are opposite carriageways.
    public var oppositeAngle = 90.0
    /// A line at least this long (metres) says the direction of travel by the order of its points.
    public var directedLineLength = 150.0
    /// Two stretches by kilometre posts ("km 434.27 --> km 431.83") this far apart (kilometres) or
    /// closer are one stretch.
    public var kilometreSlack = 0.5
    /// Two reports that are both lines are one event only when at least this share of the
    /// shorter runs along the other (within half their reaches): stretches that touch end to
    /// end are two.
    public var lineOverlap = 0.5

    public init() {}

    public static let defaults = ConflationSettings()

    /// `kilometreSlack` in metres, as the command line sets it (`kilometre-slack=500m`).
    var kilometreSlackMetres: Double {
        get { kilometreSlack * 1000 }
        set { kilometreSlack = newValue / 1000 }
    }

    // MARK: - As text

    /// A setting's name on the command line, its unit and how it is read and written.
    /// (Unchecked: a key path to a stored property is an immutable value.)
    public struct Setting: @unchecked Sendable {
        public let name: String
        public let unit: Unit
        public let help: String
        let keyPath: WritableKeyPath<ConflationSettings, Double>?

        public enum Unit: Sendable {
            case metres, seconds, degrees, share, onOff

            var example: String {
                switch self {
                case .metres: "a distance with its unit (800m, 2km, 1mi)"
                case .seconds: "a length of time with its unit (45m, 6h, 30d)"
                case .degrees: "a number of degrees (90)"
                case .share: "a share from 0 to 1 (0.5)"
                case .onOff: "on or off"
                }
            }
        }
    }

    /// Every setting, in the order docs/conflation.md explains them.
    public static let settings: [Setting] = [
        Setting(name: "merging", unit: .onOff, help: "merge reports into events (on) or keep every report an event of its own (off)", keyPath: nil),
        Setting(name: "feed-reach", unit: .metres, help: "how far a position a feed gave may lie from the event", keyPath: \.feedReach),
        Setting(name: "junction-reach", unit: .metres, help: "the same for a position geocoded to a junction", keyPath: \.junctionReach),
        Setting(name: "town-reach", unit: .metres, help: "the same for a position geocoded to a town or an address", keyPath: \.townReach),
        Setting(name: "named-stretch-reach", unit: .metres, help: "how far apart two reports naming the same junctions may be", keyPath: \.namedStretchReach),
        Setting(name: "time-slack", unit: .seconds, help: "how far apart two validities may be and still overlap", keyPath: \.timeSlack),
        Setting(name: "open-end-short", unit: .seconds, help: "how long a queue, accident or hazard without an end lasts", keyPath: \.openEndShort),
        Setting(name: "open-end-long", unit: .seconds, help: "how long roadworks, a closure or a restriction without an end lasts", keyPath: \.openEndLong),
        Setting(name: "opposite-angle", unit: .degrees, help: "directions further apart than this are opposite carriageways", keyPath: \.oppositeAngle),
        Setting(name: "directed-line-length", unit: .metres, help: "a line this long says its direction by the order of its points", keyPath: \.directedLineLength),
        Setting(name: "kilometre-slack", unit: .metres, help: "how far apart two stretches by kilometre posts may be and still be one", keyPath: \.kilometreSlackMetres),
        Setting(name: "line-overlap", unit: .share, help: "how much of the shorter of two lines must run along the other", keyPath: \.lineOverlap),
    ]

    /// The value of setting `name` as a number (merging: 1 or 0).
    public func value(of setting: Setting) -> Double {
        setting.keyPath.map { self[keyPath: $0] } ?? (enabled ? 1 : 0)
    }

    /// Sets setting `name` to `value` (in its unit; merging: nonzero for on).
    public mutating func set(_ setting: Setting, to value: Double) {
        if let keyPath = setting.keyPath { self[keyPath: keyPath] = value } else { enabled = value != 0 }
    }

    public static func setting(named name: String) -> Setting? {
        settings.first { $0.name == name.lowercased() }
    }

    /// Sets one setting from `name=value` text, the value with its unit (`feed-reach=800m`,
    /// `time-slack=45m`, `opposite-angle=100`, `merging=off`); what is wrong, in words, otherwise.
    public mutating func set(_ assignment: String) throws(SettingError) {
        let parts = assignment.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let setting = Self.setting(named: parts[0]) else {
            throw SettingError(text: assignment, problem: "is not NAME=VALUE with one of: \(Self.settings.map(\.name).joined(separator: ", "))")
        }
        let text = parts[1]
        let value: Double?
        switch setting.unit {
        case .metres: value = DistanceExpression.parse(text)
        case .seconds:
            // A length of time carries its unit, as a distance does: a bare number is refused.
            value = text.last.map(\.isLetter) == true ? DurationExpression.parse(text) : nil
        case .degrees: value = PlainNumber.parse(text.hasSuffix("°") ? String(text.dropLast()) : text)
        case .share: value = PlainNumber.parse(text)
        case .onOff:
            switch text.lowercased() {
            case "on", "true", "yes", "1": value = 1
            case "off", "false", "no", "0": value = 0
            default: value = nil
            }
        }
        guard let value else { throw SettingError(text: assignment, problem: "has a value that is not \(setting.unit.example)") }
        set(setting, to: value)
        if let problem { throw SettingError(text: assignment, problem: "is refused: \(problem)") }
    }

    /// A setting's value as text with its unit (`1000m`, `1800s`, `90°`, `on`).
    public func text(of setting: Setting) -> String {
        let v = value(of: setting)
        let number = v == v.rounded() ? String(Int(v)) : String(v)
        switch setting.unit {
        case .metres: return number + "m"
        case .seconds: return number + "s"
        case .degrees: return number + "°"
        case .share: return String(v)
        case .onOff: return v != 0 ? "on" : "off"
        }
    }

    /// A setting that cannot be taken: the text given and what is wrong with it.
    public struct SettingError: Error, Sendable, CustomStringConvertible {
        public var text: String
        public var problem: String
        public var description: String { "'\(text)' \(problem)" }
    }

    /// Whether the values make sense: distances and times not negative, the angle 0…180.
    public var problem: String? {
        for s in Self.settings where s.keyPath != nil {
            let v = value(of: s)
            if !v.isFinite || v < 0 { return "\(s.name) must not be negative" }
            if s.unit == .degrees, v > 180 { return "\(s.name) is an angle of 0 to 180 degrees" }
            if s.unit == .share, v > 1 { return "\(s.name) is a share from 0 to 1" }
        }
        return nil
    }

    // MARK: - As a store keeps them

    /// JSON text (the store's `store_info`).
    public var storedText: String {
        let data = (try? JSONEncoder.sortedKeys.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The settings in `text`; a missing key keeps its default (settings added later), an
    /// unreadable text gives the defaults.
    public init(storedText text: String?) {
        self.init()
        guard let text, let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return }
        if let on = object["enabled"] as? Bool { enabled = on }
        let mirror: [String: WritableKeyPath<ConflationSettings, Double>] = [
            "feedReach": \.feedReach, "junctionReach": \.junctionReach, "townReach": \.townReach, "namedStretchReach": \.namedStretchReach,
            "timeSlack": \.timeSlack, "openEndShort": \.openEndShort, "openEndLong": \.openEndLong, "oppositeAngle": \.oppositeAngle,
            "directedLineLength": \.directedLineLength, "lineOverlap": \.lineOverlap, "kilometreSlack": \.kilometreSlack,
        ]
        for (key, path) in mirror {
            if let number = object[key] as? NSNumber { self[keyPath: path] = number.doubleValue }
        }
    }
}

private extension JSONEncoder {
    static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
