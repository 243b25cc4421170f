/// The User-Agent trafficgeo sends: identifies the tool and where to find it.
public enum UserAgent {
    public static let `default` = "trafficgeo/\(TrafficGeoVersion.string) (+https://github.com/trafficgeo/trafficgeo)"
}

public enum TrafficGeoVersion {
    public static let string = "0.1.0"
}
