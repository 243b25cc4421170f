import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoWatch

/// Webhook and ntfy deliveries reach a real receiver on loopback with the right bodies.
@Suite struct DeliveryTests {
    static let event = WatchEvent(
        kind: .enter, watch: "home", sequence: 42, at: Date(timeIntervalSince1970: 1_750_000_000), reason: nil,
        incident: Incident(source: "autobahn", id: "w1", title: "A4 : Köln - Olpe", summary: "Unfall zwischen AS Wenden und AS Krombach",
                           weblink: "https://verkehr.example/w1", road: "A4", category: .accident,
                           position: Coordinate(latitude: 50.99, longitude: 7.92)),
        storeID: 7, distance: 1234.5)

    @Test(.timeLimit(.minutes(1))) func aWebhookIsRetriedUntilTheReceiverTakesIt() async throws {
        let receiver = try LoopbackHTTPServer { _, n in n < 2 ? .text("busy", status: 503) : .text("ok") }
        defer { receiver.shutdown() }
        await WebhookDelivery(url: "http://127.0.0.1:\(receiver.port)/hook", backoff: 0.01).deliver(Self.event)
        let requests = receiver.requests
        #expect(requests.count == 3 && requests.allSatisfy { $0.method == "POST" && $0.path == "/hook" })
        let body = try #require(try JSONSerialization.jsonObject(with: Data(requests[2].body.utf8)) as? [String: Any])
        #expect(body["event"] as? String == "enter" && body["watch"] as? String == "home" && body["seq"] as? Int == 42)
        let incident = try #require(body["incident"] as? [String: Any])
        #expect(incident["id"] as? String == "w1" && incident["title"] as? String == "A4 : Köln - Olpe")
        #expect(incident["distanceMeters"] as? Double == 1234.5 && incident["pinColor"] as? String == "red")
        #expect(requests[2].headers["content-type"] == "application/json")
    }

    @Test(.timeLimit(.minutes(1))) func aWebhookThatRefusesIsNotRetried() async throws {
        let receiver = try LoopbackHTTPServer { _, _ in .text("no", status: 400) }
        defer { receiver.shutdown() }
        await WebhookDelivery(url: "http://127.0.0.1:\(receiver.port)/hook", backoff: 0.01).deliver(Self.event)
        #expect(receiver.requests.count == 1)
    }

    @Test(.timeLimit(.minutes(1))) func ntfyGetsItsPublishingFormat() async throws {
        let receiver = try LoopbackHTTPServer { _, _ in .json("{\"id\":\"x\"}") }
        defer { receiver.shutdown() }
        let ntfy = try #require(NtfyDelivery(url: "http://127.0.0.1:\(receiver.port)/traffic-home", backoff: 0.01))
        await ntfy.deliver(Self.event)
        var leaving = Self.event
        leaving.kind = .leave
        leaving.reason = "ended"
        await ntfy.deliver(leaving)
        let requests = receiver.requests
        #expect(requests.count == 2 && requests.allSatisfy { $0.method == "POST" && $0.path == "/" })
        let enter = try #require(try JSONSerialization.jsonObject(with: Data(requests[0].body.utf8)) as? [String: Any])
        #expect(enter["topic"] as? String == "traffic-home")
        #expect(enter["title"] as? String == "A4 : Köln - Olpe")
        #expect((enter["message"] as? String)?.contains("Unfall zwischen AS Wenden") == true)
        #expect((enter["message"] as? String)?.contains("1.2 km away") == true)
        #expect(enter["priority"] as? Int == 4)
        #expect(enter["tags"] as? [String] == ["rotating_light", "enter", "A4"])
        #expect(enter["click"] as? String == "https://verkehr.example/w1")
        let leave = try #require(try JSONSerialization.jsonObject(with: Data(requests[1].body.utf8)) as? [String: Any])
        #expect(leave["title"] as? String == "Over: A4 : Köln - Olpe" && leave["priority"] as? Int == 2)
        #expect((leave["tags"] as? [String])?.first == "white_check_mark")
        #expect(NtfyDelivery(url: "https://ntfy.sh/") == nil)
    }

    @Test func aCorridorHoldsWhatIsNearTheRoute() {
        let route = [Coordinate(latitude: 50.0, longitude: 7.0), Coordinate(latitude: 50.0, longitude: 8.0)]
        let area = WatchArea.corridor(route: route, buffer: 2000)
        #expect(area.locate(Coordinate(latitude: 50.01, longitude: 7.5)).inside)       // ~1.1 km north of the line
        #expect(!area.locate(Coordinate(latitude: 50.03, longitude: 7.5)).inside)      // ~3.3 km
        #expect(!area.locate(Coordinate(latitude: 50.0, longitude: 8.05)).inside)      // ~3.6 km past the end
        #expect(area.locate(Coordinate(latitude: 50.0, longitude: 8.02)).inside)       // ~1.4 km past the end
        let d = area.locate(Coordinate(latitude: 50.01, longitude: 7.5)).distance!
        #expect(abs(d - 1112) < 10, "\(d)")
    }
}
