import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@testable import ChorusProjections

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
            for case .messageSent(let message) in events.map(\.event) {
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
                // Tags the demo writes.
                for tag in ["coffee", "seoul", "캠퍼스"] where Int.random(in: 0..<3, using: &random) == 0 {
                    topics.insert(.hashtag(tag))
                }
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

            // Streams open from the start learn every follow; those opened halfway read them first. A few take
            // posts by anyone, as a stream whose viewer follows more than it keeps.
            var open = try streams(of: users.prefix(40))
            for index in open.indices.prefix(6) where open[index].topics == [.feed] {
                open[index].interest.forgetFollowees()
            }
            // The live hub's index of the streams, by position in `open`, learning as they do.
            var index = LiveStreamIndex()
            func indexStreams(from start: Int) {
                for id in open.indices.dropFirst(start) { index.add(UInt64(id), open[id].interest) }
            }
            indexStreams(from: 0)
            let halfway = events.count / 2
            var (concerning, passedOver, found, checked) = (0, 0, 0, 0)
            var (missed, notFound): ([String], [String]) = ([], [])
            for (offset, (recorded, event)) in events.enumerated() {
                // Minutes of reading without a suspension would hold one of the few threads every test's tasks
                // share, and other suites' servers would stall behind it.
                await Task.yield()
                // The read models are at the event before.
                if offset == halfway {
                    open += try streams(of: users.prefix(50))
                    indexStreams(from: open.count - 100)
                }
                _ = try app.engine.catchUp(through: recorded.position)
                for id in open.indices {
                    let learnt = open[id].interest.learn(from: event)
                    index.update(UInt64(id), learnt: learnt, open[id].interest)
                }
                var foundByIndex = Set<UInt64>()
                index.forEachStream(concernedBy: event) { foundByIndex.insert($0) }
                found += foundByIndex.count
                _ = try app.engine.snapshot { view in
                    for (id, stream) in open.enumerated() {
                        let changes = try view.liveChanges(
                            of: recorded, decoded: event, for: stream.viewer, on: stream.topics)
                        let mayConcern = stream.interest.mayConcern(event)
                        checked += 1
                        if !changes.isEmpty { concerning += 1 }
                        if !mayConcern { passedOver += 1 }
                        let about = "\(recorded.type) at \(recorded.position) for \(stream.viewer)"
                        if !changes.isEmpty, !mayConcern { missed.append("\(about): \(changes)") }
                        if mayConcern, !foundByIndex.contains(UInt64(id)) { notFound.append(about) }
                    }
                }
            }
            #expect(missed.isEmpty, "\(missed.count) passed over: \(missed.prefix(5))")
            #expect(notFound.isEmpty, "\(notFound.count) not found by the index: \(notFound.prefix(5))")
            #expect(concerning > 200, "\(concerning) of \(checked) concerned a stream")
            #expect(passedOver > checked * 3 / 4, "\(passedOver) of \(checked) passed over")
            // The index finds few streams for an event, as the interests do: most pass over most events.
            #expect(found < checked / 4, "the index found \(found) of \(checked)")
        }
    }
}
