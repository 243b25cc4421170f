/// A setting of trafficgeo's that a message can point to without spelling it the way one surface
/// does. The library's words name no command-line option (`serve`'s clients and Swift programs
/// read them too); an error or a log line carries the setting instead, and the command line adds
/// its option in one place (`TrafficGeoExit.advice`; log lines through their `logKey` metadata).
public enum Setting: String, Sendable, CaseIterable {
    /// The geocoders asked, in order.
    case geocoders
    /// Requests a second to one geocoder.
    case requestRate
    /// How long one geocoder answer is waited for.
    case geocoderTimeout
    /// The User-Agent sent to geocoders.
    case userAgent
    /// The most entries one read of a feed keeps.
    case maxEntries
    /// The most bytes one feed may have.
    case maxFeedBytes
    /// The format a feed is read as.
    case feedFormat
    /// Which column of a CSV feed is which field.
    case fieldMapping
    /// The CRS of a feed's coordinates when it names none.
    case coordinateSystem
    /// The field mapping and CRS kept with a source from an earlier ingest.
    case keptReading
    /// The TMC location table that places ALERT-C locations.
    case locationTable

    /// The metadata key a log line names its setting under.
    public static let logKey = "setting"
}
