import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Logging
import Testing

@Suite("Live hub")
struct LiveHubTests {
    @Test(
        "the hub hands each stream the events that may concern it, once and in order, learning follows as it walks; a stream with nothing is woken only for its heartbeat"
    )
    func handsEachStreamItsEvents() async throws {
        try await Self.withHub { app, readModels, hub in
            let (ana, bo, cy) = (
                try await app.register("Ana"), try await app.register("Bo"), try await app.register("Cy")
            )
            let dee = try await app.register("Dee")
            try await readModels.waitUntilApplied(app.log.head, timeout: readModelsWait)

            func subscribe(_ viewer: UserID, _ topics: Set<LiveTopic>, heartbeat: Duration) throws -> UInt64 {
                try Self.subscribe(viewer, topics, to: hub, of: readModels, heartbeat: heartbeat).id
            }
            // Ana's feed and Bo's notifications, with heartbeats far off; Dee's, whom nothing here concerns, with one
            // soon.
            let anaStream = try subscribe(ana, [.feed], heartbeat: .seconds(60))
            let boStream = try subscribe(bo, [.notifications], heartbeat: .seconds(60))
            let deeStream = try subscribe(dee, [.notifications], heartbeat: .milliseconds(100))
            let idle = Task {
                try await within(.seconds(10)) {
                    try await hub.next(deeStream)
                }
            }

            // Cy posts before Ana follows them, and after: only the second reaches her feed, learnt from the follow.
            // (Walked in one batch with the follow, the first may pass too, erring towards yes: Cy's own feed shows
            // when the hub has walked it.)
            let cyFeed = try subscribe(cy, [.feed], heartbeat: .seconds(60))
            let before = try await app.post(cy, "before")
            let cyPosts = try await within(.seconds(10)) { try await hub.next(cyFeed) }.events
            #expect(cyPosts.map(\.event.postID) == [before])
            _ = try await app.chorus.execute(.follow(follower: ana, followee: cy))
            let after = try await app.post(cy, "after")
            let anaEvents = try await within(.seconds(10)) { try await hub.next(anaStream) }.events
            #expect(anaEvents.map(\.event.postID) == [after])
            // Bo's stream was not woken by any of it: nothing concerned it, and its heartbeat is a minute off.
            let boWaiting = Task { try await within(.seconds(10)) { try await hub.next(boStream) } }
            try await Task.sleep(for: .milliseconds(300))
            _ = try await app.chorus.execute(.follow(follower: ana, followee: bo))
            let boEvents = try await boWaiting.value.events
            #expect(boEvents.count == 1)
            if case .followed(let followed) = boEvents.first?.event {
                #expect(followed.follower == ana && followed.followee == bo)
            } else {
                Issue.record("Bo's stream got \(boEvents.map(\.event)) where a follow was due")
            }
            // Dee's stream had nothing either: its heartbeat, an empty delivery.
            guard case .heartbeat = try await idle.value else {
                Issue.record("Dee's stream was woken with something")
                return
            }

            // A stream that has walked less than the hub is told how far to walk first.
            let walked = readModels.current.position
            let early = try readModels.snapshot { try LiveInterest(viewer: cy, topics: [.feed], in: $0) }.answer
            #expect(try hub.subscribe(early, through: .start, heartbeat: .seconds(60)) == .behind(walked))

            // Ended: a stream's wait ends, and so do waits begun after the server's shutdown.
            hub.unsubscribe(anaStream)
            await #expect(throws: CancellationError.self) { try await hub.next(anaStream) }
            let waiting = Task { try await hub.next(boStream) }
            try await Task.sleep(for: .milliseconds(50))
            hub.endShutdownWaits()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(throws: CancellationError.self) {
                try hub.subscribe(early, through: walked, heartbeat: .seconds(1))
            }
        }
    }

    @Test("a stream that leaves more than the hub keeps for it is told to walk itself again from what it was given")
    func streamThatFallsBehind() async throws {
        try await Self.withHub(maximumPending: 2) { app, readModels, hub in
            let (ana, cy) = (try await app.register("Ana"), try await app.register("Cy"))
            let dee = try await app.register("Dee")
            _ = try await app.chorus.execute(.follow(follower: ana, followee: cy))
            try await readModels.waitUntilApplied(app.log.head, timeout: readModelsWait)
            func subscribe(_ viewer: UserID, _ topics: Set<LiveTopic>) throws -> (UInt64, LogPosition) {
                try Self.subscribe(viewer, topics, to: hub, of: readModels, heartbeat: .seconds(60))
            }
            let (anaStream, subscribed) = try subscribe(ana, [.feed])
            let (cyNotifications, _) = try subscribe(cy, [.notifications])
            // Three posts for Ana's feed, which takes none; then Dee follows Cy: once Cy's notifications have the
            // follow, the hub has walked the posts for Ana too.
            for text in ["one", "two", "three"] { _ = try await app.post(cy, text) }
            _ = try await app.chorus.execute(.follow(follower: dee, followee: cy))
            let notified = try await within(.seconds(10)) { try await hub.next(cyNotifications) }.events
            #expect(notified.count == 1)
            guard case .fellBehind(let after, let interest) = try await hub.next(anaStream) else {
                Issue.record("Ana's stream was not told it fell behind")
                return
            }
            #expect(after == subscribed)
            // No longer subscribed; subscribing again from there, it is told how far to walk first.
            await #expect(throws: CancellationError.self) { try await hub.next(anaStream) }
            #expect(try hub.subscribe(interest, through: after, heartbeat: .seconds(60)) == .behind(app.log.head))
        }
    }

    /// Runs `body` with served read models following the harness's log, and a hub on them.
    private static func withHub(
        maximumPending: Int = 4_096, _ body: (ProjectionHarness, ServedReadModels, LiveHub) async throws -> Void
    ) async throws {
        try await withProjections { app in
            let readModels = try ServedReadModels(
                log: app.log, keys: TestDataKeys.shared, dataDirectory: app.directory + "/served",
                logger: Logger(label: "test"))
            defer { try? readModels.close() }
            let service = Task { try await ProjectionService(readModels: readModels).run() }
            defer { service.cancel() }
            let hub = LiveHub(
                readModels: readModels, window: DecodedEventWindow(log: app.log, keys: TestDataKeys.shared),
                maximumPending: maximumPending)
            try await body(app, readModels, hub)
        }
    }

    /// Subscribes `viewer`'s stream on `topics`, its interest read at the read models' position; the subscription
    /// and that position.
    private static func subscribe(
        _ viewer: UserID, _ topics: Set<LiveTopic>, to hub: LiveHub, of readModels: ServedReadModels,
        heartbeat: Duration
    ) throws -> (id: UInt64, position: LogPosition) {
        let interest = try readModels.snapshot { try LiveInterest(viewer: viewer, topics: topics, in: $0) }
        guard
            case .subscribed(let id) = try hub.subscribe(
                interest.answer, through: interest.position, heartbeat: heartbeat)
        else { throw HubTestError("not subscribed at the read models' position") }
        return (id, interest.position)
    }
}

/// `body`'s answer, or an error once `limit` passes first: a stream the hub never wakes fails the test, not hangs it.
private func within<R: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> R) async throws -> R
{
    try await withThrowingTaskGroup(of: R?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let answer = first else {
            throw HubTestError("nothing came within \(limit)")
        }
        return answer
    }
}

private struct HubTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension LiveHub.Delivery {
    /// The events delivered; none for anything else.
    fileprivate var events: [LiveHub.Entry] { if case .events(let events) = self { events } else { [] } }
}

extension DomainEvent {
    fileprivate var postID: PostID? { if case .postCreated(let created) = self { created.post } else { nil } }
}
