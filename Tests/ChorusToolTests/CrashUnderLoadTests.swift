import ChorusBackend
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Foundation
import Synchronization
import Testing

/// `chorus serve` killed with SIGKILL while users write, again and again.
@Suite("Crash under load")
struct CrashUnderLoadTests {
    static let rounds = 10
    static let writers = 6

    /// What the writers know was acknowledged, and what was on its way when the server died.
    struct Ledger {
        var posts: [(id: String, text: String, author: Int)] = []
        var comments: [(id: String, post: String, text: String, author: Int)] = []
        /// Posts and comments whose deletion was acknowledged.
        var deleted: Set<String> = []
        var messages: [(from: Int, to: Int, text: String)] = []
        /// Last acknowledged state of a like (writer, post), a follow (writer, user), a name (writer).
        var likes: [String: Bool] = [:]
        var follows: [String: Bool] = [:]
        var names: [Int: String] = [:]
        /// Keys whose last change was sent but not acknowledged: either state may hold after the crash. A deletion's key
        /// is the id it deletes.
        var uncertain: Set<String> = []
        var lastPosition: UInt64 = 0
    }

    struct User: Sendable {
        let id: String
        let token: String
    }

    @Test(
        "SIGKILL at random moments, 10 times: every acknowledged write survives, none half-applied; rebuild equals resumed"
    )
    func crashes() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            var server = try await ServerProcess(data: data)
            var registered: [User] = []
            for index in 0..<Self.writers {
                let answer = try await server.call(
                    "POST", "/v1/auth/register",
                    json: [
                        "email": "writer\(index)@example.com", "password": "secret-password", "name": "Writer \(index)",
                    ])
                let user = try #require((answer.json["user"] as? [String: Any])?["id"] as? String)
                registered.append(User(id: user, token: try #require(answer.json["token"] as? String)))
            }
            let users = registered
            let ledger = LedgerBox()
            for round in 0..<Self.rounds {
                // Writers until the kill; each does every kind of write, one at a time.
                let stop = StopFlag()
                let current = server
                let writers = (0..<Self.writers).map { index in
                    Task {
                        await Self.write(
                            as: index, users: users, server: current, ledger: ledger, round: round, stop: stop)
                    }
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 150...700)))
                kill(server.process.processIdentifier, SIGKILL)
                _ = await server.exited()
                stop.set()
                for writer in writers { await writer.value }

                server = try await ServerProcess(data: data)
                try await Self.check(ledger: ledger, users: users, server: server, round: round)
            }
            let done = ledger.state.withLock { $0 }
            // Every kind of write was acknowledged (and so checked) many times over.
            #expect(
                done.posts.count > Self.rounds && done.comments.count > Self.rounds && done.messages.count > Self.rounds
            )
            #expect(!done.likes.isEmpty && !done.follows.isEmpty && !done.names.isEmpty)
            #expect(done.deleted.count > Self.rounds, "posts and comments were deleted: \(done.deleted.count)")

            // Stopped cleanly: the read models the server resumed with and kept up equal a rebuild from the log.
            #expect(await server.stop() == 0)
            let verify = try runChorus(["log", "verify", "--data", data])
            #expect(verify.status == 0, "\(verify.standardOutput)")
            let log = try DataDirectory(data).openLog(readOnly: true)
            defer { log.close() }
            let keys = try DataDirectory(data).openKeys()
            defer { keys.close() }
            _ = try ProjectionEngine.rebuild(log: log, keys: keys, into: root + "/rebuilt")
            #expect(
                try dumpReadModels(atDirectory: data + "/projections") == dumpReadModels(atDirectory: root + "/rebuilt")
            )
        }
    }

    /// One writer's loop: a post, a comment, a like or unlike, a follow or unfollow, a message, a new name, the deletion
    /// of a post and of a comment of its own, again.
    static func write(
        as index: Int, users: [User], server: ServerProcess, ledger: LedgerBox, round: Int, stop: StopFlag
    ) async {
        let me = users[index]
        var step = 0
        while !stop.isSet {
            step += 1
            let other = (index + 1 + step % (users.count - 1)) % users.count
            let (posts, mine, myComments) = ledger.state.withLock { ledger in
                let standing = ledger.posts.filter { !ledger.deleted.contains($0.id) }
                let undecided = ledger.deleted.union(ledger.uncertain)
                return (
                    standing, standing.filter { $0.author == index && !undecided.contains($0.id) },
                    ledger.comments.filter { $0.author == index && !undecided.contains($0.id) }
                )
            }
            let target = posts.isEmpty ? nil : posts[(step * 7 + index) % posts.count].id
            let text = "r\(round) w\(index) s\(step)"
            // The key a toggle or edit changes, marked uncertain until its answer comes.
            var key: String?
            let request: (method: String, path: String, json: [String: Any]?)
            switch step % 8 {
            case 0: request = ("POST", "/v1/posts", ["text": text])
            case 1:
                guard let target else { continue }
                request = ("POST", "/v1/posts/\(target)/comments", ["text": text])
            case 2:
                guard let target else { continue }
                key = "like \(index) \(target)"
                let liked = ledger.state.withLock { $0.likes[key!] ?? false }
                request = (liked ? "DELETE" : "PUT", "/v1/posts/\(target)/like", nil)
            case 3:
                key = "follow \(index) \(other)"
                let following = ledger.state.withLock { $0.follows[key!] ?? false }
                request = (following ? "DELETE" : "PUT", "/v1/users/\(users[other].id)/follow", nil)
            case 4: request = ("POST", "/v1/messages", ["to": users[other].id, "text": text])
            case 5:
                key = "name \(index)"
                request = ("PATCH", "/v1/me", ["name": text])
            case 6:
                // The oldest of its own posts, so that most live a while first.
                guard let post = mine.first, mine.count > 2 else { continue }
                key = post.id
                request = ("DELETE", "/v1/posts/\(post.id)", nil)
            default:
                guard let comment = myComments.first, myComments.count > 2 else { continue }
                key = comment.id
                request = ("DELETE", "/v1/posts/\(comment.post)/comments/\(comment.id)", nil)
            }
            if let key { ledger.state.withLock { _ = $0.uncertain.insert(key) } }
            guard let answer = try? await server.call(request.method, request.path, token: me.token, json: request.json)
            else { return }  // the server is gone: this request's fate is unknown
            guard (200..<300).contains(answer.status), let position = answer.position else {
                // Refused, its post deleted meanwhile: nothing was appended (a comment went with the post).
                if answer.status == 410 {
                    ledger.state.withLock { ledger in
                        guard let key else { return }
                        ledger.uncertain.remove(key)
                        if step % 8 == 7 { ledger.deleted.insert(key) }
                    }
                    continue
                }
                Issue.record("\(request.method) \(request.path): \(answer.status) \(answer.json)")
                return
            }
            ledger.state.withLock { ledger in
                ledger.lastPosition = max(ledger.lastPosition, position)
                if let key { ledger.uncertain.remove(key) }
                switch step % 8 {
                case 0: ledger.posts.append((answer.json["id"] as? String ?? "", text, index))
                case 1: ledger.comments.append((answer.json["id"] as? String ?? "", target!, text, index))
                case 2: ledger.likes[key!] = answer.json["liked"] as? Bool ?? false
                case 3: ledger.follows[key!] = answer.json["following"] as? Bool ?? false
                case 4: ledger.messages.append((index, other, text))
                case 5: ledger.names[index] = text
                default: ledger.deleted.insert(key!)
                }
            }
        }
    }

    /// After a restart: every acknowledged write is there; a change whose answer never came either happened whole or
    /// not at all, and from now on the ledger knows which.
    static func check(ledger: LedgerBox, users: [User], server: ServerProcess, round: Int) async throws {
        let known = ledger.state.withLock { $0 }
        let wait = ["Chorus-Min-Position": String(known.lastPosition)]
        let reader = users[0].token
        var settledDeletions: Set<String> = []
        for post in known.posts {
            let answer = try await server.call("GET", "/v1/posts/\(post.id)", token: reader, headers: wait)
            let deleted = known.deleted.contains(post.id) || (known.uncertain.contains(post.id) && answer.status == 404)
            if deleted {
                settledDeletions.insert(post.id)
                #expect(answer.status == 404, "round \(round): deleted post \(post.text)")
            } else {
                #expect(
                    answer.status == 200 && answer.json["text"] as? String == post.text,
                    "round \(round): post \(post.text)")
            }
        }
        for (post, comments) in Dictionary(grouping: known.comments, by: \.post) where !settledDeletions.contains(post)
        {
            let answer = try await server.call(
                "GET", "/v1/posts/\(post)/comments?limit=100", token: reader, headers: wait)
            let shown = Set(answer.items.compactMap { $0["id"] as? String })
            for comment in comments {
                if known.uncertain.contains(comment.id) {
                    if !shown.contains(comment.id) { settledDeletions.insert(comment.id) }
                } else {
                    #expect(
                        shown.contains(comment.id) != known.deleted.contains(comment.id),
                        "round \(round): comment \(comment.text)")
                }
            }
        }
        for (pair, messages) in Dictionary(grouping: known.messages, by: { "\($0.from) \($0.to)" }) {
            let from = messages[0].from
            let to = messages[0].to
            let answer = try await server.call(
                "GET", "/v1/conversations/\(users[to].id)/messages?limit=100", token: users[from].token, headers: wait)
            let texts = Set(answer.items.compactMap { $0["text"] as? String })
            for message in messages where !texts.contains(message.text) {
                Issue.record("round \(round): message \(message.text) of \(pair) is missing")
            }
        }
        var settled: [String: Bool] = [:]
        for index in users.indices {
            let me = users[index]
            // Likes: what the post says of this user.
            let likeKeys = Set(known.likes.keys).union(known.uncertain).filter { $0.hasPrefix("like \(index) ") }
            for key in likeKeys.sorted() {
                let liked = known.likes[key] ?? false
                let post = String(key.split(separator: " ")[2])
                // A deleted post's likes went with it.
                guard !settledDeletions.contains(post) else { continue }
                let answer = try await server.call("GET", "/v1/posts/\(post)", token: me.token, headers: wait)
                let actual = answer.json["hasLiked"] as? Bool ?? false
                if known.uncertain.contains(key) {
                    settled[key] = actual
                } else {
                    #expect(actual == liked, "round \(round): \(key)")
                }
            }
            let following = try await server.call(
                "GET", "/v1/users/\(me.id)/following?limit=100", token: me.token, headers: wait)
            let followed = Set(following.items.compactMap { $0["id"] as? String })
            for other in users.indices where other != index {
                let key = "follow \(index) \(other)"
                let actual = followed.contains(users[other].id)
                if known.uncertain.contains(key) {
                    settled[key] = actual
                } else {
                    #expect(actual == (known.follows[key] ?? false), "round \(round): \(key)")
                }
            }
            let profile = try await server.call("GET", "/v1/users/\(me.id)", token: reader, headers: wait)
            let name = profile.json["name"] as? String
            if known.uncertain.contains("name \(index)") {
                #expect(
                    name != nil && (name == known.names[index] || name!.hasPrefix("r") || name == "Writer \(index)"))
            } else {
                #expect(name == (known.names[index] ?? "Writer \(index)"), "round \(round): name of writer \(index)")
            }
        }
        ledger.state.withLock { ledger in
            for (key, state) in settled where key.hasPrefix("like") { ledger.likes[key] = state }
            for (key, state) in settled where key.hasPrefix("follow") { ledger.follows[key] = state }
            ledger.deleted.formUnion(settledDeletions)
            ledger.uncertain.removeAll()
        }
    }
}

/// The ledger, shared by the writers and the checks.
final class LedgerBox: Sendable {
    let state = Mutex(CrashUnderLoadTests.Ledger())
}

/// Set once, read by the writers.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}
