import ChorusTestSupport
import Foundation
import Testing

/// Finding 4: one account made 300 rooms in a second, sent 500 room messages and 300 messages to a stranger, and filed
/// 200 identical reports, every one answered 201 and kept in the log.
@Suite("Abuse: floods from one account")
struct FloodAttackTests {
    /// What a flood of requests got: their statuses in order, and how long it took.
    struct Flood {
        let statuses: [Int]
        let took: Duration

        /// Whether the flood was held to a limit of `burst`, then `perSecond` more: the burst went through, and past
        /// it only what the limit earned back while the flood lasted; the rest was refused with 429.
        func isHeld(burst: Int, perSecond: Double, success: Int = 201) -> Bool {
            let (seconds, attoseconds) = took.components
            let earned = Int(((Double(seconds) + Double(attoseconds) / 1e18) * perSecond).rounded(.up)) + 1
            let passed = statuses.filter { $0 == success }.count
            return statuses.prefix(burst).allSatisfy { $0 == success } && statuses.contains(429)
                && passed <= burst + earned && statuses.allSatisfy { $0 == success || $0 == 429 }
        }

        var passed: Int { statuses.filter { (200..<300).contains($0) }.count }
    }

    /// `count` requests one after the other.
    static func flood(_ count: Int, _ request: (Int) async throws -> ServerProcess.Answer) async throws -> Flood {
        let started = ContinuousClock.now
        let statuses = try await (0..<count).asyncMap { try await request($0).status }
        return Flood(statuses: statuses, took: ContinuousClock.now - started)
    }

    @Test("300 rooms in a row: 10, then 429 with Retry-After, and only those 10 in the log")
    func rooms() async throws {
        try await withServerUnderAttack { server in
            let spammer = try await server.user("Spam")
            let before = try await server.head()
            let flood = try await Self.flood(300) { index in
                try await server.call("POST", "/v1/rooms", token: spammer.token, json: ["name": "room \(index)"])
            }
            // Ten, and one more for each five minutes a loaded machine took over the flood (a fresh clone's run once
            // took seven).
            #expect(flood.isHeld(burst: 10, perSecond: 1 / 300), "\(flood.passed) went through in \(flood.took)")
            // A room is made with its creator in it: two events each.
            #expect(try await server.head() == before + 2 * flood.passed)
            let limited = try await server.call("POST", "/v1/rooms", token: spammer.token, json: ["name": "more"])
            #expect(limited.headers["retry-after"].flatMap(Int.init) ?? 0 > 0)
            #expect(limited.text.contains("rate_limited"))
        }
    }

    @Test(
        "500 room messages and 300 messages to a stranger: each cut off at its limit, and a friend still gets through")
    func messages() async throws {
        try await withServerUnderAttack { server in
            let (spammer, other, stranger, friend) = (
                try await server.user("Spam"), try await server.user("Mass"), try await server.user("Vi"),
                try await server.user("Fr")
            )
            let room = try #require(
                try await server.call("POST", "/v1/rooms", token: spammer.token, json: ["name": "r"]).json["id"]
                    as? String)
            let roomFlood = try await Self.flood(500) { index in
                try await server.call(
                    "POST", "/v1/rooms/\(room)/messages", token: spammer.token, json: ["text": "spam \(index)"])
            }
            #expect(roomFlood.isHeld(burst: 200, perSecond: 1), "\(roomFlood.passed) in \(roomFlood.took)")

            let before = try await server.head()
            let strangerFlood = try await Self.flood(300) { index in
                try await server.call(
                    "POST", "/v1/messages", token: other.token, json: ["to": stranger.id, "text": "buy \(index)"])
            }
            #expect(strangerFlood.isHeld(burst: 20, perSecond: 1 / 60), "\(strangerFlood.passed) went through")
            #expect(try await server.head() == before + strangerFlood.passed)
            // Someone who follows the sender is no stranger.
            _ = try await server.call("PUT", "/v1/users/\(other.id)/follow", token: friend.token)
            let toFriend = try await server.call(
                "POST", "/v1/messages", token: other.token, json: ["to": friend.id, "text": "hi"])
            #expect(toFriend.status == 201)
        }
    }

    @Test("200 identical reports file one; another reason for the same thing is the same report; then 429")
    func reports() async throws {
        try await withServerUnderAttack { server in
            let reporter = try await server.user("Re")
            let target = try await server.user("Ta")
            let before = try await server.head()
            var ids: Set<String> = []
            let flood = try await Self.flood(200) { index in
                let answer = try await server.call(
                    "POST", "/v1/reports", token: reporter.token,
                    json: ["userId": target.id, "reason": ["spam", "abuse", "other"][index % 3]])
                if let id = answer.json["id"] as? String { ids.insert(id) }
                return answer
            }
            #expect(flood.isHeld(burst: 20, perSecond: 1 / 60), "\(flood.statuses.prefix(22))")
            #expect(ids.count == 1, "one report")
            #expect(try await server.head() == before + 1)
            let queue = try await server.call("GET", "/v1/admin/reports", token: server.adminToken)
            #expect(queue.items.count == 1)
        }
    }

    @Test("every kind of write counts against one limit: 1,000, then 429, and another account is not held back")
    func writes() async throws {
        // One more a minute rather than the default ten a second: a loaded machine's flood of 1,500 can take long
        // enough for ten a second to refill it all.
        try await withServerUnderAttack(["--rate-limit", "writes-per-user=1000,1m"]) { server in
            let spammer = try await server.user("Spam")
            let author = try await server.user("Au")
            let post = try #require(
                try await server.call("POST", "/v1/posts", token: author.token, json: ["text": "hi"]).json["id"]
                    as? String)
            let flood = try await Self.flood(1_500) { index in
                try await server.call(index % 2 == 0 ? "PUT" : "DELETE", "/v1/posts/\(post)/like", token: spammer.token)
            }
            #expect(flood.isHeld(burst: 1_000, perSecond: 1 / 60, success: 200), "\(flood.passed) in \(flood.took)")
            // Reads go on, and so do others' writes, and so does signing out.
            #expect(try await server.call("GET", "/v1/feed/home", token: spammer.token).status == 200)
            #expect(try await server.call("PUT", "/v1/posts/\(post)/like", token: author.token).status == 200)
            #expect(try await server.call("POST", "/v1/auth/logout", token: spammer.token).status == 204)
        }
    }
}
