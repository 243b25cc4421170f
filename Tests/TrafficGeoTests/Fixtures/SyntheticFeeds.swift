import Foundation
import TrafficGeoTestSupport

/// Large feeds made on the fly in the freiefahrt Atom shape, positions in the weblinks.
enum SyntheticFeeds {
    static func atom(count: Int, seed: UInt64 = 1, idPrefix: String = "syn") -> String {
        var generator = SplitMix64(seed: seed)
        var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n"
        text.reserveCapacity(count * 520)
        for i in 0..<count {
            let lat = Double.random(in: 47.3...55.0, using: &generator)
            let lon = Double.random(in: 5.9...15.0, using: &generator)
            let road = Int.random(in: 1...99, using: &generator)
            text += """
                <entry><updated>2025-05-19T04:06:00Z</updated><expires>2025-05-19T06:06:00Z</expires>
                <title>A\(road) : Koeln - Olpe</title><id>\(idPrefix)-\(i)</id>
                <link type="text/html" rel="alternate" href="https://traffic.example/?id=\(idPrefix)-\(i)&amp;lat=\(String(format: "%.6f", lat))&amp;lon=\(String(format: "%.6f", lon))"/>
                <summary>Zwischen AS Wenden und AS Krombach in beiden Richtungen Stau, \(i % 7) km</summary>
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">A\(road): Koeln - Olpe<br/>Stau</div></content></entry>

                """
        }
        return text + "</feed>\n"
    }
}
