import TrafficGeoSupport

/// Ways a junction or place name from a traffic message may be spelled in a gazetteer, best first.
///
///     NameVariants.of("Wolfsburg-Mörse-Süd")     // ["Wolfsburg-Mörse-Süd", "Wolfsburg-Mörse", "Wolfsburg"]
///     NameVariants.of("Bad Honnef/Linz")         // ["Bad Honnef/Linz", "Bad Honnef", "Linz"]
///     NameVariants.of("Kirchheim (Teck)-Ost")    // ["Kirchheim (Teck)-Ost", "Kirchheim (Teck)", "Kirchheim"]
///
/// Each variant carries a quality (1 = the name as written) that lowers confidence in what it finds.
public enum NameVariants {
    static let directionSuffixes = ["nord", "sued", "süd", "ost", "west", "mitte", "zentrum", "nordost", "nordwest", "suedost",
                                    "südost", "suedwest", "südwest", "city", "flughafen", "hafen", "kreuz", "dreieck"]
    static let typePrefixes = ["Kreuz ", "Dreieck ", "Autobahnkreuz ", "Autobahndreieck ", "Anschlussstelle ", "AS ", "AK ", "AD ",
                               "Raststätte ", "Rastplatz ", "Parkplatz ", "Tank- und Rastanlage ", "Anschluss "]

    public static func of(_ name: String) -> [(name: String, quality: Double)] {
        var out: [(String, Double)] = []
        func add(_ s: String, _ q: Double) {
            let t = s.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: "-/,")))
            guard t.count >= 2, !out.contains(where: { TextFolding.fold($0.0) == TextFolding.fold(t) }) else { return }
            out.append((t, q))
        }
        add(name, 1)
        var base = name
        for prefix in typePrefixes where base.hasPrefix(prefix) {
            base = String(base.dropFirst(prefix.count))
            add(base, 0.95)
        }
        // "Rüsselsheimer Dreieck", "Schönefelder Kreuz": the adjective form of the place.
        for suffix in [" Dreieck", " Kreuz", " Knick", " Brücke", " Tunnel"] where base.hasSuffix(suffix) {
            var stem = String(base.dropLast(suffix.count))
            add(stem, 0.8)
            if stem.hasSuffix("er") { stem.removeLast(2); add(stem, 0.75) }
        }
        // "Kirchheim (Teck)-Ost" → "Kirchheim (Teck)" → "Kirchheim"
        var current = base
        while let last = current.lastIndex(where: { $0 == "-" || $0 == " " }),
              directionSuffixes.contains(TextFolding.fold(String(current[current.index(after: last)...]))) {
            current = String(current[..<last])
            add(current, 0.85)
        }
        if let open = current.firstIndex(of: "(") {
            add(String(current[..<open]), 0.8)
        }
        // "Bad Honnef/Linz", "Stindertal / Stinderhof": each part.
        if current.contains("/") {
            for part in current.split(separator: "/") { add(String(part), 0.75) }
        }
        // "Wolfsburg-Mörse" → "Wolfsburg", "Frankfurt am Main-Flughafen" → "Frankfurt am Main"
        var hyphenated = current
        while let dash = hyphenated.lastIndex(of: "-") {
            hyphenated = String(hyphenated[..<dash])
            add(hyphenated, 0.7)
        }
        if current.hasPrefix("Am ") || current.hasPrefix("Im ") { add(String(current.dropFirst(3)), 0.5) }
        return out
    }
}
