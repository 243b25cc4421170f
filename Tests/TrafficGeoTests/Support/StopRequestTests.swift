import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoSQLite
@testable import TrafficGeoStore
import TrafficGeoSupport

/// The one stop every long run holds: a wait ends the moment it is requested (no polling), a
/// request made before anyone waits is kept, and cancellation ends a wait without a stop.
// Bounds in seconds, not milliseconds: the full suite on 2 cores delays any wake-up by seconds
// (alone, each wait below ends within 20 ms of its stop).
@Suite("StopRequest: one way to stop", .timeLimit(.minutes(1)))
struct StopRequestTests {
    @Test func aWaitEndsWhenTheStopIsRequested() async throws {
        let stop = StopRequest()
        #expect(!stop.isRequested)
        let waiting = Task { await stop.requested(); return ContinuousClock.now }
        try await Task.sleep(for: .milliseconds(50))
        let asked = ContinuousClock.now
        #expect(stop.request(), "the first request makes it")
        #expect(!stop.request(), "a second changes nothing")
        let woke = await waiting.value
        #expect(woke - asked < .seconds(10), "woken at the request: \(woke - asked)")
        #expect(stop.isRequested)
        await stop.requested()    // already requested: returns at once
    }

    @Test func sleepEndsEarlyOnAStopAndRunsItsCourseWithout() async throws {
        let calm = StopRequest()
        let started = ContinuousClock.now
        #expect(await calm.sleep(until: started + .milliseconds(30)), "no stop: the whole wait")
        #expect(ContinuousClock.now - started >= .milliseconds(30))

        let stop = StopRequest()
        let sleeping = Task { await stop.sleep(until: ContinuousClock.now + .seconds(60)) }
        try await Task.sleep(for: .milliseconds(20))
        let asked = ContinuousClock.now
        stop.request()
        #expect(await sleeping.value == false)
        #expect(ContinuousClock.now - asked < .seconds(20), "the minute's sleep ended at the stop")
        #expect(await stop.sleep(until: ContinuousClock.now + .seconds(60)) == false, "after the stop, no wait at all")
    }

    @Test func cancellingAWaiterEndsItsWaitButRequestsNothing() async throws {
        let stop = StopRequest()
        let waiting = Task { await stop.requested() }
        waiting.cancel()
        await waiting.value
        let cancelledFirst = Task { withUnsafeCurrentTask { $0?.cancel() }; await stop.requested() }
        await cancelledFirst.value
        #expect(!stop.isRequested)
        // Many waiters at once, all woken by one request.
        let many = (0..<50).map { _ in Task { await stop.requested() } }
        stop.request()
        for task in many { await task.value }
    }

    /// The feed loop waits for its next read on the stop itself: with an hour to the next read,
    /// a stop ends the loop at once.
    @Test func aFeedLoopWaitingAnHourStopsAtOnce() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let feed = folder.appendingPathComponent("feed.geojson")
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[6.95,50.93]},"properties":{"title":"A3 : Köln"}}]}"#.utf8).write(to: feed)
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("s.sqlite").path)
        var loop = FeedLoop(ingestor: FeedIngestor(store: store), sources: [feed.path])
        loop.interval = .seconds(3600)
        let reads = LockedCount()
        loop.onRead = { _ in reads.add() }
        let stop = StopRequest()
        let running = Task { await loop.run(until: stop) }
        while reads.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let asked = ContinuousClock.now
        stop.request()
        await running.value
        #expect(ContinuousClock.now - asked < .seconds(20), "the hour's wait for the next read ended at the stop")
        #expect(reads.value == 1)
    }
}

private final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
