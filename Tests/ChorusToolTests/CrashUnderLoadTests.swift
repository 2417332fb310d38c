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
        /// The name a change on its way would give each writer.
        var newNames: [Int: String] = [:]
        /// Last acknowledged state of a writer's block of the bystander ("block <writer>").
        var blocks: [String: Bool] = [:]
        /// Each writer's password as last acknowledged, and the one a change on its way would set.
        var passwords: [Int: String] = [:]
        var newPasswords: [Int: String] = [:]
        /// The text an edit on its way would give a post, by post id; how many edits were acknowledged.
        var newTexts: [String: String] = [:]
        var edits = 0
        /// Reports acknowledged, by id.
        var reports: [String] = []
        /// The accounts that sign up, post and delete themselves, one a round.
        var leavers: [Leaver] = []
        /// Keys whose last change was sent but not acknowledged: either state may hold after the crash. A deletion's key
        /// is the id it deletes.
        var uncertain: Set<String> = []
        var lastPosition: UInt64 = 0

        /// The edit of `post` to its new text happened.
        mutating func editText(_ post: String) {
            guard let index = posts.firstIndex(where: { $0.id == post }), let text = newTexts[post] else { return }
            posts[index].text = text
        }
    }

    struct User: Sendable {
        let id: String
        let token: String
    }

    /// An account that signs up, posts and deletes itself while the writers write.
    struct Leaver {
        let id: String
        var posts: [String] = []
        enum Deletion { case notSent, uncertain, acknowledged }
        var deletion = Deletion.notSent
    }

    /// Step kinds of a writer's loop (see ``write(as:users:bystander:server:ledger:round:stop:)``).
    static let stepKinds = 12

    /// A server for the test: an admin token to read the reports, and no rate limits, so that the checks may log in as
    /// often as they need.
    static func startServer(_ data: String) async throws -> ServerProcess {
        try await ServerProcess(
            data: data, extraArguments: ["--no-rate-limits"], environment: ["CHORUS_ADMIN_TOKEN": "admin"])
    }

    @Test(
        "SIGKILL at random moments, 10 times: every acknowledged write survives (edits, blocks, reports, passwords and account deletions too), none half-applied; rebuild equals resumed"
    )
    func crashes() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            var server = try await Self.startServer(data)
            var registered: [User] = []
            for index in 0...Self.writers {
                let answer = try await server.call(
                    "POST", "/v1/auth/register",
                    json: [
                        "email": "writer\(index)@example.com", "password": "secret-password", "name": "Writer \(index)",
                    ])
                let user = try #require((answer.json["user"] as? [String: Any])?["id"] as? String)
                registered.append(User(id: user, token: try #require(answer.json["token"] as? String)))
            }
            // The last writes nothing: the others block and report it.
            let bystander = registered.removeLast()
            let users = registered
            let ledger = LedgerBox()
            for round in 0..<Self.rounds {
                // Writers until the kill; each does every kind of write, one at a time.
                let stop = StopFlag()
                let current = server
                let leaver = try await Self.signUpLeaver(round: round, server: server, ledger: ledger)
                let writers = (0..<Self.writers).map { index in
                    Task {
                        await Self.write(
                            as: index, users: users, bystander: bystander, server: current, ledger: ledger,
                            round: round, stop: stop)
                    }
                }
                let leaving = Task {
                    await Self.leave(leaver, round: round, writer: users[0], server: current, ledger: ledger)
                }
                // Every third round is long enough for the slow writes (bcrypt: a password change, a deletion) to be
                // answered, not only to be under way: on a loaded machine a debug build's bcrypt can take longer than
                // the window, so such a round first waits (at most 20 s) for writer 0's password change to be
                // answered, then kills at a random moment as the others do.
                if round % 3 == 2 {
                    let before = ledger.state.withLock { $0.passwords[0] }
                    // Killed then either way: a change still under way is a case of its own.
                    try? await eventually("writer 0's password change", timeout: .seconds(20)) {
                        ledger.state.withLock { $0.passwords[0] } != before
                    }
                }
                let window = round % 3 == 2 ? 1500...2500 : 150...700
                try await Task.sleep(for: .milliseconds(Int.random(in: window)))
                server.kill()
                _ = await server.exited()
                stop.set()
                for writer in writers { await writer.value }
                await leaving.value

                server = try await Self.startServer(data)
                try await Self.check(ledger: ledger, users: users, server: server, round: round)
            }
            let done = ledger.state.withLock { $0 }
            // Every kind of write was acknowledged (and so checked) many times over.
            #expect(
                done.posts.count > Self.rounds && done.comments.count > Self.rounds && done.messages.count > Self.rounds
            )
            #expect(!done.likes.isEmpty && !done.follows.isEmpty && !done.names.isEmpty)
            #expect(!done.blocks.isEmpty, "a block was acknowledged")
            #expect(!done.reports.isEmpty, "a report was acknowledged")
            #expect(!done.passwords.isEmpty, "a password change was acknowledged")
            #expect(done.edits > 0, "an edit was acknowledged")
            #expect(done.leavers.contains { $0.deletion == .acknowledged }, "an account deletion was acknowledged")
            #expect(done.deleted.count > Self.rounds, "posts and comments were deleted: \(done.deleted.count)")

            // Stopped cleanly: the read models the server resumed with and kept up equal a rebuild from the log.
            #expect(await server.stop() == 0)
            let verify = try await runChorus(["log", "verify", "--data", data])
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

    /// One writer's loop: a post, a comment, a like or unlike, a follow or unfollow, a message, a new name, the
    /// deletion of a post and of a comment of its own, a block or unblock and a report of the bystander, a new
    /// password, an edit of its newest post, again.
    static func write(
        as index: Int, users: [User], bystander: User, server: ServerProcess, ledger: LedgerBox, round: Int,
        stop: StopFlag
    ) async {
        let me = users[index]
        // Writer 0 begins every round with its password change (two bcrypt hashes, the slowest write: about a second in
        // a debug build), so that the long rounds answer it; the others each begin with another kind of write, and
        // with a different one each round, so that short rounds on a slow machine still see every kind acknowledged
        // over the test. (`step` is raised before use.)
        var step = index == 0 ? Self.stepKinds - 3 : (index * 2 + round) % Self.stepKinds - 1
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
            switch step % Self.stepKinds {
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
                ledger.state.withLock { $0.newNames[index] = text }
                request = ("PATCH", "/v1/me", ["name": text])
            case 6:
                // The oldest of its own posts, so that most live a while first.
                guard let post = mine.first, mine.count > 2 else { continue }
                key = post.id
                request = ("DELETE", "/v1/posts/\(post.id)", nil)
            case 7:
                guard let comment = myComments.first, myComments.count > 2 else { continue }
                key = comment.id
                request = ("DELETE", "/v1/posts/\(comment.post)/comments/\(comment.id)", nil)
            case 8:
                key = "block \(index)"
                let blocked = ledger.state.withLock { $0.blocks[key!] ?? false }
                request = (blocked ? "DELETE" : "PUT", "/v1/users/\(bystander.id)/block", nil)
            case 9:
                request = ("POST", "/v1/reports", ["userId": bystander.id, "reason": "spam", "details": text])
            case 11:
                // The newest of its own posts gets a new text (the oldest are the ones deleted).
                guard let post = mine.last else { continue }
                key = "edit \(post.id)"
                ledger.state.withLock { $0.newTexts[post.id] = text }
                request = ("PATCH", "/v1/posts/\(post.id)", ["text": text])
            default:
                // Writer 0 only: a change hashes with bcrypt, which would take the whole of a short round from all.
                guard index == 0 else { continue }
                key = "password \(index)"
                let current = ledger.state.withLock { ledger in
                    ledger.newPasswords[index] = "pw \(text)"
                    return ledger.passwords[index] ?? "secret-password"
                }
                request = ("POST", "/v1/me/password", ["currentPassword": current, "newPassword": "pw \(text)"])
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
                        if step % Self.stepKinds == 7 { ledger.deleted.insert(key) }
                    }
                    continue
                }
                Issue.record("\(request.method) \(request.path): \(answer.status) \(answer.json)")
                return
            }
            ledger.state.withLock { ledger in
                ledger.lastPosition = max(ledger.lastPosition, position)
                if let key { ledger.uncertain.remove(key) }
                switch step % Self.stepKinds {
                case 0: ledger.posts.append((answer.json["id"] as? String ?? "", text, index))
                case 1: ledger.comments.append((answer.json["id"] as? String ?? "", target!, text, index))
                case 2: ledger.likes[key!] = answer.json["liked"] as? Bool ?? false
                case 3: ledger.follows[key!] = answer.json["following"] as? Bool ?? false
                case 4: ledger.messages.append((index, other, text))
                case 5: ledger.names[index] = text
                case 8: ledger.blocks[key!] = answer.json["blocked"] as? Bool ?? false
                case 9: ledger.reports.append(answer.json["id"] as? String ?? "")
                case 10: ledger.passwords[index] = ledger.newPasswords[index]
                case 11:
                    ledger.editText(String(key!.dropFirst("edit ".count)))
                    ledger.edits += 1
                default: ledger.deleted.insert(key!)
                }
            }
        }
    }

    /// Signs up the account that leaves in `round`, before the round's writes: the sign-up's bcrypt hash would take
    /// most of a short round.
    static func signUpLeaver(round: Int, server: ServerProcess, ledger: LedgerBox) async throws -> User {
        let signUp = try await server.call(
            "POST", "/v1/auth/register",
            json: ["email": "leaver\(round)@example.com", "password": "secret-password", "name": "Leaver"])
        let leaver = User(
            id: try #require((signUp.json["user"] as? [String: Any])?["id"] as? String),
            token: try #require(signUp.json["token"] as? String))
        ledger.state.withLock { $0.leavers.append(Leaver(id: leaver.id)) }
        return leaver
    }

    /// The leaver of `round` writes two posts and a message, and deletes its account, unless the server dies first.
    static func leave(_ leaver: User, round: Int, writer: User, server: ServerProcess, ledger: LedgerBox) async {
        let (id, token) = (leaver.id, leaver.token)
        let index = ledger.state.withLock { $0.leavers.firstIndex { $0.id == id }! }
        for text in ["leaving \(round)", "really leaving \(round)"] {
            guard let post = try? await server.call("POST", "/v1/posts", token: token, json: ["text": text]),
                post.status == 201, let postID = post.json["id"] as? String
            else { return }
            ledger.state.withLock { $0.leavers[index].posts.append(postID) }
        }
        _ = try? await server.call("POST", "/v1/messages", token: token, json: ["to": writer.id, "text": "bye"])
        ledger.state.withLock { $0.leavers[index].deletion = .uncertain }
        guard
            let deleted = try? await server.call(
                "DELETE", "/v1/me", token: token, json: ["password": "secret-password"])
        else { return }
        #expect(deleted.status == 202, "round \(round): the leaver's deletion: \(deleted.status) \(deleted.json)")
        ledger.state.withLock { ledger in
            ledger.leavers[index].deletion = .acknowledged
            if let position = deleted.position { ledger.lastPosition = max(ledger.lastPosition, position) }
        }
    }

    /// After a restart: every acknowledged write is there; a change whose answer never came either happened whole or
    /// not at all, and from now on the ledger knows which.
    static func check(ledger: LedgerBox, users: [User], server: ServerProcess, round: Int) async throws {
        let known = ledger.state.withLock { $0 }
        let wait = ["Chorus-Min-Position": String(known.lastPosition)]
        let reader = users[0].token
        var settledDeletions: Set<String> = []
        var settled: [String: Bool] = [:]
        for post in known.posts {
            let answer = try await server.call("GET", "/v1/posts/\(post.id)", token: reader, headers: wait)
            let deleted = known.deleted.contains(post.id) || (known.uncertain.contains(post.id) && answer.status == 404)
            if deleted {
                settledDeletions.insert(post.id)
                #expect(answer.status == 404, "round \(round): deleted post \(post.text)")
            } else if known.uncertain.contains("edit \(post.id)"), let new = known.newTexts[post.id] {
                let text = answer.json["text"] as? String
                #expect(answer.status == 200 && (text == post.text || text == new), "round \(round): post \(post.text)")
                settled["edit \(post.id)"] = text == new
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
            let acknowledgedName = known.names[index] ?? "Writer \(index)"
            if known.uncertain.contains("name \(index)"), let new = known.newNames[index] {
                #expect(name == acknowledgedName || name == new, "round \(round): name of writer \(index)")
                settled["name \(index)"] = name == new
            } else {
                #expect(name == acknowledgedName, "round \(round): name of writer \(index)")
            }
        }
        try await checkSafetyAndAccounts(known, settled: &settled, users: users, server: server, round: round)
        ledger.state.withLock { ledger in
            for (key, state) in settled where key.hasPrefix("block") { ledger.blocks[key] = state }
            for (key, state) in settled where key.hasPrefix("edit ") && state {
                ledger.editText(String(key.dropFirst("edit ".count)))
            }
            for (key, state) in settled where key.hasPrefix("password") {
                let index = Int(key.split(separator: " ")[1])!
                if state { ledger.passwords[index] = ledger.newPasswords[index] }
            }
            for (key, state) in settled where key.hasPrefix("name ") && state {
                let index = Int(key.split(separator: " ")[1])!
                ledger.names[index] = ledger.newNames[index]
            }
            for index in ledger.leavers.indices where ledger.leavers[index].deletion == .uncertain {
                ledger.leavers[index].deletion =
                    settled["leaver \(ledger.leavers[index].id)"] == true ? .acknowledged : .notSent
            }
            for (key, state) in settled where key.hasPrefix("like") { ledger.likes[key] = state }
            for (key, state) in settled where key.hasPrefix("follow") { ledger.follows[key] = state }
            ledger.deleted.formUnion(settledDeletions)
            ledger.uncertain.removeAll()
        }
    }
}

extension CrashUnderLoadTests {
    /// Blocks, reports, passwords and account deletions, after a restart: each acknowledged one holds, and one whose
    /// answer never came happened whole or not at all (`settled` learns which: true if it happened).
    static func checkSafetyAndAccounts(
        _ known: Ledger, settled: inout [String: Bool], users: [User], server: ServerProcess, round: Int
    ) async throws {
        let wait = ["Chorus-Min-Position": String(known.lastPosition)]
        for index in users.indices {
            let blocks = try await server.call("GET", "/v1/me/blocks", token: users[index].token, headers: wait)
            let blocking = !blocks.items.isEmpty
            let key = "block \(index)"
            if known.uncertain.contains(key) {
                settled[key] = blocking
            } else {
                #expect(blocking == (known.blocks[key] ?? false), "round \(round): \(key)")
            }
            // The password: the acknowledged one signs in; after a change whose answer never came, one of the two.
            let email = "writer\(index)@example.com"
            let password = known.passwords[index] ?? "secret-password"
            let passwordKey = "password \(index)"
            let signIn = try await server.call(
                "POST", "/v1/auth/login", json: ["email": email, "password": password], headers: wait)
            if known.uncertain.contains(passwordKey), let new = known.newPasswords[index] {
                let withNew = try await server.call(
                    "POST", "/v1/auth/login", json: ["email": email, "password": new], headers: wait)
                #expect((signIn.status == 200) != (withNew.status == 200), "round \(round): exactly one password")
                settled[passwordKey] = withNew.status == 200
            } else {
                #expect(signIn.status == 200, "round \(round): writer \(index)'s password")
            }
        }
        let filed = Set(
            try await server.allItems("/v1/admin/reports?state=open", token: "admin", headers: wait)
                .compactMap { $0["id"] as? String })
        #expect(Set(known.reports).isSubset(of: filed), "round \(round): every acknowledged report is queued")
        for leaver in known.leavers {
            let profile = try await server.call("GET", "/v1/users/\(leaver.id)", token: users[0].token, headers: wait)
            let gone = profile.status == 410
            switch leaver.deletion {
            case .acknowledged: #expect(gone, "round \(round): deleted account \(leaver.id)")
            case .notSent: #expect(profile.status == 200, "round \(round): account \(leaver.id) stays")
            case .uncertain: settled["leaver \(leaver.id)"] = gone
            }
            // The posts went with the account, or stayed with it: never half.
            for post in leaver.posts {
                let answer = try await server.call("GET", "/v1/posts/\(post)", token: users[0].token, headers: wait)
                #expect(answer.status == (gone ? 404 : 200), "round \(round): leaver's post \(post), gone: \(gone)")
            }
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
