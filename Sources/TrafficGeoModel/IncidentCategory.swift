import TrafficGeoSupport

/// What kind of event an incident is; decides the pin colour.
public enum IncidentCategory: String, Sendable, CaseIterable, Codable {
    case wrongWayDriver = "wrong-way driver"
    case accident
    case closure
    case obstacle
    case danger
    case roadworks
    case queue
    case slowTraffic = "slow traffic"
    case standstill
    case weather
    /// Traffic is sent another way (DATEX II ReroutingManagement, a WZDx detour).
    case detour
    /// A speed limit, lane or access restriction, a management measure that is not a closure.
    case restriction
    /// A public event (a match, a fair, a demonstration).
    case event
    case other

    /// The map-pin colour (docs/architecture.md, annotations): red = danger, purple = roadworks, green = the rest.
    public var pinColor: PinColor {
        switch self {
        case .wrongWayDriver, .accident, .closure, .obstacle, .danger: return .red
        case .roadworks: return .purple
        case .queue, .slowTraffic, .standstill, .weather, .detour, .restriction, .event, .other: return .green
        }
    }

    /// Accepts the raw value, the Swift case name, or a loose spelling ("wrong-way-driver", "Roadworks").
    /// The German words of traffic messages too ("Unfall", "Baustelle", "Stau"), and the start of
    /// a name when only one category begins so ("wrong-way").
    public init?(loose text: String) {
        let key = TextFolding.fold(text).filter { $0.isLetter }
        guard !key.isEmpty else { return nil }
        if let match = IncidentCategory.allCases.first(where: { $0.rawValue.filter(\.isLetter) == key || "\($0)".lowercased() == key })
            ?? Self.germanNames[key] {
            self = match
            return
        }
        let starting = IncidentCategory.allCases.filter { $0.rawValue.filter(\.isLetter).hasPrefix(key) }
        guard key.count >= 3, starting.count == 1 else { return nil }
        self = starting[0]
    }

    /// German names (folded, letters only) as the feeds and their readers say them.
    static let germanNames: [String: IncidentCategory] = [
        "falschfahrer": .wrongWayDriver, "geisterfahrer": .wrongWayDriver, "unfall": .accident, "sperrung": .closure,
        "vollsperrung": .closure, "gesperrt": .closure, "hindernis": .obstacle, "gegenstaende": .obstacle, "gefahr": .danger,
        "baustelle": .roadworks, "bauarbeiten": .roadworks, "stau": .queue, "stockenderverkehr": .queue,
        "langsamerverkehr": .slowTraffic, "stillstand": .standstill, "wetter": .weather, "glaette": .weather, "nebel": .weather,
        "umleitung": .detour, "beschraenkung": .restriction, "veranstaltung": .event, "sonstiges": .other,
    ]
}

/// The three standard map-pin colours.
public enum PinColor: String, Sendable, Codable {
    case red, green, purple

    /// The simplestyle-spec `marker-color` value. Chosen so that the three stay apart for
    /// colour-blind readers too (PinPaletteTests simulates protanopia, deuteranopia and
    /// tritanopia): the former #d62728 red and #2ca02c green were 7 apart (CIE ΔE) for a
    /// deuteranope, the same colour; these are at least 47 apart for each.
    public var hex: String {
        switch self {
        case .red: return "#e62517"
        case .green: return "#5ce69c"
        case .purple: return "#775ba6"
        }
    }
}
