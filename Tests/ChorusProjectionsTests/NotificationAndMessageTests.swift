import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

@Suite("Notifications and conversations")
struct NotificationAndMessageTests {
    @Test("likes, follows and comments by others notify; one's own acts never do; unlike and unfollow take them back")
    func notifications() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let image = app.media.add(uploadedBy: ana)
            let post = PostID(
                try await app.chorus.execute(
                    .createPost(author: ana, caption: "c", media: [PostImage(id: image, alt: nil)])
                ).createdID!)!
            _ = try await app.chorus.execute(.like(user: ana, post: post))  // her own: no notification
            _ = try await app.chorus.execute(.addComment(author: ana, post: post, text: "mine"))
            _ = try await app.chorus.execute(.like(user: bo, post: post))
            _ = try await app.chorus.execute(.addComment(author: bo, post: post, text: "nice"))
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))

            let page = try app.read { try $0.notifications(of: ana, page: PageRequest()) }
            #expect(page.items.map(\.kind) == [.follow, .comment, .like])
            #expect(page.items.allSatisfy { $0.actor.id == bo })
            #expect(page.items.allSatisfy { !$0.actorIsFollowed })
            let comment = try #require(page.items.first { $0.kind == .comment })
            #expect(comment.comment?.text == "nice" && comment.post?.id == post && comment.post?.image == image)
            #expect(Set(page.items.map(\.id)).count == 3)

            _ = try await app.chorus.execute(.follow(follower: ana, followee: bo))
            #expect(
                try app.read { try $0.notifications(of: ana, page: PageRequest()).items.allSatisfy(\.actorIsFollowed) })
            #expect(try app.read { try $0.notifications(of: bo, page: PageRequest()).items.map(\.kind) } == [.follow])

            _ = try await app.chorus.execute(.unlike(user: bo, post: post))
            _ = try await app.chorus.execute(.unfollow(follower: bo, followee: ana))
            #expect(try app.read { try $0.notifications(of: ana, page: PageRequest()).items.map(\.kind) } == [.comment])
        }
    }

    @Test("likes, unlikes, comments and unfollows of schema version 1 project as today's do, followed and rebuilt")
    func versionOneEvents() async throws {
        try await withProjections(batchSize: 1) { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let cy = try await app.register("Cy")
            let post = try await app.post(ana, "hello")
            // As an older Chorus wrote them: schema version 1, without `postAuthor`.
            func versionOne(_ type: String, stream: String? = nil, _ parts: (inout PayloadWriter) -> Void) async throws
            {
                var payload = PayloadWriter()
                parts(&payload)
                _ = try await app.log.append(
                    AppendRequest(
                        stream: try StreamID(stream ?? "post-\(post)"),
                        events: [NewEvent(type: type, schemaVersion: 1, payload: payload.bytes)]))
            }
            try await versionOne("Liked") {
                $0.write(bo)
                $0.write(post)
            }
            try await versionOne("CommentAdded") {
                $0.write(CommentID.make())
                $0.write(post)
                $0.write(bo)
                $0.write("nice")
            }
            try await versionOne("Liked") {
                $0.write(cy)
                $0.write(post)
            }
            try await versionOne("Unliked") {
                $0.write(cy)
                $0.write(post)
            }
            try await versionOne("Liked") {
                $0.write(ana)
                $0.write(post)
            }  // her own: no notification
            _ = try await app.chorus.execute(.follow(follower: cy, followee: ana))
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            try await versionOne("Unfollowed", stream: "user-\(cy)") {
                $0.write(cy)
                $0.write(ana)
            }

            // Followed one event at a time (after a first batch of one), then rebuilt at once: the same answer.
            let page = try app.read { try $0.notifications(of: ana, page: PageRequest()) }
            #expect(page.items.map(\.kind) == [.follow, .comment, .like])
            #expect(page.items.allSatisfy { $0.actor.id == bo })
            #expect(
                try app.read { try $0.followers(of: ana, viewer: nil, page: PageRequest())?.items.map(\.id) } == [bo])
            let rebuilt = app.directory + "/rebuilt"
            _ = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: rebuilt)
            #expect(try dumpReadModels(app.engine.store) == dumpReadModels(atDirectory: rebuilt))
        }
    }

    @Test("the recent-messages list has one row per partner, latest first; a conversation reads both ways")
    func conversations() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let cy = try await app.register("Cy")
            _ = try await app.chorus.execute(.sendMessage(from: ana, to: bo, text: "hi Bo"))
            _ = try await app.chorus.execute(.sendMessage(from: cy, to: ana, text: "hi Ana"))
            _ = try await app.chorus.execute(.sendMessage(from: bo, to: ana, text: "hey"))

            let list = try app.read { try $0.conversations(of: ana, page: PageRequest()) }
            #expect(list.items.map(\.partner.id) == [bo, cy])
            #expect(list.items.map(\.lastMessage.text) == ["hey", "hi Ana"])
            #expect(try app.read { try $0.conversations(of: bo, page: PageRequest()).items.map(\.partner.id) } == [ana])

            let (newest, oldest) = try app.read { view in
                (
                    try view.messages(between: ana, and: bo, page: PageRequest()).items.map(\.text),
                    try view.messages(between: bo, and: ana, order: .oldestFirst, page: PageRequest()).items.map(\.text)
                )
            }
            #expect(newest == ["hey", "hi Bo"])
            #expect(oldest == ["hi Bo", "hey"])
            #expect(try app.read { try $0.messages(between: bo, and: cy, page: PageRequest()).items } == [])
        }
    }
}
