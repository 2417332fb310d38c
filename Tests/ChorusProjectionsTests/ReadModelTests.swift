import ChorusDomain
import ChorusLog
import ChorusProjections
import Testing

@Suite("Read models")
struct ReadModelTests {
    @Test("profiles count followers, following and posts; isFollowed and isMe are the viewer's")
    func profiles() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            _ = try await app.post(ana, "first")
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            let (anaSeenByBo, boSeenByBo) = try app.read { view in
                (try view.profile(ana, viewer: bo), try view.profile(bo, viewer: bo))
            }
            #expect(anaSeenByBo?.followers == 1 && anaSeenByBo?.posts == 1 && anaSeenByBo?.isFollowed == true)
            #expect(anaSeenByBo?.isMe == false && anaSeenByBo?.email == nil)
            #expect(boSeenByBo?.following == 1 && boSeenByBo?.isMe == true && boSeenByBo?.email != nil)
            _ = try await app.chorus.execute(.unfollow(follower: bo, followee: ana))
            let after = try app.read { try $0.profile(ana, viewer: bo) }
            #expect(after?.followers == 0 && after?.isFollowed == false)
        }
    }

    @Test(
        "the Following feed holds one's own posts and the followees'; a follow back-fills in time order; an unfollow takes them out"
    )
    func followingFeed() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let old1 = try await app.post(bo, "bo 1")
            let own = try await app.post(ana, "ana 1")
            let old2 = try await app.post(bo, "bo 2")
            #expect(try app.read { try $0.followingFeed(of: ana, page: PageRequest()).items.map(\.id) } == [own])

            _ = try await app.chorus.execute(.follow(follower: ana, followee: bo))
            #expect(
                try app.read { try $0.followingFeed(of: ana, page: PageRequest()).items.map(\.id) } == [
                    old2, own, old1,
                ])
            let new = try await app.post(bo, "bo 3")
            #expect(
                try app.read { try $0.followingFeed(of: ana, page: PageRequest()).items.map(\.id) } == [
                    new, old2, own, old1,
                ])
            #expect(
                try app.read { try $0.followingFeed(of: bo, page: PageRequest()).items.map(\.id) } == [new, old2, old1])

            // Pages of one: a post that lands between two requests neither repeats nor shifts the pages after it.
            var paged: [PostID] = []
            var cursor: PageCursor?
            var between: PostID?
            repeat {
                let page = try app.read { try $0.followingFeed(of: ana, page: PageRequest(limit: 1, cursor: cursor)) }
                paged += page.items.map(\.id)
                cursor = page.nextCursor
                if paged.count == 1 { between = try await app.post(bo, "between two pages") }
            } while cursor != nil
            #expect(paged == [new, old2, own, old1])

            _ = try await app.chorus.execute(.unfollow(follower: ana, followee: bo))
            #expect(try app.read { try $0.followingFeed(of: ana, page: PageRequest()).items.map(\.id) } == [own])
            let home = try app.read { try $0.homeFeed(viewer: ana, page: PageRequest()).items.map(\.id) }
            #expect(home == [try #require(between), new, old2, own, old1])
        }
    }

    @Test("posts carry like and comment counts, hasLiked for the viewer, and the reposted post")
    func posts() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let image = app.media.add(uploadedBy: ana)
            let photo = PostID(
                try await app.chorus.execute(
                    .createPost(author: ana, caption: "sunset", media: [PostImage(id: image, alt: nil)])
                ).createdID!)!
            _ = try await app.chorus.execute(.like(user: bo, post: photo))
            _ = try await app.chorus.execute(.addComment(author: bo, post: photo, text: "wow"))
            _ = try await app.chorus.execute(.addComment(author: ana, post: photo, text: "thanks"))
            let repost = PostID(try await app.chorus.execute(.createPost(author: bo, repostOf: photo)).createdID!)!
            let (seenByBo, seenByAna, shared) = try app.read { view in
                (
                    try view.post(photo, viewer: bo), try view.post(photo, viewer: ana),
                    try view.post(repost, viewer: ana)
                )
            }
            #expect(seenByBo?.likes == 1 && seenByBo?.comments == 2 && seenByBo?.hasLiked == true)
            #expect(
                seenByAna?.hasLiked == false && seenByAna?.media.map(\.id) == [image] && seenByAna?.caption == "sunset")
            #expect(shared?.repostOf?.id == photo && shared?.author.name == "Bo")
            let (ascending, descending) = try app.read { view in
                (
                    try view.comments(on: photo, page: PageRequest())?.items.map(\.text),
                    try view.comments(on: photo, order: .newestFirst, page: PageRequest())?.items.map(\.text)
                )
            }
            #expect(ascending == ["wow", "thanks"])
            #expect(descending == ["thanks", "wow"])
            #expect(
                try app.read { try $0.likedPosts(by: bo, viewer: nil, page: PageRequest())?.items.map(\.id) } == [photo]
            )
            _ = try await app.chorus.execute(.unlike(user: bo, post: photo))
            #expect(try app.read { try $0.post(photo, viewer: bo)?.likes } == 0)
            #expect(try app.read { try $0.likedPosts(by: bo, viewer: nil, page: PageRequest())?.items } == [])
            #expect(try app.read { try $0.comments(on: .make(), page: PageRequest()) } == nil)
        }
    }

    @Test("keyset pages neither repeat nor skip items when posts land between two page requests")
    func keysetPages() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            var posted: [PostID] = []
            for index in 0..<7 { posted.append(try await app.post(ana, "post \(index)")) }
            let first = try app.read { try $0.homeFeed(viewer: nil, page: PageRequest(limit: 3)) }
            #expect(first.items.map(\.id) == Array(posted.reversed().prefix(3)))
            let cursor = try #require(first.nextCursor)
            for index in 7..<10 { _ = try await app.post(ana, "late \(index)") }
            var seen = first.items.map(\.id)
            var next: PageCursor? = cursor
            while let current = next {
                let page = try app.read { try $0.homeFeed(viewer: nil, page: PageRequest(limit: 3, cursor: current)) }
                seen += page.items.map(\.id)
                next = page.nextCursor
            }
            #expect(seen == posted.reversed())
            #expect(PageCursor(cursor.description) == cursor)
            #expect(PageCursor("not a cursor") == nil)
            let followers = try app.read { try $0.followers(of: ana, viewer: nil, page: PageRequest()) }
            #expect(followers?.items == [] && followers?.nextCursor == nil)
        }
    }
}
