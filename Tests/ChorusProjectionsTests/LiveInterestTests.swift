import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

@Suite("Live interest")
struct LiveInterestTests {
    /// A stream as `GET /v1/live` keeps one: its viewer, topics and interest.
    private struct Stream {
        let viewer: UserID
        let topics: Set<LiveTopic>
        var interest: LiveInterest
    }

    @Test(
        "a live stream's interest passes over no event that changes its topics, followees learnt as it goes or read at its start, and over most that do not"
    )
    func passesOverNothingThatConcerns() async throws {
        try await withProjections(batchSize: 1) { app in
            _ = try await DemoWorkload(seed: 21, events: 1_200).run(on: app.chorus)
            var events: [(recorded: RecordedEvent, event: DomainEvent)] = []
            try app.log.scan { events.append(($0, try DomainEvent(decoding: $0, keys: TestDataKeys.shared))) }
            // Conversations read, which the demo does not do.
            for case .messageSent(let message) in events.map(\.event).prefix(400) {
                _ = try? await app.chorus.execute(.readConversation(reader: message.to, partner: message.from))
            }
            events.removeAll()
            try app.log.scan { events.append(($0, try DomainEvent(decoding: $0, keys: TestDataKeys.shared))) }
            #expect(events.contains { if case .conversationRead = $0.event { true } else { false } })

            var users: [UserID] = []
            var posts: [PostID] = []
            var rooms: [RoomID] = []
            for (_, event) in events {
                switch event {
                case .userRegistered(let registered): users.append(registered.user)
                case .postCreated(let created): posts.append(created.post)
                case .roomCreated(let created): rooms.append(created.room)
                default: break
                }
            }
            var random = SeededGenerator(seed: 3)
            /// The feed and notifications, and a tenth of every other kind of topic.
            func someTopics() -> Set<LiveTopic> {
                var topics: Set<LiveTopic> = [.feed, .notifications, .conversations]
                for post in posts where Int.random(in: 0..<10, using: &random) == 0 { topics.insert(.post(post)) }
                for user in users where Int.random(in: 0..<10, using: &random) == 0 {
                    topics.insert(.profile(user))
                    topics.insert(.conversation(user))
                }
                for room in rooms where Int.random(in: 0..<3, using: &random) == 0 { topics.insert(.room(room)) }
                return topics
            }
            func streams(of viewers: ArraySlice<UserID>) throws -> [Stream] {
                try viewers.flatMap { viewer in
                    try [someTopics(), [.feed]].map { topics in
                        Stream(
                            viewer: viewer, topics: topics,
                            interest: try app.engine.snapshot {
                                try LiveInterest(viewer: viewer, topics: topics, in: $0)
                            }.answer)
                    }
                }
            }

            // Streams open from the start learn every follow; those opened halfway read them first.
            var open = try streams(of: users.prefix(40))
            let halfway = events.count / 2
            var (concerning, passedOver, checked) = (0, 0, 0)
            var missed: [String] = []
            for (offset, (recorded, event)) in events.enumerated() {
                // The read models are at the event before.
                if offset == halfway { open += try streams(of: users.prefix(50)) }
                _ = try app.engine.catchUp(through: recorded.position)
                for index in open.indices { open[index].interest.learn(from: event) }
                try app.engine.snapshot { view in
                    for stream in open {
                        let changes = try view.liveChanges(
                            of: recorded, decoded: event, for: stream.viewer, on: stream.topics)
                        let mayConcern = stream.interest.mayConcern(event)
                        checked += 1
                        if !changes.isEmpty { concerning += 1 }
                        if !mayConcern { passedOver += 1 }
                        if !changes.isEmpty, !mayConcern {
                            missed.append("\(recorded.type) at \(recorded.position) for \(stream.viewer): \(changes)")
                        }
                    }
                }
            }
            #expect(missed.isEmpty, "\(missed.count) passed over: \(missed.prefix(5))")
            #expect(concerning > 200, "\(concerning) of \(checked) concerned a stream")
            #expect(passedOver > checked * 3 / 4, "\(passedOver) of \(checked) passed over")
        }
    }
}
