import ChorusStorage

/// Every read model of one store, each with its tables opened: what the engine applies events to, and what a
/// ``ReadView`` reads through. One instance per store, shared by reference: a view is made for every request.
final class ReadModels: Sendable {
    let notifications: Notifications
    let profileCounters: ProfileCounters
    let postCounters: PostCounters
    let profiles: Profiles
    let hashtagPages: HashtagPages
    let posts: Posts
    let comments: Comments
    let homeTimeline: HomeTimeline
    let feedFanOut: FeedFanOut
    let followingFeeds: FollowingFeeds
    let conversations: Conversations
    let recentMessages: RecentMessages
    let userSearch: UserSearch
    let blocks: Blocks
    let moderation: Moderation
    let rooms: Rooms
    let readMarks: ReadMarks
    let devices: Devices
    let bookmarks: Bookmarks
    let mutedWords: MutedWords
    let followRequests: FollowRequests

    /// The models in the order they are applied to each event: those that check whether an event changes something
    /// (a like that was there, a follow edge) before the models that change it.
    static let types: [any ReadModel.Type] = [
        Notifications.self, ProfileCounters.self, PostCounters.self, Profiles.self, HashtagPages.self, Posts.self,
        Comments.self,
        HomeTimeline.self, FeedFanOut.self, FollowingFeeds.self, Conversations.self, RecentMessages.self,
        UserSearch.self, Blocks.self,
        Moderation.self, Rooms.self, ReadMarks.self, Devices.self, Bookmarks.self, MutedWords.self,
        FollowRequests.self,
    ]

    /// The checkpoint's table: the position applied through, and the layout's version.
    static let checkpoint: StoreTableDefinition = "checkpoint"

    /// Every table of the store.
    static var tables: [StoreTableDefinition] { [checkpoint] + types.flatMap { $0.tables } }

    let checkpoint: StoreTable
    /// In ``types``' order.
    let inApplyOrder: [any ReadModel]

    /// - Parameters:
    ///   - fanOutLimit: the followers from which on an author's posts are merged into feeds at read time
    ///     (``FeedFanOut``).
    ///   - fanOutPostLimit: the posts from which on they are too.
    init(store: KeyValueStore, fanOutLimit: Int, fanOutPostLimit: Int) {
        checkpoint = store.table(Self.checkpoint)
        notifications = Notifications(store: store)
        profileCounters = ProfileCounters(store: store)
        postCounters = PostCounters(store: store)
        profiles = Profiles(store: store)
        hashtagPages = HashtagPages(store: store)
        posts = Posts(store: store)
        comments = Comments(store: store)
        homeTimeline = HomeTimeline(store: store)
        feedFanOut = FeedFanOut(store: store, limit: fanOutLimit, postLimit: fanOutPostLimit)
        followingFeeds = FollowingFeeds(store: store)
        conversations = Conversations(store: store)
        recentMessages = RecentMessages(store: store)
        userSearch = UserSearch(store: store)
        blocks = Blocks(store: store)
        moderation = Moderation(store: store)
        rooms = Rooms(store: store)
        readMarks = ReadMarks(store: store)
        devices = Devices(store: store)
        bookmarks = Bookmarks(store: store)
        mutedWords = MutedWords(store: store)
        followRequests = FollowRequests(store: store)
        inApplyOrder = [
            notifications, profileCounters, postCounters, profiles, hashtagPages, posts, comments, homeTimeline,
            feedFanOut,
            followingFeeds,
            conversations, recentMessages, userSearch, blocks, moderation, rooms, readMarks, devices, bookmarks,
            mutedWords, followRequests,
        ]
        assert(inApplyOrder.map { ObjectIdentifier(type(of: $0)) } == Self.types.map(ObjectIdentifier.init))
    }
}
