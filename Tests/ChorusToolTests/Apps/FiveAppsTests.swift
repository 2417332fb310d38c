import ChorusClient
import ChorusTestSupport
import Foundation
import Testing

/// The five apps Chorus is for, each rebuilt on it through the SDK alone, against `chorus serve` as a process. In the
/// middle of each, the server is killed and started again: every live stream drops and must resume by itself, with no
/// event twice and none missed.
@Suite("The five apps, through the SDK", .serialized)
struct FiveAppsTests {
    @Test(
        "Flash Chat: sign up, one room for everyone, chat in order, live across a server crash, a direct message pushed, log out forgetting the phone"
    )
    func flashChat() async throws {
        try await AppServer.run { server in
            let (ana, _) = try await server.user("Ana")
            let (bo, _) = try await server.user("Bo")
            let room = try await ana.createRoom(named: "Flash Chat")
            // Bo finds the room among every room, and joins.
            let found = try await bo.rooms(all: true).first(10)
            #expect(found.map(\.id) == [room.id] && found.first?.isMember == false)
            #expect(try await bo.join(room: room.id).members == 2)

            // A screen reads, then listens from what it read.
            #expect(try await ana.messages(inRoom: room.id).first(10).isEmpty)
            let live = LiveCollector(try await ana.live([.room(room.id)]))
            try await bo.send("Hi Ana", toRoom: room.id)
            try await ana.send("Hi Bo", toRoom: room.id)
            try await live.waitFor(2)
            try await server.crashAndRestart()
            try await bo.send("Did the server just restart?", toRoom: room.id)
            try await ana.send("It did", toRoom: room.id)
            let events = try await live.waitFor(4)
            // One more after those: a message delivered again would come before it.
            try await bo.send("See you", toRoom: room.id)
            let withMarker = try await live.waitFor(5)
            #expect(withMarker.count == 5 && withMarker.prefix(4).map(\.position) == events.map(\.position))
            if case .message(let message) = withMarker.last?.event {
                #expect(message.text == "See you", "nothing twice")
            } else {
                Issue.record("the fifth event is no message: \(withMarker)")
            }
            let texts = events.compactMap { update -> String? in
                guard case .message(let message) = update.event else { return nil }
                return message.text
            }
            #expect(texts == ["Hi Ana", "Hi Bo", "Did the server just restart?", "It did"])
            #expect(events.map(\.position) == events.map(\.position).sorted())

            let history = try await bo.messages(inRoom: room.id).first(10)
            #expect(history.map(\.text) == texts + ["See you"])
            #expect(history.allSatisfy { $0.roomId == room.id })

            // Room chat is not pushed; a direct message is, to Bo's phone, until he logs out forgetting it.
            let phone = try await server.registerPhone(of: bo)
            let device = try #require(try await bo.devices().first(1).first)
            try await ana.send("Are you there?", to: (try await bo.me()).id)
            try await server.waitForAlerts(["Ana: Are you there?"], on: phone)
            try await bo.logOut(forgettingDevice: device.id)
            await #expect(throws: ChorusError.self) { try await bo.me() }
            live.stop()
        }
    }

    @Test(
        "Twitter clone: tweets, retweets, tabs, likes, every user listed, and chat, live across a server crash, pushed to the author's phone"
    )
    func twitterClone() async throws {
        try await AppServer.run { server in
            let (ana, anaProfile) = try await server.user("Ana")
            let (bo, boProfile) = try await server.user("Bo")
            let (cy, cyProfile) = try await server.user("Cy")
            // The "all users" screen and the new-message picker: no query lists everyone but the caller.
            let everyone = try await ana.searchUsers().first(10)
            #expect(Set(everyone.map(\.id)) == [boProfile.id, cyProfile.id])
            // A tapped @handle opens the profile; Ana picks a handle of her own, and the old one is free.
            #expect(try await ana.user(byHandle: "@" + cyProfile.handle).id == cyProfile.id)
            #expect(try await ana.editProfile(handle: "ana_tweets").handle == "ana_tweets")
            #expect(try await bo.searchUsers("@ana_tw").first(10).map(\.id) == [anaProfile.id])

            let phone = try await server.registerPhone(of: ana)
            try await cy.follow(anaProfile.id)
            let feed = LiveCollector(try await cy.live([.feed]))
            let tweet = try await ana.post(text: "First tweet")
            try await feed.waitFor(1)
            try await server.crashAndRestart()
            // Bo retweets Ana's tweet, Ana retweets it too: Cy's timeline shows it once, as Ana's retweet.
            let retweet = try await bo.repost(tweet.id)
            #expect(retweet.reposted && retweet.reposts == 1)
            #expect(try await ana.repost(tweet.id).reposts == 2)
            let quote = try await ana.post(text: "Quoting myself", quoting: tweet.id)
            let events = try await feed.waitFor(3)
            #expect(events.map(\.name) == ["post", "post", "post"])
            guard case .post(let reposted) = events[1].event else {
                Issue.record("the second feed event is \(events[1].event), not the retweet")
                return
            }
            #expect(reposted.id == tweet.id && reposted.repostedBy?.id == anaProfile.id)

            let timeline = try await cy.followingFeed().first(10)
            #expect(timeline.map(\.id) == [quote.id, tweet.id])
            #expect(timeline[1].repostedBy?.id == anaProfile.id && timeline[1].reposts == 2)
            // Profile tabs: tweets, retweets.
            #expect(try await cy.posts(of: anaProfile.id, kind: .original).first(10).map(\.id) == [tweet.id])
            #expect(try await cy.posts(of: anaProfile.id, kind: .reposts).first(10).map(\.id) == [quote.id, tweet.id])
            #expect(try await cy.posts(of: boProfile.id).first(10).map(\.repostedBy?.id) == [boProfile.id])

            try await cy.like(tweet.id)
            #expect(try await cy.likes(of: (try await cy.me()).id).first(10).map(\.id) == [tweet.id])
            let notifications = try await ana.notifications().first(10)
            #expect(Set(notifications.map(\._type.rawValue)) == ["like", "repost", "follow"])
            #expect(try await bo.unrepost(tweet.id).reposts == 1)

            try await cy.send("Great tweet", to: anaProfile.id)
            let conversation = try #require(try await ana.conversations().first(1).first)
            #expect(conversation.lastMessage.text == "Great tweet" && conversation.unread == 1)
            // Each of those reached Ana's phone once, in order, the crash between them.
            try await server.waitForAlerts(
                ["Cy followed you", "Bo reposted your post", "Cy liked your post", "Cy: Great tweet"], on: phone)
            // Replies limited to the people Ana follows: Cy is not one of them, until she opens them to everyone.
            let limited = try await ana.post(text: "Only people I follow can reply", replies: .following)
            #expect(limited.replies == .following)
            do {
                try await cy.comment(on: limited.id, "Let me in")
                Issue.record("a reply outside the post's replies was taken")
            } catch let error as ChorusError {
                #expect(error.status == 403 && error.code == "replies_restricted", "\(error)")
            }
            #expect(try await ana.editPost(limited.id, replies: .everyone).replies == .everyone)
            try await cy.comment(on: limited.id, "Thanks")
            // A question to Cy alone: the tweet mentions Cy, who is notified and may reply; Bo may not.
            let question = try await ana.post(text: "@\(cyProfile.handle) what do you think?", replies: .mentioned)
            #expect(question.mentions.map(\.id) == [cyProfile.id])
            #expect(try await cy.notifications().first(1).first?._type == .mention)
            try await cy.comment(on: question.id, "I think so")
            await #expect(throws: ChorusError.self) { try await bo.comment(on: question.id, "Me too") }
            // Cy has not watched the finale: tweets about it stay out of Cy's timeline until Cy unmutes it.
            let muted = try await cy.muteWord("finale")
            let spoiler = try await ana.post(text: "The #finale was wild")
            #expect(try await !cy.homeFeed().first(20).map(\.id).contains(spoiler.id))
            #expect(try await cy.mutedWords().first(10).map(\.word) == ["finale"])
            try await cy.unmuteWord(muted.id)
            #expect(try await cy.homeFeed().first(20).map(\.id).contains(spoiler.id))
            feed.stop()
        }
    }

    @Test(
        "Instagram-like: upload, grid, Following feed, a profile edit seen in old posts and notifications, comments live, messages with unread counts, pushes with badges"
    )
    func instagramLike() async throws {
        try await AppServer.run { server in
            let (ana, anaProfile) = try await server.user("Ana")
            let (bo, boProfile) = try await server.user("Bo")
            try await bo.follow(anaProfile.id)
            // Three shots from her phone, one of them HEIC, posted together with alt texts.
            let shots: [(Data, ChorusClient.ImageType)] = [
                (Data(SampleImages.bytes("photo.heic")), .heic), (pngBytes, .png),
                (Data(SampleImages.png(withText: "the pier")), .png),
            ]
            var uploaded: [Media] = []
            for (bytes, type) in shots { uploaded.append(try await ana.uploadImage(bytes, contentType: type)) }
            let alts = ["Boats in the harbour at dawn", nil, "The pier"]
            let photo = try await ana.post(
                caption: "Harbour at dawn", media: zip(uploaded, alts).map { PostImage(alt: $1, id: $0.id) })
            #expect(photo.media.map(\.id) == uploaded.map(\.id) && photo.media.map(\.alt) == alts)
            #expect(photo.media.first?._type == .imageJpeg, "HEIC is served as JPEG")
            _ = try await ana.post(text: "Words only")
            #expect(try await bo.homeFeed(mediaOnly: true).first(10).map(\.id) == [photo.id])
            #expect(try await bo.followingFeed().first(10).count == 2)

            // Her grid: a cell per photo post, its first image's small variant, the BlurHash drawn until it loads.
            let grid = try await bo.posts(of: anaProfile.id, kind: .media).first(10)
            #expect(grid.map(\.id) == [photo.id])
            let cell = try #require(grid.first?.media.first?.variants?.small)
            #expect(grid.first?.media.first?.blurhash?.count == 28 && cell.width <= 640 && cell.height <= 640)
            let thumbnail = try await server.fetch(cell.url)
            #expect(thumbnail.status == 200 && thumbnail.headers["content-type"] == "image/jpeg")
            // She describes the second picture too; Bo's feed shows it.
            let described = alts.map { $0 ?? "Gulls over the water" }
            _ = try await ana.editPost(photo.id, media: zip(uploaded, described).map { PostImage(alt: $1, id: $0.id) })
            #expect(try await bo.post(photo.id).media.map(\.alt) == described)

            let phone = try await server.registerPhone(of: ana)
            let comments = LiveCollector(try await ana.live([.post(photo.id), .conversations]))
            try await bo.comment(on: photo.id, "Beautiful")
            try await comments.waitFor(1)
            try await server.crashAndRestart()
            try await bo.comment(on: photo.id, "Where is it?")
            try await bo.send("Can I use it?", to: anaProfile.id)
            let events = try await comments.waitFor(3)
            #expect(events.map(\.name) == ["comment", "comment", "conversation"])
            try await server.waitForAlerts(
                ["Bo commented on your post", "Bo commented on your post", "Bo: Can I use it?"], on: phone)
            // Each push once, as the phone shows it: one delivered just before the crash may come again after it.
            var pushed = Set<String>()
            let badges = server.apns.received.filter { $0.token == phone }
                .filter { pushed.insert($0.headers["apns-id"] ?? "").inserted }
                .map { ($0.payload["aps"] as? [String: Any])?["badge"] as? Int }
            #expect(badges == [2, 3, 4], "unread: the follow and the comments, then the conversation")

            // Bo renames himself and changes his picture: every old place shows the new profile.
            let picture = try await bo.uploadImage(pngBytes, contentType: .png)
            try await bo.editProfile(name: "Bo Kim", profileImage: picture.id)
            let oldComments = try await ana.comments(on: photo.id).first(10)
            #expect(oldComments.allSatisfy { $0.author.name == "Bo Kim" && $0.author.profileImage != nil })
            let notifications = try await ana.notifications().first(10)
            #expect(notifications.filter { $0.actor.id == boProfile.id }.allSatisfy { $0.actor.name == "Bo Kim" })

            #expect(try await ana.me().unreadConversations == 1)
            let row = try #require(try await ana.conversations().first(1).first)
            #expect(row.unread == 1 && row.partner.name == "Bo Kim")
            #expect(try await ana.markConversationRead(with: boProfile.id) == 0)
            let receipt = try #require(try await bo.conversations().first(1).first)
            #expect(receipt.partnerReadUpTo == row.lastMessage.id)
            comments.stop()
        }
    }

    @Test(
        "User-feeds fan-out: a follow back-fills, an unfollow takes out, and the feed follows it live across a crash; the follow pushed"
    )
    func userFeedsFanOut() async throws {
        try await AppServer.run { server in
            let (ana, _) = try await server.user("Ana")
            let (bo, boProfile) = try await server.user("Bo")
            let phone = try await server.registerPhone(of: bo)
            let older = try await bo.post(text: "before the follow")
            #expect(try await ana.followingFeed().first(10).isEmpty)
            let feed = LiveCollector(try await ana.live([.feed]))
            try await ana.follow(boProfile.id)
            #expect(try await ana.followingFeed().first(10).map(\.id) == [older.id], "back-filled")

            let newer = try await bo.post(text: "after the follow")
            try await feed.waitFor(1)
            try await server.crashAndRestart()
            let newest = try await bo.post(text: "after the crash")
            try await ana.unfollow(boProfile.id)
            let events = try await feed.waitFor(5)
            #expect(events.map(\.name) == ["post", "post", "post_removed", "post_removed", "post_removed"])
            var removed = Set<String>()
            for case .postRemoved(let post) in events.map(\.event) { removed.insert(post) }
            #expect(removed == [older.id, newer.id, newest.id])
            #expect(try await ana.followingFeed().first(10).isEmpty, "taken out")
            try await server.waitForAlerts(["Ana followed you"], on: phone)
            feed.stop()
        }
    }

    @Test(
        "Instagram v0.1: image posts, likes, comments and a profile image; the like and the comment pushed; a private account's requests"
    )
    func instagramV01() async throws {
        try await AppServer.run { server in
            let (ana, anaProfile) = try await server.user("Ana")
            let (bo, _) = try await server.user("Bo")
            let avatar = try await ana.uploadImage(pngBytes, contentType: .png)
            let profile = try await ana.editProfile(profileImage: avatar.id)
            #expect(profile.profileImage == avatar.variants?.small.url && avatar.variants?.small.url != nil)

            let image = try await ana.uploadImage(pngBytes, contentType: .png)
            // Bo watches a tag's new posts as they come.
            let tagged = LiveCollector(try await bo.live([.hashtag("#바다")]))
            let post = try await ana.post(caption: "first photo #Harbour #바다", image: image.id)
            #expect(post.image == image.url)
            #expect(try await tagged.waitFor(1).map(\.name) == ["post"])
            tagged.stop()
            // The tag's grid, tapped from the caption, and the search that suggests it.
            #expect(post.hashtags == ["harbour", "바다"])
            #expect(try await bo.posts(taggedWith: "#바다", mediaOnly: true).first(10).map(\.id) == [post.id])
            #expect(try await bo.searchHashtags("har").first(10).map(\.tag) == ["harbour"])
            let phone = try await server.registerPhone(of: ana)
            let likes = LiveCollector(try await ana.live([.post(post.id), .notifications]))
            #expect(try await bo.like(post.id).likes == 1)
            try await likes.waitFor(2)
            try await server.crashAndRestart()
            try await bo.comment(on: post.id, "Lovely")
            let events = try await likes.waitFor(4)
            #expect(events.map(\.name) == ["like", "notification", "comment", "notification"])

            let seen = try await bo.post(post.id)
            #expect(seen.likes == 1 && seen.comments == 1 && seen.hasLiked)
            #expect(seen.author.profileImage == profile.profileImage && seen.author.id == anaProfile.id)
            // Saved for later: Bo's alone, not a notification of Ana's.
            #expect(try await bo.bookmark(post.id))
            let saved = try await bo.bookmarks(mediaOnly: true).first(20)
            #expect(saved.map(\.id) == [post.id] && saved.allSatisfy(\.hasBookmarked))
            #expect(try await ana.bookmarks().first(20).isEmpty)
            #expect(try await !ana.post(post.id).hasBookmarked)
            #expect(try await !bo.unbookmark(post.id))
            #expect(try await bo.bookmarks().first(20).isEmpty)
            likes.stop()

            // Ana goes private: Cy must ask, sees her header but not her grid, until she accepts.
            #expect(try await ana.editProfile(isPrivate: true).isPrivate)
            let (cy, cyProfile) = try await server.user("Cy")
            let asked = try await cy.follow(anaProfile.id)
            #expect(asked.requested && !asked.following)
            let header = try await cy.user(anaProfile.id)
            #expect(header.isPrivate && header.followRequested && header.posts == 1)
            do {
                _ = try await cy.posts(of: anaProfile.id, kind: .media).first(10)
                Issue.record("a private account's grid was shown to someone who does not follow it")
            } catch let error as ChorusError {
                #expect(error.status == 403 && error.code == "private_account", "\(error)")
            }
            #expect(try await !cy.posts(taggedWith: "바다").first(10).contains { $0.id == post.id })
            #expect(try await ana.followRequests().first(10).map(\.id) == [cyProfile.id])
            #expect(try await ana.notifications().first(1).first?._type == .followRequest)
            try await ana.acceptFollowRequest(from: cyProfile.id)
            #expect(try await cy.notifications().first(1).first?._type == .followAccepted)
            #expect(try await cy.posts(of: anaProfile.id, kind: .media).first(10).map(\.id) == [post.id])
            #expect(try await cy.followingFeed().first(10).map(\.id) == [post.id])
            try await server.waitForAlerts(
                ["Bo liked your post", "Bo commented on your post", "Cy asked to follow you"], on: phone)
        }
    }
}
