import TrafficGeoModel
import TrafficGeoStore

/// One condition or piece of a question, under the name each surface gives it: the command
/// line's option, `serve`'s query parameter, a watches file's key. The model reads every field's
/// text with one parser (`QueryText`), so the same text means the same thing on all three, and
/// the same mistake gets the same explanation (`QueryTextError`) with only the name spelt the
/// surface's way.
///
/// Which surfaces take a field is declared once, in `surfaces`: serve's items and event
/// parameters, the map page's passed conditions and the watches file's keys are read from it,
/// and `QueryFieldSurfaceTests` asks every surface for every field (and both stores for every
/// filter), failing where one misses a field or takes one it should not. The steps for a new
/// field are in docs/architecture.md ("Adding a query field").
public enum QueryField: String, Sendable, CaseIterable, Hashable {
    // Where.
    case lat, lon, radius, bbox, route, buffer
    // What: the filter.
    case activeAt, since, until, road, category, search, source, minConfidence, precision, minSeverity
    /// At least this long a delay (`--min-delay 10m`): a measure's field (`measure`).
    case minDelay
    /// How long a report without an end stays in effect unheard of (`IncidentFilter.unconfirmedAfter`).
    case unconfirmedAfter
    /// Answer with the reports the feeds gave, each naming its event, instead of the events
    /// (docs/conflation.md): `--reports`, `reports=true`.
    case reports
    // How the answer is ordered.
    case sort

    /// The fields that make up an `IncidentFilter` (`QueryText.filter`): a test walks them and
    /// checks that each one reaches the filter and a watch's question (`WatchQuestion`).
    public static let filterFields: [QueryField] = [.activeAt, .since, .until, .road, .category, .search, .source, .minConfidence, .precision,
                                                    .minSeverity, .unconfirmedAfter, .reports] + measureFields

    /// The fields that ask for at least so much of a measure, each declared by its `measure`.
    public static let measureFields: [QueryField] = allCases.filter { $0.measure != nil }

    /// A field that asks for at least so much of one of an incident's measures (a delay, lanes
    /// restricted): its whole declaration. The filter's condition, both stores' SQL, a watch's
    /// fingerprint, the CQL2 queryable, the OpenAPI parameter, the map page's control and the
    /// docs' tables are made from it; such a field is a case, its `surfaces` and this.
    public var measure: MeasureCondition? {
        switch self {
        case .minDelay: MeasureCondition(.delayMinutes, notation: .minutes, noun: "delay", queryable: "delay", title: "Delay", example: "10m")
        default: nil
        }
    }

    /// The surfaces beyond the query model that take a field.
    public struct Surfaces: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The query commands' options (near, within, bbox, along, export).
        public static let commandLine = Surfaces(rawValue: 1 << 0)
        /// serve's items (and clusters) parameters.
        public static let items = Surfaces(rawValue: 1 << 1)
        /// serve's event stream parameters: conditions on what an event is about and where.
        public static let eventStream = Surfaces(rawValue: 1 << 2)
        /// The conditions the map page passes on to its requests and keeps in its URL.
        public static let mapPage = Surfaces(rawValue: 1 << 3)
        /// A watches file's keys.
        public static let watchesFile = Surfaces(rawValue: 1 << 4)
    }

    /// Where the field is asked. Why some are not: the event stream is about changes as they
    /// happen, not times, routes or an order; the map page keeps its own view (bbox, a clicked
    /// point) and shows events; a watch follows events as they come (no order, no reports); a
    /// feed's source name is a watch's (and a CQL2 filter's) condition only.
    public var surfaces: Surfaces {
        switch self {
        case .lat, .lon, .radius, .bbox: [.commandLine, .items, .eventStream, .watchesFile]
        case .route, .buffer, .since, .until: [.commandLine, .items, .watchesFile]
        case .road, .category, .search, .minConfidence, .precision, .minSeverity, .minDelay: [.commandLine, .items, .eventStream, .mapPage, .watchesFile]
        case .activeAt, .unconfirmedAfter: [.commandLine, .items, .mapPage, .watchesFile]
        case .source: [.watchesFile]
        case .reports: [.commandLine, .items]
        case .sort: [.commandLine, .items, .mapPage]
        }
    }

    /// The fields `surface` takes, in declaration order.
    public static func taken(on surface: Surfaces) -> [QueryField] { allCases.filter { $0.surfaces.contains(surface) } }

    /// Fields that take a list (repeated, or a comma list): any of the values matches.
    public var isList: Bool { self == .road || self == .category || self == .precision }

    /// How each surface spells a field.
    public enum Surface: Sendable {
        /// `--active-at`.
        case commandLine
        /// `active-at=` (the OGC API's `q` for words, `sortby` for the order).
        case parameter
        /// `"active_at"`.
        case watchesFile
    }

    /// The field's name on `surface`.
    public func name(on surface: Surface) -> String {
        switch surface {
        case .commandLine: return "--" + kebab
        case .parameter:
            switch self {
            case .search: return "q"
            case .sort: return "sortby"
            default: return kebab
            }
        case .watchesFile: return kebab.replacingOccurrences(of: "-", with: "_")
        }
    }

    /// The case's name with its words joined by hyphens: `minConfidence` is "min-confidence".
    private var kebab: String {
        rawValue.reduce(into: "") { name, c in
            if c.isUppercase { name += "-" + c.lowercased() } else { name.append(c) }
        }
    }

    /// The field on `surface` named `name`, if it is one.
    public init?(name: String, on surface: Surface) {
        let table: [String: QueryField]
        switch surface {
        case .commandLine: table = Self.byOption
        case .parameter: table = Self.byParameter
        case .watchesFile: table = Self.byKey
        }
        guard let field = table[name] else { return nil }
        self = field
    }

    // Looked up for every parameter of every request `serve` answers: tables made once.
    private static let byOption = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name(on: .commandLine), $0) })
    private static let byParameter = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name(on: .parameter), $0) })
    private static let byKey = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name(on: .watchesFile), $0) })
}

/// Text a question could not take: which field, the text given, and what is wrong with it in
/// words that hold on every surface ("is not a time: use 'now', …"). Each surface names the
/// field its own way (`message(on:)`); the rest is the same everywhere.
public struct QueryTextError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: QueryField
    /// The text as given; nil when the problem is a missing or extra field.
    public var text: String?
    /// What is wrong and what to give instead, without the field's name.
    public var problem: String

    public init(_ field: QueryField, _ text: String?, _ problem: String) {
        self.field = field
        self.text = text
        self.problem = problem
    }

    /// `--since 'banana' is not a time: …` on the command line, `since 'banana' …` elsewhere.
    public func message(on surface: QueryField.Surface) -> String {
        let name = field.name(on: surface)
        guard let text else { return "\(name) \(problem)" }
        return "\(name) '\(text)' \(problem)"
    }

    public var description: String { message(on: .parameter) }
}
