import ArgumentParser
import Foundation
import TrafficGeo
import TrafficGeoRoadTitles

struct ParseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Show how a traffic message's title and text are read (road, route, junctions, offsets, category).",
        discussion: """
            Without arguments, reads lines "TITLE<TAB>TEXT" from stdin and prints one JSON object per line.

              trafficgeo parse "A4 : Koeln - Olpe" "Zwischen AS Wenden und AS Krombach in beiden Richtungen"
            """)

    @Argument(help: "The title, e.g. \"A4 | Krombach - Wenden\".") var title: String?
    @Argument(help: "The message text.") var text: String?

    func run() async throws {
        if let title {
            print(Self.json(TrafficMessageParser.parse(title: title, text: text)))
            return
        }
        while let line = readLine() {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            print(Self.json(TrafficMessageParser.parse(title: String(parts[0]), text: parts.count > 1 ? String(parts[1]) : nil)))
        }
    }

    static func json(_ m: TrafficMessage) -> String {
        func mention(_ j: JunctionMention?) -> Any {
            guard let j else { return NSNull() }
            var o: [String: Any] = ["name": j.name, "kind": j.kind.rawValue, "relation": j.relation.rawValue]
            if let km = j.offsetKm { o["offsetKm"] = km }
            return o
        }
        let object: [String: Any] = [
            "road": m.road ?? NSNull(), "routeEnds": m.routeEnds, "directed": m.isDirected, "bothDirections": m.bothDirections,
            "from": mention(m.from), "to": mention(m.to), "comingFrom": m.comingFrom ?? NSNull(),
            "kilometrePosts": m.kilometrePosts, "category": m.category?.rawValue ?? NSNull(),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
