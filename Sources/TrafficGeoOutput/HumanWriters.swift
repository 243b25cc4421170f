import Foundation
import TrafficGeoModel
import TrafficGeoStore

/// `--format annotations`: one card per result, the pin coloured with ANSI colour when asked.
///
///     ● A4 : Koeln - Olpe                                   [red · wrong-way driver]
///       Zwischen AS Wenden und AS Krombach in beiden Richtungen ...
///       50.991660, 7.922760 · 1.2 km E (81°) · updated 2009-04-18T21:58:35Z
final class AnnotationCardWriter: ResultWriter {
    private let sink: TextSink
    private let color: Bool
    /// The terminal's width: subtitles wrap to it, at most `subtitleLines` lines. Nil (a file or
    /// a pipe): the whole subtitle on one line.
    private let width: Int?
    private var count = 0
    static let subtitleLines = 3

    init(sink: TextSink, color: Bool, width: Int? = nil) {
        self.sink = sink
        self.color = color
        self.width = width
    }

    func begin() throws {}

    func write(_ result: QueryResult) throws {
        let a = Annotation(result)
        if count > 0 { try sink.write("\n") }
        count += 1
        let pin = color ? Self.ansi(a.pinColor) + "●" + "\u{1B}[0m" : "●"
        let label = [a.pinColor.rawValue, a.category, a.state == .active ? nil : a.state.rawValue].compactMap { $0 }.joined(separator: " · ")
        try sink.write("\(pin) \(color ? "\u{1B}[1m" + a.title + "\u{1B}[0m" : a.title)  [\(label)]\n")
        if let subtitle = a.subtitle {
            // Every line indented under the title (a summary of several comments has one line each).
            let lines = width.map { Self.wrap(subtitle, width: max(20, $0 - 2), lines: Self.subtitleLines) }
                ?? subtitle.split(whereSeparator: \.isNewline).map(String.init)
            for line in lines { try sink.write("  " + line + "\n") }
        }
        var facts: [String] = []
        if let c = a.coordinate {
            facts.append(String(format: "%.6f, %.6f", c.latitude, c.longitude))
        } else {
            facts.append("no position")
        }
        if let along = a.alongRouteMeters, let d = a.distanceMeters {
            facts.append("\(Annotation.formatDistance(along)) along the route, \(Annotation.formatDistance(d)) off it")
        } else if let d = a.distanceMeters {
            var distance = Annotation.formatDistance(d)
            if let b = a.bearingDegrees { distance += " \(Annotation.compass(b)) (\(Int(b.rounded()))°)" }
            facts.append(distance)
        }
        if let road = a.road { facts.append(road) }
        if let geocoded = Self.geocodedNote(a) { facts.append(geocoded) }
        if let updated = a.updated { facts.append("updated \(Self.readable(updated))") }
        if let ended = a.ended, a.state == .ended { facts.append("ended \(Self.readable(ended))") }
        if let expires = a.expires { facts.append((a.state == .expired ? "expired " : "expires ") + Self.readable(expires)) }
        if let heard = a.lastHeard { facts.append("no end given, not heard of since \(Self.readable(heard)): not in effect now") }
        try sink.write("  " + facts.joined(separator: " · ") + "\n")
        // What an official feed adds: one more line, only when it says any of it.
        let details = Annotation.detailColumns.compactMap { column -> String? in
            guard let value = a.details[column.property] else { return nil }
            switch column.property {
            case "valid_from": return "valid from \(Self.readable(value))"
            case "severity":
                // One scale, and the feed's word where it says it otherwise ("severity high (major)").
                guard let level = a.details[Annotation.severityLevelProperty] else { return "severity \(value)" }
                return level == value.lowercased() ? "severity \(level)" : "severity \(level) (\(value))"
            case Annotation.severityLevelProperty: return nil
            case "delay_minutes": return "delay \(value) min"
            case "lanes_restricted": return "\(value) lanes restricted"
            case "record_types": return value
            case Incident.otherRoadsProperty: return "also on " + value.split(separator: "|").joined(separator: ", ")
            case RecurringSchedule.property: return RecurringSchedule(text: value).map { "on schedule: " + $0.words } ?? "schedule \(value)"
            default: return "\(column.property.replacingOccurrences(of: "_", with: " ")) \(value)"
            }
        }
        if !details.isEmpty { try sink.write("  " + details.joined(separator: " · ") + "\n") }
        // Who reported it, when more than one feed did; a report (`--reports`) names its event.
        if a.reports.count > 1 {
            var sources: [String] = []
            for r in a.reports where !sources.contains(r.source) { sources.append(r.source) }
            try sink.write("  \(a.reports.count) reports: " + sources.joined(separator: ", ") + "\n")
        } else if a.reports.isEmpty {
            try sink.write("  report of event \(a.event) · \(a.source)\n")
        }
    }

    func end() throws {
        if count == 0 { try sink.write("No incidents found.\n") }
    }

    /// A feed that gives only a date ("2025-05-19") is stored at midnight UTC: a card shows the
    /// date alone rather than a time nobody gave. (Machine formats keep the full timestamp.)
    static func readable(_ timestamp: String) -> String {
        timestamp.hasSuffix("T00:00:00Z") ? String(timestamp.dropLast(10)) : timestamp
    }

    /// "geocoded: town, confidence 0.40" — a geocoded position says how far to trust it.
    static func geocodedNote(_ a: Annotation) -> String? {
        guard a.positionSource == "geocoder" else { return nil }
        var parts = [a.precision ?? "?"]
        if let c = a.confidence { parts.append(String(format: "confidence %.2f", c)) }
        return "geocoded: " + parts.joined(separator: ", ")
    }

    static func ansi(_ pin: PinColor) -> String {
        switch pin {
        case .red: return "\u{1B}[31m"
        case .green: return "\u{1B}[32m"
        case .purple: return "\u{1B}[35m"
        }
    }

    static func truncate(_ s: String, _ n: Int) -> String { s.count <= n ? s : String(s.prefix(n - 1)) + "…" }

    /// Words wrapped to `width` characters, at most `lines` lines; the last ends in "…" when
    /// text was left out. A word longer than a line is cut.
    static func wrap(_ text: String, width: Int, lines: Int) -> [String] {
        var all: [String] = []
        var line = ""
        for word in text.split(whereSeparator: { $0 == " " || $0.isNewline }) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                all.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { all.append(line) }
        var shown = all.prefix(lines).map { truncate($0, width) }
        if all.count > lines, let last = shown.last {
            shown[shown.count - 1] = last.count < width ? last + "…" : String(last.dropLast()) + "…"
        }
        return shown
    }
}

/// `--format table`: aligned columns for a terminal.
final class TableWriter: ResultWriter {
    private let sink: TextSink
    private var rows: [[String]] = []
    private static let header = ["DIST", "BRG", "PIN", "ROAD", "CATEGORY", "STATE", "SEVERITY", "EVENT", "FROM", "LAT", "LON", "PRECISION", "TITLE"]
    /// Along a route (`along`) the first two columns say how far along it and how far off it.
    private static let alongHeader = ["ALONG", "OFF"] + header.dropFirst(2)
    private var isAlongRoute = false

    init(sink: TextSink) { self.sink = sink }

    func begin() throws {}

    func write(_ result: QueryResult) throws {
        let a = Annotation(result)
        if a.alongRouteMeters != nil { isAlongRoute = true }
        rows.append([
            a.alongRouteMeters.map(Annotation.formatDistance) ?? a.distanceMeters.map(Annotation.formatDistance) ?? "",
            a.alongRouteMeters != nil ? a.distanceMeters.map(Annotation.formatDistance) ?? "" : a.bearingDegrees.map { Annotation.compass($0) } ?? "",
            a.pinColor.rawValue, a.road ?? "", a.category ?? "", a.state.rawValue, a.details[Annotation.severityLevelProperty] ?? "",
            // The event's id; an event says how many reports it holds, a report (--reports) its source.
            String(a.event), a.reports.isEmpty ? AnnotationCardWriter.truncate(a.source, 32) : a.reports.count == 1 ? "1 report" : "\(a.reports.count) reports",
            a.coordinate.map { String(format: "%.5f", $0.latitude) } ?? "",
            a.coordinate.map { String(format: "%.5f", $0.longitude) } ?? "",
            // Feed positions are as given; a geocoded one shows how it was placed and how surely.
            a.positionSource == "geocoder" ? (a.precision ?? "?") + (a.confidence.map { String(format: " %.2f", $0) } ?? "") : a.positionSource ?? "",
            AnnotationCardWriter.truncate(a.title, 60),
        ])
        // A table needs its column widths: it holds rows, so flush in blocks for big results.
        if rows.count >= 1000 { try emit() }
    }

    func end() throws { try emit() }

    private func emit() throws {
        let all = [isAlongRoute ? Self.alongHeader : Self.header] + rows
        let widths = (0..<Self.header.count).map { c in all.map { $0[c].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { c, v in c == row.count - 1 ? v : v.padding(toLength: widths[c], withPad: " ", startingAt: 0) }
            try sink.write(cells.joined(separator: "  ") + "\n")
        }
        rows.removeAll()
    }
}
