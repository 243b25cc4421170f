import TrafficGeoModel

/// What a German traffic message says about where it happens, parsed from its title and text.
///
///     let m = TrafficMessageParser.parse(title: "A4 : Koeln - Olpe",
///                                        text: "Zwischen AS Wenden und AS Krombach in beiden Richtungen Falschfahrer")
///     m.road            // "A4"
///     m.routeEnds       // ["Koeln", "Olpe"]
///     m.from?.name      // "Wenden"
///     m.bothDirections  // true
public struct TrafficMessage: Sendable, Equatable {
    /// Normalised road reference (A4, B54).
    public var road: String?
    /// The places that name the road's direction or route: "Köln -> Olpe" gives [Köln, Olpe] with
    /// `isDirected`; a title "A4 : Koeln - Olpe" gives [Koeln, Olpe] undirected.
    public var routeEnds: [String] = []
    /// True when the route ends are in the order of travel ("X -> Y").
    public var isDirected = false
    public var bothDirections = false
    /// The first junction the message names (the one the incident lies after, in travel direction).
    public var from: JunctionMention?
    /// The second junction ("... und 0.3 km vor AS Y").
    public var to: JunctionMention?
    /// "aus Richtung X": the junction or place traffic comes from (before `from`).
    public var comingFrom: String?
    /// "km 9.14 --> km 0.43": kilometre posts on the road.
    public var kilometrePosts: [Double] = []
    public var category: IncidentCategory?

    public init() {}
}

/// A junction named in a message: "2.0 km hinter AS Wenden", "AK Köln-Ost", "Dreieck Bayreuth/Kulmbach".
public struct JunctionMention: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Anschlussstelle / Ausfahrt (exit).
        case exit = "AS"
        /// Autobahnkreuz ("Kreuz X").
        case interchange = "AK"
        /// Autobahndreieck ("Dreieck X").
        case triangle = "AD"
        /// A named point without a type word (a bridge, a rest area, a tunnel, a junction the message did not classify).
        case unspecified = ""
    }

    public enum Relation: String, Sendable {
        /// "hinter X": past X in the direction of travel.
        case after
        /// "vor X": before reaching X.
        case before
        /// "bei X", "an der AS X", or no offset.
        case at
    }

    public var name: String
    public var kind: Kind
    /// Distance from the junction along the road, in kilometres.
    public var offsetKm: Double?
    public var relation: Relation

    public init(name: String, kind: Kind, offsetKm: Double? = nil, relation: Relation = .at) {
        self.name = name
        self.kind = kind
        self.offsetKm = offsetKm
        self.relation = relation
    }

    /// The name as OpenStreetMap tends to spell a junction: "Kreuz X", "Dreieck X", plain X for exits.
    public var osmStyleName: String {
        switch kind {
        case .interchange: return name.hasPrefix("Kreuz") || name.hasSuffix("Kreuz") ? name : "Kreuz \(name)"
        case .triangle: return name.hasPrefix("Dreieck") || name.hasSuffix("Dreieck") ? name : "Dreieck \(name)"
        case .exit, .unspecified: return name
        }
    }
}
