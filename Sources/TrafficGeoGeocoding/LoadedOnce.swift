import NIOConcurrencyHelpers

/// A data file read once per process, when first asked for (the gazetteers, the countries' and
/// subdivisions' names). Reading holds the lock, so two callers never read it twice; a value
/// that was made is kept, a failure is not (the next caller tries again, and is told why).
final class LoadedOnce<Value: Sendable>: Sendable {
    private let load: @Sendable () throws -> Value
    private let loaded = NIOLockedValueBox<Value?>(nil)

    init(_ load: @escaping @Sendable () throws -> Value) {
        self.load = load
    }

    func get() throws -> Value {
        try loaded.withLockedValue { loaded in
            if let loaded { return loaded }
            let value = try load()
            loaded = value
            return value
        }
    }
}
