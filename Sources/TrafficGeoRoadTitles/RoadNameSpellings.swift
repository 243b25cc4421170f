/// The spellings of a road's name that feeds write for the same road: a street type written out
/// or abbreviated ("Sprain Brook State Parkway" = "Sprain Brook State Pkwy", "PARK AVE" = "Park
/// Avenue", "Hauptstr." = "Hauptstraße"), so that `--road` finds a road by the name a person
/// types whichever the feed used.
///
///     RoadNameSpellings.of("Park Avenue")   // ["Park Avenue", "Park ave", "Park ave.", "Park av", …]
///
/// The abbreviations are the common ones of the postal standards: USPS Publication 28's street
/// suffixes (appendix C1) for English, La Poste's for French (av, bd, rte, ch), Spain's (avda,
/// ctra) and the German "Str." — the words a road's name ends or begins with. Only whole words
/// change; a name without such a word has no other spelling. Compared as the stores compare
/// names (ASCII letters in any case), so only the word's letters matter.
public enum RoadNameSpellings {
    /// Each group is one word's spellings, the written-out word first.
    static let groups: [[String]] = [
        ["avenue", "ave", "av"], ["boulevard", "blvd", "bd"], ["street", "st"], ["road", "rd"], ["drive", "dr"],
        ["lane", "ln"], ["parkway", "pkwy", "pky"], ["expressway", "expy", "expwy"], ["freeway", "fwy"],
        ["highway", "hwy"], ["turnpike", "tpke", "tpk"], ["place", "pl"], ["court", "ct"], ["circle", "cir"],
        ["terrace", "ter"], ["square", "sq"], ["bridge", "brg"], ["tunnel", "tunl"], ["route", "rte"],
        ["crescent", "cres"], ["causeway", "cswy"], ["motorway", "mwy"], ["chemin", "ch"],
        ["avenida", "avda"], ["carretera", "ctra"], ["straße", "str"], ["strasse", "str"],
        ["throughway", "thruway", "trwy"], ["trail", "trl"], ["way"], ["pike"], ["rue"], ["calle"],
        ["north", "n"], ["south", "s"], ["east", "e"], ["west", "w"],
    ]

    /// The groups of street types (all but the compass points, which say no street).
    private static let streetTypes: Set<String> = Set(groups.filter { !["north", "south", "east", "west"].contains($0[0]) }.joined())

    /// Whether a name says it is a street's: a street type beside another word ("Merritt
    /// Parkway", "Park Ave", "Bd Haussmann", "Rue de Rivoli"), or a German compound ending in
    /// one ("Schillerstraße", "Hauptstr."). A type alone ("motorway") names none.
    public static func namesAStreet(_ name: String) -> Bool {
        let words = name.split(separator: " ").map { ($0.hasSuffix(".") ? $0.dropLast() : $0).lowercased() }
        if words.count > 1, words.contains(where: streetTypes.contains) { return true }
        return words.contains { word in ["straße", "strasse", "str"].contains { word.hasSuffix($0) && word.count > $0.count } }
    }

    /// Lower-case word (without a final ".") → the group it is in.
    private static let groupOf: [String: [[String]].Index] = {
        var index: [String: Int] = [:]
        for (i, group) in groups.enumerated() { for word in group where index[word] == nil { index[word] = i } }
        return index
    }()

    /// At most this many spellings of one name (a name with several such words has many).
    static let limit = 16

    /// The name itself first, then its other spellings: each word of a group written as each of
    /// its spellings, abbreviations with and without their dot; German compounds ending in
    /// "straße" also as "str.".
    public static func of(_ name: String) -> [String] {
        let words = name.split(separator: " ").map(String.init)
        var choices: [[String]] = words.map { word in
            let bare = word.hasSuffix(".") ? String(word.dropLast()) : word
            let lower = bare.lowercased()
            if let g = groupOf[lower] {
                return [word] + groups[g].flatMap { $0 == groups[g][0] ? [$0] : [$0, $0 + "."] }.filter { $0 != word.lowercased() }
            }
            // "Hauptstraße" = "Hauptstr." (and the other way round).
            for long in ["straße", "strasse"] where lower.hasSuffix(long) && lower.count > long.count {
                let stem = bare.dropLast(long.count)
                return [word, stem + "str.", stem + "str"]
            }
            if lower.hasSuffix("str"), lower.count > 3 {
                let stem = bare.dropLast(3)
                return [word, stem + "straße", stem + "strasse", word == bare ? bare + "." : bare]
            }
            return [word]
        }
        if choices.allSatisfy({ $0.count == 1 }) { return [name] }
        // Cap the product: the first word with choices keeps them all, the others as many as fit.
        var spellings: [[String]] = [[]]
        for i in choices.indices {
            if spellings.count * choices[i].count > limit { choices[i] = Array(choices[i].prefix(max(1, limit / spellings.count))) }
            spellings = spellings.flatMap { prefix in choices[i].map { prefix + [$0] } }
        }
        var seen: Set<String> = []
        return spellings.map { $0.joined(separator: " ") }.filter { seen.insert($0.lowercased()).inserted }
    }
}
