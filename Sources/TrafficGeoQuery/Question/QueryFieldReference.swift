import TrafficGeoModel
import TrafficGeoStore

/// docs/query-fields.md, made from the fields' declarations (`QueryField`): which surfaces take
/// each field, under which name, and what it asks. The file is generated, never edited:
/// `QueryFieldReferenceTests` fails when it differs from this, and writes it with
/// `TRAFFICGEO_UPDATE_DOCS=1` (README, docs/serve.md and docs/live.md point to it instead of
/// keeping lists of their own, which had drifted).
public enum QueryFieldReference {
    public static var markdown: String {
        var lines = [
            "# Query fields",
            "",
            "<!-- Generated from QueryField (Sources/TrafficGeoQuery/Question): do not edit. After changing a field, run",
            "     TRAFFICGEO_UPDATE_DOCS=1 swift test --filter QueryFieldReference -->",
            "",
            "A question is asked the same way on every surface: the command line's options (near, within, bbox, along,",
            "export; watch and changes take the filter), `serve`'s query parameters, a watches file's keys and `serve`'s",
            "CQL2 `filter`. The same text means the same thing on each, and is refused in the same words. A dash: that",
            "surface does not take the field (docs/architecture.md says why).",
            "",
            "| command line | serve | event stream | map page | watches file | CQL2 | what it asks |",
            "|---|---|---|---|---|---|---|",
        ]
        for field in QueryField.allCases {
            let s = field.surfaces
            func name(_ surface: QueryField.Surface, _ taken: QueryField.Surfaces) -> String {
                s.contains(taken) ? "`\(field.name(on: surface))`" : "–"
            }
            let queryables = Queryable.allCases.filter { $0.field == field || (field == .until && $0 == .updated) }.map { "`\($0.rawValue)`" }
            let help = field.help(on: .parameter).replacingOccurrences(of: "|", with: "\\|")
            lines.append("| " + [name(.commandLine, .commandLine), name(.parameter, .items), name(.parameter, .eventStream), name(.parameter, .mapPage),
                                 name(.watchesFile, .watchesFile), queryables.isEmpty ? "–" : queryables.joined(separator: ", "), help].joined(separator: " | ") + " |")
        }
        lines += [
            "",
            "`serve`'s items take its own parameters besides (docs/serve.md): `bbox`, `datetime`, `limit`, `offset`, `nearest`, `filter`,",
            "`geometry`, `f`. The CQL2 queryables without a field (`title`, `id`) are checked on each candidate incident.",
            "",
        ]
        return lines.joined(separator: "\n")
    }
}
