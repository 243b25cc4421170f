import Foundation
import TrafficGeoStore
import TrafficGeoSupport

extension StoreStatistics {
    /// `trafficgeo stats --format json`: the same counts as the text, for scripts. Counts by
    /// source, category, road and position source are arrays of {name, count}, largest first.
    public func jsonText(check: [String]? = nil) throws -> String {
        func counts(_ list: [(String, Int)]) -> [[String: Any]] { list.map { ["name": $0.0, "count": $0.1] } }
        var object: [String: Any] = [
            "database": path, "file_bytes": fileBytes, "index_crs": indexCRS, "index_kind": indexKind,
            "incidents": total, "located": located, "without_position": total - located,
            "active": active, "upcoming": upcoming, "expired": expired, "unconfirmed": unconfirmed,
            "index_blocks": indexBlocks, "index_singles": indexSingles,
            "oldest_update": oldestUpdate.map(TimestampParser.format) ?? NSNull(),
            "newest_update": newestUpdate.map(TimestampParser.format) ?? NSNull(),
            "geocode_cache_answers": geocodeCacheEntries,
            "known_junctions": knownJunctions, "junction_roads": junctionRoads,
            "sources": counts(bySource), "categories": counts(byCategory),
            "roads_top10": counts(byRoad), "position_sources": counts(byPositionSource),
        ]
        object["ended"] = ended
        object["change_feed"] = ["first": changeFeed.first, "latest": changeFeed.latest]
        object["feed_health"] = feedHealth.map { h -> [String: Any] in
            func date(_ d: Date?) -> Any { d.map(TimestampParser.format) ?? NSNull() }
            return ["source": h.source, "last_attempt": date(h.lastAttempt), "last_success": date(h.lastSuccess),
                    "last_error": h.lastError ?? NSNull(), "last_error_at": date(h.lastErrorAt),
                    "empty_streak": h.emptyStreak, "failure_streak": h.failureStreak, "last_entries": h.lastEntries ?? NSNull(),
                    "last_snapshot": date(h.lastSnapshot)]
        }
        if let check { object["check"] = ["ok": check.isEmpty, "problems": check] }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
