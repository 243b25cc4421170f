import TrafficGeoFeeds

/// The threads a store's blocking work runs on when it is asked from async code: the package's
/// one pool for blocking work (`BlockingThreads`, in TrafficGeoFeeds, which the feed readers
/// use too), named for what the stores and their callers do on it.
public typealias StoreThreads = BlockingThreads
