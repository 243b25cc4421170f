import TrafficGeoSupport

/// What a reader says of how it read a feed ("columns recognised: …", "x and y are not
/// degrees"), with the setting that changes it: the command line adds its option's words
/// (`Setting`), as it does for errors.
public struct FeedNote: Sendable, CustomStringConvertible {
    public var text: String
    public var setting: Setting

    public init(_ text: String, setting: Setting = .fieldMapping) {
        self.text = text
        self.setting = setting
    }

    public var description: String { text }
}
