import ChorusDomain
import ChorusLog

/// A synthetic social workload of about a chosen number of events, made from a seed and executed through the real
/// command path: users with Korean and Latin names and the handles `user0`, `user1`… (as their e-mails), a
/// heavy-tailed follower graph (``FollowerGraph``: a few accounts followed by thousands, or by most users), posts with
/// hashtags and mentions, plain reposts and unreposts, quotes, likes, unlikes, bookmarks, muted words, comments,
/// messages, profile edits, post edits, unfollows, deletions of posts and comments, blocks and mutes, private accounts
/// (one in 25) and the requests to follow them (most accepted), notifications and conversations read, a lobby room its
/// users join, talk in and leave, photo posts of one to four pictures with alt texts (given ``photos``), and at the
/// end one account that writes a little and is deleted.
///
/// Commands run in waves of concurrent commands; a wave only refers to users and posts made in earlier waves, so the
/// content depends only on the seed, while positions within a wave depend on how the group commits fell.
public struct DemoWorkload: Sendable {
    public let seed: UInt64
    /// About how many events to append.
    public let events: Int
    /// Commands executed concurrently in one wave.
    public var waveSize = 256
    /// Who follows whom before everyday life starts.
    public var graph = FollowerGraph.modest
    /// Stores a picture as uploaded by a user and answers its media id: where the demo's photos go. Without it the
    /// demo posts none.
    public var photos: (@Sendable (UserID, DemoPicture) async throws -> MediaID)?
    /// At most how many users post photos, each with ``picturesEach`` of their own.
    static let photographers = 24
    static let picturesEach = 4
    /// Photographers whose pictures are stored at once: a few, within what the image pipeline queues.
    static let photographersAtOnce = 4

    public init(
        seed: UInt64, events: Int, graph: FollowerGraph = .modest,
        photos: (@Sendable (UserID, DemoPicture) async throws -> MediaID)? = nil
    ) {
        self.seed = seed
        self.events = events
        self.graph = graph
        self.photos = photos
    }

    /// What a run appended.
    public struct Summary: Sendable {
        public var users = 0
        public var posts = 0
        public var events = 0
    }

    /// Runs the workload; `progress` is called after each wave with the events appended so far.
    public func run(
        on executor: CommandExecutor, durability: WriteDurability = .nonDurableBulkImport,
        progress: (Int) -> Void = { _ in }
    ) async throws -> Summary {
        var generator = SeededGenerator(seed: seed)
        var summary = Summary()
        let userCount = graph.userCount(events: events)
        var users: [UserID] = []
        var posts: [PostID] = []
        /// The author of each of `posts`, who alone may edit or delete it.
        var authors: [UserID] = []
        /// What was made and deleted.
        var life = Life()
        // Events, not commands: a registration appends two (the user and the first session).
        let startHead = executor.log.head.rawValue

        func record(_ commands: [Command], _ results: [CommandResult?]) {
            for (command, result) in zip(commands, results) {
                guard let result, result.appended else { continue }
                switch command {
                case .registerUser:
                    users.append(UserID(unchecked: result.createdID ?? ""))
                    summary.users += 1
                case .createPost(let author, _, _, let media, _, _):
                    let post = PostID(unchecked: result.createdID ?? "")
                    posts.append(post)
                    authors.append(author)
                    summary.posts += 1
                    if !media.isEmpty { life.photoPosts.append((post, author, media.map(\.id))) }
                case .addComment(let author, let post, _):
                    life.comments.append((CommentID(unchecked: result.createdID ?? ""), post, author))
                case .deletePost(_, let post):
                    life.deletedPosts.insert(post)
                case .deleteComment(_, _, let comment):
                    life.deletedComments.insert(comment)
                case .editProfile(let user, _, _, _, _, _, true?):
                    life.privateUsers.insert(user)
                case .follow(let follower, let followee) where life.privateUsers.contains(followee):
                    life.requests.append((follower, followee))
                case .joinRoom(let user, _):
                    life.roomMembers.insert(user)
                case .leaveRoom(let user, _):
                    life.roomMembers.remove(user)
                default:
                    break
                }
            }
            summary.events = Int(executor.log.head.rawValue - startHead)
            progress(summary.events)
        }

        // Everyone signs up first.
        var registrations: [Command] = []
        for index in 0..<userCount {
            registrations.append(
                .registerUser(
                    email: "user\(index)@demo.chorus", password: "password", name: DemoNames.name(using: &generator),
                    major: DemoNames.majors.randomElement(using: &generator), handle: Self.handle(of: index)))
            if registrations.count == waveSize {
                record(registrations, try await execute(registrations, on: executor, durability: durability))
                registrations = []
            }
        }
        record(registrations, try await execute(registrations, on: executor, durability: durability))

        // Then a heavy-tailed graph.
        let follows = graph.follows(among: users.count, using: &generator).map { edge in
            Command.follow(follower: users[edge.follower], followee: users[edge.followee])
        }
        for start in stride(from: 0, to: follows.count, by: waveSize) {
            guard summary.events < events else { break }
            let wave = Array(follows[start..<min(start + waveSize, follows.count)])
            record(wave, try await execute(wave, on: executor, durability: durability))
        }

        // One account in 25 goes private, keeping its followers: who follows it from now on asks first.
        let going = stride(from: 12, to: users.count, by: 25).map {
            Command.editProfile(user: users[$0], isPrivate: true)
        }
        record(going, try await execute(going, on: executor, durability: durability))

        // Some take photos, stored a photographer at a time (the pipeline takes several at once).
        if let photos {
            // One user in 32, up to the limit: a small demo (a test's) stores a few pictures only.
            let count = max(1, min(Self.photographers, users.count / 32))
            let photographers = (0..<count).map { users[$0 * users.count / count] }
            var taken = [[(MediaID, String)]](repeating: [], count: count)
            for start in stride(from: 0, to: count, by: Self.photographersAtOnce) {
                try await withThrowingTaskGroup(of: (Int, [(MediaID, String)]).self) { group in
                    for index in start..<min(start + Self.photographersAtOnce, count) {
                        group.addTask {
                            var pictures: [(MediaID, String)] = []
                            for number in 0..<Self.picturesEach {
                                let picture = DemoPicture(
                                    seed: seed &* 1_000_003 &+ UInt64(index * Self.picturesEach + number))
                                pictures.append((try await photos(photographers[index], picture), picture.description))
                            }
                            return (index, pictures)
                        }
                    }
                    for try await (index, pictures) in group { taken[index] = pictures }
                }
            }
            for (photographer, pictures) in zip(photographers, taken) { life.pictures[photographer] = pictures }
            // Their first picture is their face.
            let faces = zip(photographers, taken).map { Command.editProfile(user: $0, profileImage: .set($1[0].0)) }
            record(faces, try await execute(faces, on: executor, durability: durability))
        }

        // One room everyone may join, as in Flash Chat.
        let lobby = try await executor.execute(.createRoom(creator: users[0], name: "Lobby"), durability: durability)
        life.room = RoomID(unchecked: lobby.createdID ?? "")
        life.roomMembers.insert(users[0])

        // Then everyday life, until about `events` are appended.
        while summary.events < events {
            var wave: [Command] = []
            // What notifications a user reads up to: those before this wave.
            let seen = executor.log.head
            for _ in 0..<min(waveSize, max(1, events - summary.events)) {
                wave.append(
                    nextCommand(
                        users: users, posts: posts, authors: authors, life: life, seen: seen, using: &generator))
            }
            record(wave, try await execute(wave, on: executor, durability: durability))
            // The private accounts answer the requests of the wave before, in order: most are accepted.
            let answers = life.requests.map { follower, followee in
                Int.random(in: 0..<4, using: &generator) == 0
                    ? Command.declineFollowRequest(followee: followee, follower: follower)
                    : Command.acceptFollowRequest(followee: followee, follower: follower)
            }
            life.requests.removeAll()
            record(answers, try await execute(answers, on: executor, durability: durability))
        }
        try await leave(after: users, posts: posts, life: life, on: executor, durability: durability)
        summary.events = Int(executor.log.head.rawValue - startHead)
        progress(summary.events)
        return summary
    }

    /// One account that signs up, writes a post, a comment, a message and a room message, follows, likes and saves a
    /// post, and is deleted: the demo's account deletion, apart from the `user…@demo.chorus` accounts that benchmarks
    /// sign in as.
    private func leave(
        after users: [UserID], posts: [PostID], life: Life, on executor: CommandExecutor, durability: WriteDurability
    ) async throws {
        let registered = try await executor.execute(
            .registerUser(email: "leaver@demo.chorus", password: "password", name: "Leaver"), durability: durability)
        let leaver = UserID(unchecked: registered.createdID ?? "")
        let standing = posts.last { !life.deletedPosts.contains($0) }
        var commands: [Command] = [
            .createPost(author: leaver, caption: nil, text: "Goodbye, everyone"),
            .follow(follower: leaver, followee: users[0]),
            .sendMessage(from: leaver, to: users[0], text: "Thanks for everything"),
        ]
        if let room = life.room {
            commands += [
                .joinRoom(user: leaver, room: room), .sendRoomMessage(from: leaver, room: room, text: "Bye, lobby"),
            ]
        }
        if let standing {
            commands += [
                .like(user: leaver, post: standing), .bookmark(user: leaver, post: standing),
                .addComment(author: leaver, post: standing, text: "So long"),
            ]
        }
        for command in commands {
            do {
                _ = try await executor.execute(command, durability: durability)
            } catch is DomainError {
                // Refused (a block from an earlier wave, say): the rest is still to do.
            }
        }
        _ = try await executor.execute(.deleteAccount(user: leaver, password: "password"), durability: durability)
    }

    /// Executes one wave concurrently; the results come back in the order of `commands` (nil for a refusal the
    /// generator could not foresee, such as two commands of one wave racing).
    private func execute(
        _ commands: [Command], on executor: CommandExecutor, durability: WriteDurability
    ) async throws -> [CommandResult?] {
        try await withThrowingTaskGroup(of: IndexedResult.self) { group in
            for (index, command) in commands.enumerated() {
                group.addTask {
                    do {
                        return IndexedResult(
                            index: index, result: try await executor.execute(command, durability: durability))
                    } catch is DomainError {
                        return IndexedResult(index: index, result: nil)
                    }
                }
            }
            var results = [CommandResult?](repeating: nil, count: commands.count)
            while let done = try await group.next() { results[done.index] = done.result }
            return results
        }
    }

    /// Now and then someone mutes a word: one of the demo's few, so often one others write.
    private func mutedWord(by user: UserID, using generator: inout SeededGenerator) -> Command {
        .muteWord(
            user: user, word: DemoNames.words.randomElement(using: &generator)!,
            scope: Bool.random(using: &generator) ? .everyone : .notFollowing)
    }

    /// The handle of the demo's `index`th user, as its e-mail: `user7`.
    static func handle(of index: Int) -> String { "user\(index)" }

    private func nextCommand(
        users: [UserID], posts: [PostID], authors: [UserID], life: Life, seen: LogPosition,
        using generator: inout SeededGenerator
    ) -> Command {
        let user = users[generator.skewedIndex(below: users.count, skew: 1.5)]
        let otherIndex = generator.skewedIndex(below: users.count)
        let other = users[otherIndex]
        let roll = Int.random(in: 0..<100, using: &generator)
        // One post or comment in five mentions someone (the popular more often).
        let mention = Int.random(in: 0..<5, using: &generator) == 0 ? " @" + Self.handle(of: otherIndex) : ""
        // Recent posts draw the attention.
        let index = posts.isEmpty ? 0 : posts.count - 1 - generator.skewedIndex(below: posts.count)
        // A post deleted is written about no more; someone posts instead.
        guard roll >= 24, !posts.isEmpty, !life.deletedPosts.contains(posts[index]) else {
            if let pictures = life.pictures[user], Int.random(in: 0..<3, using: &generator) == 0 {
                return photoPost(by: user, of: pictures, using: &generator)
            }
            return .createPost(
                author: user, caption: nil,
                text: DemoNames.sentence(words: Int.random(in: 2...12, using: &generator), using: &generator) + mention)
        }
        let post = posts[index]
        switch roll {
        case 24..<27:
            return .repost(user: user, post: post)
        case 27..<29:
            return .createPost(
                author: user,
                text: DemoNames.sentence(words: Int.random(in: 2...10, using: &generator), using: &generator),
                repostOf: post)
        case 29..<50:
            return .like(user: user, post: post)
        case 50..<52:
            return .bookmark(user: user, post: post)
        case 52..<54:
            return .unlike(user: user, post: post)
        case 54:
            return .unrepost(user: user, post: post)
        case 68 where user != other:
            return .readConversation(reader: user, partner: other)
        case 69:
            return .readNotifications(user: user, upTo: seen)
        case 55..<68:
            return .addComment(
                author: user, post: post,
                text: DemoNames.sentence(words: Int.random(in: 1...8, using: &generator), using: &generator) + mention)
        case 70..<72 where life.room != nil:
            return lobbyCommand(of: user, in: life.room!, roll: roll, life: life, using: &generator)
        case 72..<84 where user != other:
            return .sendMessage(
                from: user, to: other,
                text: DemoNames.sentence(words: Int.random(in: 1...10, using: &generator), using: &generator))
        case 84..<91 where user != other:
            return .follow(follower: user, followee: other)
        case 91..<94 where user != other:
            return .unfollow(follower: user, followee: other)
        case 94..<96 where !life.photoPosts.isEmpty && Bool.random(using: &generator):
            return altEdit(of: life.photoPosts, using: &generator)
        case 94..<96:
            // Its author fixes a typo (a repost's text may be emptied).
            return .editPost(
                author: authors[index], post: post,
                text: DemoNames.sentence(words: Int.random(in: 1...12, using: &generator), using: &generator))
        case 96:
            // Its author regrets it.
            return .deletePost(author: authors[index], post: post)
        case 97 where !life.comments.isEmpty:
            return commentDeletion(life: life, orLikeOf: post, by: user, using: &generator)
        case 99 where Int.random(in: 0..<10, using: &generator) == 0:
            return mutedWord(by: user, using: &generator)
        case 98 where user != other:
            // Now and then someone has had enough of someone else.
            return Bool.random(using: &generator)
                ? .block(blocker: user, blocked: other) : .mute(muter: user, muted: other)
        default:
            return .editProfile(
                user: user, name: Bool.random(using: &generator) ? DemoNames.name(using: &generator) : nil,
                bio: DemoNames.sentence(words: Int.random(in: 0...6, using: &generator), using: &generator))
        }
    }

    /// A post of one to four of `user`'s pictures, most with their description as alt text, under a caption.
    private func photoPost(
        by user: UserID, of pictures: [(MediaID, String)], using generator: inout SeededGenerator
    ) -> Command {
        let count = Int.random(in: 1...min(PostCreated.maximumImages, pictures.count), using: &generator)
        let media = pictures.shuffled(using: &generator).prefix(count).map { media, description in
            PostImage(id: media, alt: Int.random(in: 0..<4, using: &generator) == 0 ? nil : description)
        }
        return .createPost(
            author: user,
            caption: DemoNames.sentence(words: Int.random(in: 1...8, using: &generator), using: &generator),
            media: media)
    }

    /// An author describes the pictures of one of `photoPosts` better (refused if they deleted the post since).
    private func altEdit(
        of photoPosts: [(post: PostID, author: UserID, images: [MediaID])], using generator: inout SeededGenerator
    ) -> Command {
        let photo = photoPosts[Int.random(in: photoPosts.indices, using: &generator)]
        return .editPost(
            author: photo.author, post: photo.post,
            media: photo.images.map { image in
                PostImage(
                    id: image,
                    alt: DemoNames.sentence(words: Int.random(in: 2...8, using: &generator), using: &generator))
            })
    }

    /// The lobby: members talk, others join, and now and then one leaves.
    private func lobbyCommand(
        of user: UserID, in room: RoomID, roll: Int, life: Life, using generator: inout SeededGenerator
    ) -> Command {
        guard life.roomMembers.contains(user) else { return .joinRoom(user: user, room: room) }
        guard roll > 70 || Int.random(in: 0..<10, using: &generator) > 0 else {
            return .leaveRoom(user: user, room: room)
        }
        return .sendRoomMessage(
            from: user, room: room,
            text: DemoNames.sentence(words: Int.random(in: 1...10, using: &generator), using: &generator))
    }

    /// A comment taken back by whoever wrote it (any, so that a wave seldom picks one twice); a like of `post` when
    /// the one picked is gone.
    private func commentDeletion(
        life: Life, orLikeOf post: PostID, by user: UserID, using generator: inout SeededGenerator
    ) -> Command {
        let (comment, commented, author) = life.comments[Int.random(in: life.comments.indices, using: &generator)]
        guard !life.deletedPosts.contains(commented), !life.deletedComments.contains(comment) else {
            return .like(user: user, post: post)
        }
        return .deleteComment(user: author, post: commented, comment: comment)
    }
}

/// What a run made and deleted, so that later commands leave deleted things alone.
private struct Life {
    var deletedPosts: Set<PostID> = []
    /// The lobby, and who is in it.
    var room: RoomID?
    var roomMembers: Set<UserID> = []
    /// Each comment made, with its post and author.
    var comments: [(CommentID, PostID, UserID)] = []
    var deletedComments: Set<CommentID> = []
    /// The photographers' pictures, with what each shows.
    var pictures: [UserID: [(MediaID, String)]] = [:]
    /// The photo posts, with their authors and images.
    var photoPosts: [(post: PostID, author: UserID, images: [MediaID])] = []
    /// The private accounts, and the requests to follow them not answered yet, oldest first.
    var privateUsers: Set<UserID> = []
    var requests: [(follower: UserID, followee: UserID)] = []
}

/// A command's result, with the command's place in its wave.
private struct IndexedResult: Sendable {
    let index: Int
    let result: CommandResult?
}
