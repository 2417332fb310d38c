import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

/// The classic bug of apps built on denormalised documents: a changed profile image shows up late, or mixed with the
/// old one. Here, at every position of a random history, every user embedded anywhere in an answer must be exactly
/// that user's profile at that position, as folded from the log itself.
@Suite("Embedded profiles")
struct EmbeddedProfileTests {
    @Test(
        "at every position every embedded user (handle, name, major, image) equals that user's profile there, every post's images and alt texts, and whom it mentions",
        arguments: [1, 2, 3] as [UInt64])
    func embeddedUsersMatchTheLog(seed: UInt64) async throws {
        try await withProjections(batchSize: 1) { app in
            var generator = SeededGenerator(seed: seed)
            var users: [UserID] = []
            for index in 0..<5 { users.append(try await app.register("User \(index)")) }
            // Each user posts and shows only their own uploads.
            let images = Dictionary(
                uniqueKeysWithValues: users.map { user in (user, (0..<5).map { _ in app.media.add(uploadedBy: user) }) }
            )
            var posts: [PostID] = []
            /// The posts with images: their authors and images, for edits of their alt texts.
            var photoPosts: [(post: PostID, author: UserID, images: [MediaID])] = []
            func alt(_ generator: inout SeededGenerator) -> String? {
                Bool.random(using: &generator) ? "alt \(Int.random(in: 0..<100, using: &generator))" : nil
            }
            // Handles given at some time (`user_0` is User 0's first): a mention names one, perhaps another's by now.
            var handles = users.indices.map { "user_\($0)" }
            for _ in 0..<160 {
                let index = Int.random(in: 0..<users.count, using: &generator)
                let user = users[index]
                let mention = Bool.random(using: &generator) ? " @" + handles.randomElement(using: &generator)! : ""
                let handle = "user\(index)_\(Int.random(in: 0..<100, using: &generator))"
                let other = users.randomElement(using: &generator)!
                let post = posts.randomElement(using: &generator)
                let command: Command =
                    switch Int.random(in: 0..<11, using: &generator) {
                    case 0, 1:
                        .editProfile(
                            user: user, name: "Name \(Int.random(in: 0..<100, using: &generator))",
                            major: Bool.random(using: &generator)
                                ? "Major \(Int.random(in: 0..<9, using: &generator))" : nil,
                            profileImage: Bool.random(using: &generator)
                                ? .set(images[user]!.randomElement(using: &generator)!) : .remove,
                            // A handle of this user's own, so that no change is refused as taken.
                            handle: Bool.random(using: &generator) ? handle : nil)
                    case 2, 3:
                        .createPost(
                            author: user, text: "post" + mention,
                            media: images[user]!.shuffled(using: &generator).prefix(
                                Int.random(in: 0...3, using: &generator)
                            )
                            .map { PostImage(id: $0, alt: alt(&generator)) },
                            repostOf: Bool.random(using: &generator) ? post : nil)
                    case 10 where !photoPosts.isEmpty:
                        photoPosts.randomElement(using: &generator).map { photo in
                            .editPost(
                                author: photo.author, post: photo.post,
                                media: photo.images.map { PostImage(id: $0, alt: alt(&generator)) })
                        }!
                    case 4 where post != nil: .addComment(author: user, post: post!, text: "comment" + mention)
                    case 5 where post != nil: .like(user: user, post: post!)
                    case 6 where user != other: .follow(follower: user, followee: other)
                    case 7 where user != other: .unfollow(follower: user, followee: other)
                    case 8 where user != other: .sendMessage(from: user, to: other, text: "hi")
                    case 9 where post != nil:
                        Bool.random(using: &generator)
                            ? .repost(user: user, post: post!) : .unrepost(user: user, post: post!)
                    default: .createPost(author: user, text: "another" + mention)
                    }
                let result = try await app.chorus.execute(command)
                if case .editProfile(_, _, _, _, _, let handle?, _) = command { handles.append(handle) }
                if case .createPost(let author, _, _, let media, _, _) = command, let id = result.createdID {
                    posts.append(PostID(id)!)
                    if !media.isEmpty { photoPosts.append((PostID(id)!, author, media.map(\.id))) }
                }
            }
            #expect(photoPosts.count > 10, "posts with images")

            var expected: [UserID: UserSummaryFold] = [:]
            var expectedImages: [PostID: [PostImage]] = [:]
            var expectedMentions: [PostID: [UserID]] = [:]
            var (checked, checkedImages, altEdits, mentions) = (0, 0, 0, 0)
            /// Whom `text` mentions as the handles folded so far say: the accounts with those handles now.
            func resolved(_ text: String) -> [UserID] {
                Mentions.handles(in: text).compactMap { handle in expected.first { $0.value.handle == handle }?.key }
            }
            for event in try app.log.read(from: 1, limit: 10_000) {
                // Lets other suites' tasks run between positions (see LiveInterestTests).
                await Task.yield()
                let decoded = try DomainEvent(decoding: event, keys: TestDataKeys.shared)
                UserSummaryFold.apply(decoded, to: &expected)
                switch decoded {
                case .postCreated(let created):
                    expectedImages[created.post] = created.media
                    expectedMentions[created.post] = resolved(created.text)
                    #expect(created.mentions.text == expectedMentions[created.post], "resolved when written")
                    mentions += created.mentions.text.count
                case .commentAdded(let comment):
                    #expect(comment.mentions == resolved(comment.text), "resolved when written")
                    mentions += comment.mentions.count
                case .postEdited(let edit):
                    guard let alts = edit.alts else { break }
                    altEdits += 1
                    for (index, alt) in alts.enumerated() { expectedImages[edit.post]?[index].alt = alt }
                default: break
                }
                try app.engine.catchUp(through: event.position)
                let snapshot = try app.engine.snapshot { view in
                    (try embeddedUsers(in: view, users: users), try shownPosts(in: view))
                }
                #expect(snapshot.position == event.position)
                for post in snapshot.answer.1 {
                    #expect(post.mentions.map(\.id) == expectedMentions[post.id], "position \(event.position)")
                }
                for post in snapshot.answer.1 where !post.media.isEmpty || expectedImages[post.id]?.isEmpty == false {
                    #expect(
                        post.media == expectedImages[post.id],
                        "position \(event.position): post \(post.id) shows \(post.media), the log says \(String(describing: expectedImages[post.id]))"
                    )
                    checkedImages += 1
                }
                for summary in snapshot.answer.0 {
                    let folded = expected[summary.id]
                    #expect(
                        folded?.name == summary.name && folded?.major == summary.major
                            && folded?.profileImage == summary.profileImage && folded?.handle == summary.handle,
                        "position \(event.position): \(summary) where the log says \(String(describing: folded))")
                    checked += 1
                }
            }
            #expect(checked > 1_000, "the history embedded users often enough to test something")
            #expect(mentions > 8, "and mentioned them: \(mentions)")
            #expect(
                checkedImages > 200 && altEdits > 3, "and showed images often enough: \(checkedImages), \(altEdits)")
        }
    }

    /// Every post the Home feed shows, and the posts they quote.
    private func shownPosts(in view: borrowing ReadView) throws -> [Post] {
        try view.homeFeed(viewer: nil, page: PageRequest(limit: 200)).items.flatMap { post in
            [post] + (post.repostOf.map { [$0] } ?? [])
        }
    }

    /// Every user summary any answer embeds: feeds and tabs, posts, the posts they quote and who reposted them, comments, followers and following,
    /// notifications, conversations and messages.
    private func embeddedUsers(in view: borrowing ReadView, users: [UserID]) throws -> [UserSummary] {
        var found: [UserSummary] = []
        func add(_ post: Post) {
            found.append(post.author)
            found += post.mentions
            if let reposter = post.repostedBy { found.append(reposter) }
            if let original = post.repostOf { found.append(original.author) }
        }
        let home = try view.homeFeed(viewer: nil, page: PageRequest(limit: 100))
        home.items.forEach(add)
        for post in home.items {
            for comment in try view.comments(on: post.id, page: PageRequest(limit: 100))?.items ?? [] {
                found.append(comment.author)
                found += comment.mentions
            }
        }
        for user in users {
            try view.followingFeed(of: user, page: PageRequest(limit: 100)).items.forEach(add)
            try view.posts(by: user, viewer: nil, page: PageRequest(limit: 100))?.items.forEach(add)
            found += try view.followers(of: user, viewer: nil, page: PageRequest(limit: 100))?.items ?? []
            found += try view.following(of: user, viewer: nil, page: PageRequest(limit: 100))?.items ?? []
            if let profile = try view.profile(user, viewer: nil) { found.append(profile.summary) }
            for notification in try view.notifications(of: user, page: PageRequest(limit: 100)).items {
                found.append(notification.actor)
                if let comment = notification.comment { found += [comment.author] + comment.mentions }
            }
            for conversation in try view.conversations(of: user, page: PageRequest(limit: 100)).items {
                found += [conversation.partner, conversation.lastMessage.from, conversation.lastMessage.to]
            }
            for other in users where other != user {
                for message in try view.messages(between: user, and: other, page: PageRequest(limit: 100)).items {
                    found += [message.from, message.to]
                }
            }
        }
        return found
    }
}

/// A user's summary folded straight from the events, independently of the read models.
struct UserSummaryFold: Equatable {
    var name: String
    var major: String
    var profileImage: MediaID?
    var handle: String

    static func apply(_ event: DomainEvent, to users: inout [UserID: UserSummaryFold]) {
        switch event {
        case .userRegistered(let event):
            users[event.user] = UserSummaryFold(
                name: event.name, major: event.major, profileImage: nil, handle: event.handle)
        case .profileEdited(let event):
            if let handle = event.handle { users[event.user]?.handle = handle }
            if let name = event.name { users[event.user]?.name = name }
            if let major = event.major { users[event.user]?.major = major }
            switch event.profileImage {
            case nil: break
            case .remove?: users[event.user]?.profileImage = nil
            case .set(let media)?: users[event.user]?.profileImage = media
            }
        default:
            break
        }
    }
}
