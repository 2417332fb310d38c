import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: private accounts and follow requests")
struct PrivateAccountAPITests {
    /// The ids of a page of posts.
    private static func ids(_ answer: APIFixture.Answer) -> [String] {
        answer.items.compactMap { $0["id"] as? String }
    }

    /// The types of a user's notifications, newest first.
    private static func notificationTypes(of user: APIFixture.User, _ api: APIFixture) async throws -> [String] {
        try await api.call(.get, "/v1/notifications", token: user.token).items.compactMap { $0["type"] as? String }
    }

    @Test(
        "following a private account asks; the account accepts, declines, or the asker withdraws; each notifies and lists as it should"
    )
    func requests() async throws {
        try await withAPI { api in
            let pia = try await api.register("Pia")
            let bob = try await api.register("Bob")
            let cyd = try await api.register("Cyd")
            let dee = try await api.register("Dee")
            let made = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            #expect(made.status == .ok && made.object["isPrivate"] as? Bool == true, "\(made.object)")

            let asked = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: bob.token)
            #expect(asked.status == .ok)
            #expect(asked.object["following"] as? Bool == false && asked.object["requested"] as? Bool == true)
            #expect(asked.object["followers"] as? Int == 0)
            let head = api.head
            let again = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: bob.token)
            #expect(again.object["requested"] as? Bool == true && api.head == head, "a repeat asks nothing more")
            let seen = try await api.call(.get, "/v1/users/\(pia.id)", token: bob.token)
            #expect(seen.object["isPrivate"] as? Bool == true && seen.object["followRequested"] as? Bool == true)
            #expect(seen.object["isFollowed"] as? Bool == false)
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: cyd.token)
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: dee.token)

            let pending = try await api.call(.get, "/v1/me/follow-requests", token: pia.token)
            #expect(Self.ids(pending) == [dee.id, cyd.id, bob.id], "newest first")
            #expect(try await api.call(.get, "/v1/me/follow-requests", token: bob.token).items.isEmpty)
            #expect(
                try await Self.notificationTypes(of: pia, api) == [
                    "follow_request", "follow_request", "follow_request",
                ])

            // Accepted: Bob follows, and hears of it; Pia's request notification is answered.
            let accept = "/v1/me/follow-requests/\(bob.id)/accept"
            #expect(try await api.call(.post, accept, token: pia.token).status == .noContent)
            #expect(try await api.call(.post, accept, token: pia.token).status == .noContent, "a repeat is no error")
            let followed = try await api.call(.get, "/v1/users/\(pia.id)", token: bob.token)
            #expect(
                followed.object["isFollowed"] as? Bool == true && followed.object["followRequested"] as? Bool == false)
            #expect(followed.object["followers"] as? Int == 1)
            let bobs = try await api.call(.get, "/v1/notifications", token: bob.token)
            #expect(bobs.items.first?["type"] as? String == "follow_accepted")
            #expect((bobs.items.first?["actor"] as? [String: Any])?["id"] as? String == pia.id)

            // Declined, and withdrawn: no follow, and the request and its notification are gone.
            #expect(
                try await api.call(.post, "/v1/me/follow-requests/\(cyd.id)/decline", token: pia.token).status
                    == .noContent)
            let withdrawn = try await api.call(.delete, "/v1/users/\(pia.id)/follow", token: dee.token)
            #expect(withdrawn.object["following"] as? Bool == false && withdrawn.object["requested"] as? Bool == false)
            #expect(try await api.call(.get, "/v1/me/follow-requests", token: pia.token).items.isEmpty)
            #expect(try await Self.notificationTypes(of: pia, api).isEmpty)
            #expect(
                try await api.call(.get, "/v1/users/\(pia.id)", token: cyd.token).object["isFollowed"] as? Bool == false
            )

            // Only a pending request can be answered.
            let none = try await api.call(.post, "/v1/me/follow-requests/\(cyd.id)/accept", token: pia.token)
            #expect(none.status == .notFound && none.errorCode == "not_found")
            let refused = try await api.call(.post, "/v1/me/follow-requests/\(dee.id)/decline", token: pia.token)
            #expect(refused.status == .notFound)
            let malformed = try await api.call(.post, "/v1/me/follow-requests/nobody/accept", token: pia.token)
            #expect(malformed.status == .notFound, "\(malformed.status)")
        }
    }

    @Test("a block either way, or the asker's deleted account, ends a pending request and takes back its notification")
    func requestsEnd() async throws {
        try await withAPI { api in
            let pia = try await api.register("Pia")
            let bob = try await api.register("Bob")
            let cyd = try await api.register("Cyd")
            let dee = try await api.register("Dee")
            _ = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            for user in [bob, cyd, dee] {
                _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: user.token)
            }
            _ = try await api.call(.put, "/v1/users/\(bob.id)/block", token: pia.token)
            _ = try await api.call(.put, "/v1/users/\(pia.id)/block", token: cyd.token)
            let deleted = try await api.call(.delete, "/v1/me", token: dee.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)
            #expect(try await api.call(.get, "/v1/me/follow-requests", token: pia.token).items.isEmpty)
            #expect(try await Self.notificationTypes(of: pia, api).isEmpty)
            // Unblocked, Bob asks again from the start.
            _ = try await api.call(.delete, "/v1/users/\(bob.id)/block", token: pia.token)
            let seen = try await api.call(.get, "/v1/users/\(pia.id)", token: bob.token)
            #expect(seen.object["followRequested"] as? Bool == false && seen.object["isFollowed"] as? Bool == false)
        }
    }

    @Test("turning private off accepts every pending request; turning it on keeps the followers there are")
    func turningPrivacyOff() async throws {
        try await withAPI { api in
            let pia = try await api.register("Pia")
            let bob = try await api.register("Bob")
            let cyd = try await api.register("Cyd")
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: bob.token)
            _ = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            let kept = try await api.call(.get, "/v1/users/\(pia.id)", token: bob.token)
            #expect(kept.object["isFollowed"] as? Bool == true, "existing followers stay")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: cyd.token)
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: dee.token)

            let head = api.head
            let same = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true, "bio": "hi"])
            #expect(same.object["isPrivate"] as? Bool == true && api.head.rawValue == head.rawValue + 1)
            let opened = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": false])
            #expect(opened.status == .ok && opened.object["isPrivate"] as? Bool == false)
            #expect(opened.object["followers"] as? Int == 3, "\(opened.object)")
            #expect(try await api.call(.get, "/v1/me/follow-requests", token: pia.token).items.isEmpty)
            for user in [cyd, dee] {
                #expect(try await Self.notificationTypes(of: user, api) == ["follow_accepted"])
            }
            // Public again: a follow is a follow.
            let eve = try await api.register("Eve")
            let follow = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: eve.token)
            #expect(follow.object["following"] as? Bool == true && follow.object["requested"] as? Bool == false)
        }
    }

    @Test(
        "a private account's posts, tabs and lists answer 403 private_account to a non-follower and a requester, all to a follower, and 404 to whom it blocked"
    )
    func visibilityMatrix() async throws {
        try await withAPI { api in
            let pia = try await api.register("Pia")
            let stranger = try await api.register("Sam")
            let requester = try await api.register("Rae")
            let follower = try await api.register("Fay")
            let blocked = try await api.register("Bea")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: follower.token)
            _ = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: requester.token)
            _ = try await api.call(.put, "/v1/users/\(blocked.id)/block", token: pia.token)
            let post = try await api.post(pia, "for my followers #quiet")
            let handle = try #require(
                try await api.call(.get, "/v1/me", token: pia.token).object["handle"] as? String)

            enum Persona: CaseIterable { case stranger, requester, follower, blocked }
            struct Expectation {
                let method: HTTPRequest.Method
                let path: String
                var json: [String: Any]? = nil
                /// What a stranger or a requester, a follower, and a blocked user get.
                let refused: (status: Int, code: String?)
                let follower: Int
                let blocked: (status: Int, code: String?)
            }
            let privateAccount = (403, Optional("private_account"))
            let missing = (404, Optional("not_found"))
            let blockedWrite = (403, Optional("blocked"))
            let expectations = [
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)", refused: (200, nil), follower: 200, blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/by-handle/\(handle)", refused: (200, nil), follower: 200,
                    blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)/posts", refused: privateAccount, follower: 200,
                    blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)/posts?kind=media", refused: privateAccount,
                    follower: 200, blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)/likes", refused: privateAccount, follower: 200,
                    blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)/followers", refused: privateAccount, follower: 200,
                    blocked: missing),
                Expectation(
                    method: .get, path: "/v1/users/\(pia.id)/following", refused: privateAccount, follower: 200,
                    blocked: missing),
                Expectation(
                    method: .get, path: "/v1/posts/\(post)", refused: privateAccount, follower: 200, blocked: missing),
                Expectation(
                    method: .get, path: "/v1/posts/\(post)/comments", refused: privateAccount, follower: 200,
                    blocked: missing),
                Expectation(
                    method: .put, path: "/v1/posts/\(post)/like", refused: privateAccount, follower: 200,
                    blocked: blockedWrite),
                Expectation(
                    method: .put, path: "/v1/posts/\(post)/repost", refused: privateAccount, follower: 200,
                    blocked: blockedWrite),
                Expectation(
                    method: .put, path: "/v1/posts/\(post)/bookmark", refused: privateAccount, follower: 200,
                    blocked: blockedWrite),
                Expectation(
                    method: .post, path: "/v1/posts/\(post)/comments", json: ["text": "hi"], refused: privateAccount,
                    follower: 201, blocked: blockedWrite),
                Expectation(
                    method: .post, path: "/v1/posts", json: ["text": "quoting", "repostOf": post],
                    refused: privateAccount, follower: 201, blocked: blockedWrite),
            ]
            for persona in Persona.allCases {
                let user =
                    switch persona {
                    case .stranger: stranger
                    case .requester: requester
                    case .follower: follower
                    case .blocked: blocked
                    }
                for expectation in expectations {
                    let head = api.head
                    let answer = try await api.call(
                        expectation.method, expectation.path, token: user.token, json: expectation.json)
                    let (status, code): (Int, String?) =
                        switch persona {
                        case .stranger, .requester: expectation.refused
                        case .follower: (expectation.follower, nil)
                        case .blocked: expectation.blocked
                        }
                    let label = "\(expectation.method) \(expectation.path) by the \(persona)"
                    #expect(answer.status.code == status, "\(label): \(answer.status) \(answer.object)")
                    if let code { #expect(answer.errorCode == code, "\(label)") }
                    if status >= 400 { #expect(api.head == head, "\(label) appended nothing") }
                }
                // The post shows in none of their lists but the follower's.
                let home = Self.ids(try await api.call(.get, "/v1/feed/home", token: user.token))
                let tagged = Self.ids(try await api.call(.get, "/v1/hashtags/quiet/posts", token: user.token))
                let reads = persona == .follower
                #expect(home.contains(post) == reads, "Home of the \(persona)")
                #expect(tagged.contains(post) == reads, "the hashtag page of the \(persona)")
            }
            // The profile header and counts stay visible; only the requester awaits.
            let header = try await api.call(.get, "/v1/users/\(pia.id)", token: requester.token)
            #expect(header.object["followers"] as? Int == 1 && header.object["posts"] as? Int == 1)
            #expect(header.object["followRequested"] as? Bool == true)
            #expect(
                try await api.call(.get, "/v1/users/\(pia.id)", token: stranger.token).object["followRequested"]
                    as? Bool == false)
            // The requester's follow is asked again as a request; a blocked user cannot ask.
            let blockedAsk = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: blocked.token)
            #expect(blockedAsk.status == .forbidden && blockedAsk.errorCode == "blocked")
            // Live: the post's topic is refused as the post is.
            let live = try await api.call(.get, "/v1/live?topics=post:\(post)", token: stranger.token)
            #expect(live.status == .forbidden && live.errorCode == "private_account")
            let liveBlocked = try await api.call(.get, "/v1/live?topics=post:\(post)", token: blocked.token)
            #expect(liveBlocked.status == .notFound)
        }
    }

    @Test(
        "reposts, bookmarks and mentions of a private account's posts reach no one outside it, and leave when a follower unfollows; a rebuild agrees"
    )
    func reachAndRebuild() async throws {
        try await withAPI { api in
            let pia = try await api.register("Pia")
            let fay = try await api.register("Fay")
            let sam = try await api.register("Sam")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: fay.token)
            _ = try await api.call(.put, "/v1/users/\(fay.id)/follow", token: sam.token)
            let samHandle = try #require(
                try await api.call(.get, "/v1/me", token: sam.token).object["handle"] as? String)
            let earlier = try await api.post(pia, "said in public")
            _ = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            let quiet = try await api.post(pia, "quiet @\(samHandle)")
            _ = try await api.call(.put, "/v1/posts/\(quiet)/repost", token: fay.token)
            _ = try await api.call(.put, "/v1/posts/\(quiet)/bookmark", token: fay.token)
            let quote = try await api.call(
                .post, "/v1/posts", token: fay.token, json: ["text": "look", "repostOf": quiet])
            let quoteID = try #require(quote.object["id"] as? String)

            func samSees() async throws -> (feed: [String], fayTab: [String], quote: [String: Any], mentions: Int) {
                let feed = Self.ids(try await api.call(.get, "/v1/feed/following", token: sam.token))
                let tab = Self.ids(try await api.call(.get, "/v1/users/\(fay.id)/posts", token: sam.token))
                let quote = try await api.call(.get, "/v1/posts/\(quoteID)", token: sam.token).object
                let mentions = try await Self.notificationTypes(of: sam, api).filter { $0 == "mention" }.count
                return (feed, tab, quote, mentions)
            }
            // Sam follows Fay, not Pia: Fay's repost does not bring Pia's post, her quote shows without it, and the
            // mention notifies no one who cannot read it. Pia's earlier posts are hers alone now too.
            let before = try await samSees()
            #expect(!before.feed.contains(quiet) && !before.fayTab.contains(quiet), "\(before)")
            #expect(before.feed.contains(quoteID))
            #expect(before.quote["repostOf"] == nil || before.quote["repostOf"] is NSNull, "\(before.quote)")
            #expect(before.mentions == 0)
            #expect(try await api.call(.get, "/v1/posts/\(earlier)", token: sam.token).status == .forbidden)
            let fays = Self.ids(try await api.call(.get, "/v1/users/\(fay.id)/posts", token: fay.token))
            #expect(fays.contains(quiet), "the follower sees her own repost")

            // The same after a rebuild of every read model from the log.
            let started = try await api.call(
                .post, "/v1/admin/projections/rebuild", token: APIFixture.adminToken)
            #expect(started.status == .accepted)
            try await waitForRebuild(api)
            let rebuilt = try await samSees()
            #expect(rebuilt.feed == before.feed && rebuilt.fayTab == before.fayTab && rebuilt.mentions == 0)

            // Fay unfollows: her bookmark of it drops out, and she may no longer like it.
            _ = try await api.call(.delete, "/v1/users/\(pia.id)/follow", token: fay.token)
            #expect(Self.ids(try await api.call(.get, "/v1/me/bookmarks", token: fay.token)).isEmpty)
            let like = try await api.call(.put, "/v1/posts/\(quiet)/like", token: fay.token)
            #expect(like.status == .forbidden && like.errorCode == "private_account")
            // Following again takes a request, which brings it all back once accepted.
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: fay.token)
            _ = try await api.call(.post, "/v1/me/follow-requests/\(fay.id)/accept", token: pia.token)
            #expect(Self.ids(try await api.call(.get, "/v1/me/bookmarks", token: fay.token)) == [quiet])
        }
    }

    @Test(
        "live topics send a private account's posts to its followers alone, and its requests and acceptances as notifications"
    )
    func liveTopics() async throws {
        try await withAPI(.live) { api in
            let pia = try await api.register("Pia")
            let fay = try await api.register("Fay")
            let sam = try await api.register("Sam")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: fay.token)
            _ = try await api.call(.put, "/v1/users/\(fay.id)/follow", token: sam.token)
            _ = try await api.call(.patch, "/v1/me", token: pia.token, json: ["private": true])
            let after = try #require(try await api.call(.get, "/v1/me", token: sam.token).position)

            let quiet = try await api.post(pia, "#harbour for my followers")
            _ = try await api.call(.put, "/v1/posts/\(quiet)/repost", token: fay.token)
            let open = try await api.post(fay, "#harbour for everyone")
            // Sam asks and waits; Dee asks and is accepted.
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: sam.token)
            _ = try await api.call(.put, "/v1/users/\(pia.id)/follow", token: dee.token)
            _ = try await api.call(.post, "/v1/me/follow-requests/\(dee.id)/accept", token: pia.token)

            let port = try #require(api.client.port)
            func stream(_ user: APIFixture.User, _ topics: String, events: Int) async throws -> [LiveEvent] {
                let headers = ["Authorization": "Bearer \(user.token)", "Last-Event-ID": "\(after)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=\(topics)", headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return try (0..<events).map { _ in try stream.nextEvent() }
                }
            }
            // Sam: Pia's post, and Fay's repost of it, came first in the log, yet his first event is Fay's own post.
            let sams = try await stream(sam, "feed,hashtag:harbour", events: 1)
            #expect(sams.map { $0.data["id"] as? String } == [open], "\(sams.map(\.data))")
            // Fay, a follower, gets Pia's post first.
            let fays = try await stream(fay, "feed,hashtag:harbour", events: 1)
            #expect(fays.map { $0.data["id"] as? String } == [quiet], "\(fays.map(\.data))")
            // Dee hears of the acceptance; Pia of Sam's request, Dee's answered already.
            let dees = try await stream(dee, "notifications", events: 1)
            #expect(dees.map { $0.data["type"] as? String } == ["follow_accepted"])
            let pias = try await stream(pia, "notifications", events: 2)
            #expect(pias.map { $0.data["type"] as? String } == ["repost", "follow_request"])
            #expect((pias.last?.data["actor"] as? [String: Any])?["id"] as? String == sam.id)
        }
    }

    /// Waits until the online rebuild the test started has swapped in, for at most a minute.
    private func waitForRebuild(_ api: APIFixture) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            switch api.backend.readModels.rebuildState {
            case .finished: return
            case .failed(let reason): throw FixtureError("the rebuild failed: \(reason)")
            case .none, .rebuilding: try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw FixtureError("the rebuild did not finish within a minute")
    }
}
