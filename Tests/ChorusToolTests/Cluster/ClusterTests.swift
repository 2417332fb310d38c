import ChorusBackend
import ChorusClient
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Synchronization
import Testing

/// Three `chorus serve --cluster` nodes on one throwaway PostgreSQL, each a process with a data directory of its own:
/// what a client sees across nodes, what concurrent writers leave behind, and what survives crashes of a node, of a
/// node's disk and of PostgreSQL.
@Suite("Cluster", .serialized)
struct ClusterTests {
    @Test("a write on one node is read on another with Chorus-Min-Position, and streamed live on a third")
    func readYourWritesAcrossNodes() async throws {
        try await ClusterFixture.run { cluster in
            let (a, b, c) = (cluster.node(0), cluster.node(1), cluster.node(2))
            let ana = try await a.register("Ana")
            let bo = try await b.register("Bo")
            // A session opened on one node is good on another at once: a client behind a load balancer.
            #expect(try await c.call("GET", "/v1/me", token: ana.token).status == 200)
            let followed = try await b.call("PUT", "/v1/users/\(ana.id)/follow", token: bo.token)
            #expect(followed.status == 200)

            let watcher = ChorusClient(serverURL: URL(string: b.base)!)
            try await watcher.logIn(email: bo.email, password: "password1")
            let live = LiveCollector(try await watcher.live([.feed]))

            let posted = try await a.call("POST", "/v1/posts", token: ana.token, json: ["text": "hello, cluster"])
            #expect(posted.status == 201)
            let id = try #require(posted.json["id"] as? String)
            let position = try #require(posted.position)
            let read = try await c.call(
                "GET", "/v1/posts/\(id)", token: bo.token, headers: ["Chorus-Min-Position": String(position)])
            #expect(read.status == 200)
            #expect(read.json["text"] as? String == "hello, cluster")
            #expect(try #require(read.position) >= position)
            let feed = try await c.call(
                "GET", "/v1/feed/following", token: bo.token, headers: ["Chorus-Min-Position": String(position)])
            #expect(feed.items.first?["id"] as? String == id)

            let streamed = try await live.waitFor(1)
            #expect(streamed.map(\.name).contains("post"), "node B streams the post written on node A")

            // Node A's /metrics counts the commits it made to the cluster (a sign-up and a post at least).
            let metrics = try await a.call("GET", "/metrics", token: a.adminToken).text.split(separator: "\n")
            let commits = metrics.first { $0.hasPrefix("chorus_cluster_commits_total ") }?.split(separator: " ").last
            #expect(commits.flatMap { Double($0) } ?? 0 >= 2, "\(String(describing: commits))")
        }
    }

    @Test("one e-mail signed up on two nodes at once, and one idempotency key on two nodes, each take effect once")
    func conflictsAcrossNodes() async throws {
        try await ClusterFixture.run { cluster in
            let (a, b, c) = (cluster.node(0), cluster.node(1), cluster.node(2))
            for round in 0..<5 {
                let email = "same-\(round)@example.com"
                async let onA = a.call(
                    "POST", "/v1/auth/register", json: ["email": email, "password": "password1", "name": "Same"])
                async let onB = b.call(
                    "POST", "/v1/auth/register", json: ["email": email, "password": "password1", "name": "Same"])
                let statuses = try await [onA.status, onB.status].sorted()
                #expect(statuses == [201, 409], "round \(round): one sign-up wins, the other is email_taken")
            }

            let ana = try await a.register("Ana")
            for round in 0..<5 {
                let headers = ["Idempotency-Key": "post-\(round)"]
                let body = ["text": "once, round \(round)"]
                async let onA = a.call("POST", "/v1/posts", token: ana.token, json: body, headers: headers)
                async let onC = c.call("POST", "/v1/posts", token: ana.token, json: body, headers: headers)
                let (first, second) = try await (onA, onC)
                #expect(first.status == 201 && second.status == 201, "\(first.json) \(second.json)")
                #expect(first.json["id"] as? String == second.json["id"] as? String, "round \(round): one post")
            }
            try await cluster.waitUntilCaughtUp()
            for index in 0..<3 {
                let posts = try await cluster.node(index).call(
                    "GET", "/v1/users/\(ana.id)/posts?limit=50", token: ana.token)
                #expect(posts.items.count == 5, "node \(index) holds each idempotent post once")
            }
        }
    }

    @Test(
        "writers on every node at once: every node's log verifies, equals PostgreSQL's, and rebuilds the same read models"
    )
    func concurrentWritersConverge() async throws {
        try await ClusterFixture.run { cluster in
            let acknowledged = try await Self.writeConcurrently(on: cluster, writersPerNode: 6, operations: 12)
            #expect(acknowledged.count >= 60, "18 writers post 4 times each")
            let reader = try await cluster.node(0).register("Reader")
            try await cluster.waitUntilCaughtUp()
            for index in 0..<3 {
                let node = cluster.node(index)
                for id in acknowledged.shuffled().prefix(20) {
                    #expect(
                        try await node.call("GET", "/v1/posts/\(id)", token: reader.token).status == 200,
                        "node \(index) has \(id)")
                }
            }
            await cluster.stopAll()
            var readModels: [[String: [[UInt8]]]] = []
            for index in 0..<3 {
                let data = cluster.data(index)
                let verified = try await runChorus(["log", "verify", "--data", data])
                #expect(verified.status == 0, "node \(index): \(verified.standardOutput) \(verified.standardError)")
                let same = try await runChorus(["cluster", "verify", "--data", data, "--cluster", cluster.postgres.url])
                #expect(same.status == 0, "node \(index): \(same.standardOutput) \(same.standardError)")
                #expect(same.standardOutput.contains("through position \(try cluster.clusterHead())"))
                let rebuilt = try await runChorus(["projections", "rebuild", "--data", data])
                #expect(rebuilt.status == 0, "node \(index): \(rebuilt.standardError)")
                readModels.append(try dumpReadModels(atDirectory: DataDirectory(data).projections))
            }
            #expect(readModels[0] == readModels[1] && readModels[1] == readModels[2], "the same read models")
            #expect(!(readModels[0].isEmpty))
        }
    }

    @Test("a node killed under load catches up after its restart; a node whose data is deleted refills from PostgreSQL")
    func nodesRecover() async throws {
        try await ClusterFixture.run { cluster in
            let load = Task {
                try await Self.writeConcurrently(on: cluster, nodes: [0], writersPerNode: 4, operations: 40)
            }
            try await Task.sleep(for: .milliseconds(500))
            await cluster.kill(1)
            try await Task.sleep(for: .milliseconds(500))
            try await cluster.start(1)
            _ = await cluster.node(2).stop()
            try FileManager.default.removeItem(atPath: cluster.data(2))
            try await cluster.start(2)
            let acknowledged = try await load.value
            let reader = try await cluster.node(0).register("Reader")
            try await cluster.waitUntilCaughtUp()
            for index in [1, 2] {
                for id in acknowledged.shuffled().prefix(20) {
                    #expect(
                        try await cluster.node(index).call("GET", "/v1/posts/\(id)", token: reader.token).status == 200)
                }
                let same = try await runChorus([
                    "cluster", "verify", "--data", cluster.data(index), "--cluster", cluster.postgres.url,
                ])
                #expect(same.status == 0, "node \(index): \(same.standardOutput) \(same.standardError)")
            }
            // The refilled node serves sign-ins made before it was emptied: keys and the session secret came back too.
            let ana = try await cluster.node(0).register("Ana")
            let posted = try await cluster.node(0).call("POST", "/v1/posts", token: ana.token, json: ["text": "sealed"])
            let read = try await cluster.node(2).call(
                "GET", "/v1/posts/\(posted.json["id"] as? String ?? "")", token: ana.token,
                headers: ["Chorus-Min-Position": String(posted.position ?? 0)])
            #expect(read.status == 200 && (read.json["author"] as? [String: Any])?["name"] as? String == "Ana")
        }
    }

    @Test(
        "PostgreSQL crashing and restarting under load loses no acknowledged write, and the nodes resume by themselves")
    func postgresRestart() async throws {
        try await ClusterFixture.run { cluster in
            let stop = StopSignal()
            let load = Task { try await Self.writeConcurrently(on: cluster, writersPerNode: 3, until: stop) }
            try await stop.waitForAcknowledged(10)
            // pg_ctl waits: on threads of their own, so that the load's tasks go on meanwhile.
            let postgres = cluster.postgres
            try await BlockingWork.run { postgres.stopServer(immediate: true) }
            try await Task.sleep(for: .seconds(1))
            try await BlockingWork.run { try postgres.start() }
            // Writes go through again on every node, without a restart of any, soon after PostgreSQL is back. A write
            // caught by the crash usually fails within a second; at worst it waits out its statement deadline (10 s,
            // seen on a loaded machine), never longer: a node stuck on a dead connection would not resume at all.
            let restarted = ContinuousClock.now
            for index in 0..<3 {
                let user = try await eventually { try await cluster.node(index).register("After\(index)") }
                let posted = try await eventually {
                    let answer = try await cluster.node(index).call(
                        "POST", "/v1/posts", token: user.token, json: ["text": "after the restart"])
                    guard answer.status == 201 else { throw ServerError("\(answer.status)") }
                    return answer
                }
                #expect(posted.status == 201)
            }
            let resumed = ContinuousClock.now - restarted
            #expect(resumed < .seconds(25), "the nodes took \(resumed) to take writes again")
            do {
                try await stop.waitForAcknowledged(10)
            } catch {
                // The writers' own error, if one of them stopped on one, says more.
                stop.raise()
                _ = try await load.value
                throw error
            }
            stop.raise()
            let acknowledged = try await load.value
            #expect(acknowledged.count >= 20)
            let reader = try await cluster.node(0).register("Reader")
            try await cluster.waitUntilCaughtUp()
            for index in 0..<3 {
                for id in acknowledged {
                    let read = try await cluster.node(index).call("GET", "/v1/posts/\(id)", token: reader.token)
                    #expect(read.status == 200, "node \(index) lost acknowledged post \(id)")
                }
            }
        }
    }

    @Test("a session holding the head row's lock makes writes answer 503 after the write timeout, not hang")
    func heldLockTimesOut() async throws {
        try await ClusterFixture.run(nodes: 1, writeTimeout: "1s") { cluster in
            let a = cluster.node(0)
            let ana = try await a.register("Ana")
            let holder = try cluster.postgres.psqlInBackground(
                "BEGIN; SELECT * FROM chorus_head FOR UPDATE; SELECT pg_sleep(6); COMMIT;")
            try await Task.sleep(for: .milliseconds(700))
            let started = ContinuousClock.now
            let refused = try await a.call("POST", "/v1/posts", token: ana.token, json: ["text": "waits"])
            let waited = ContinuousClock.now - started
            #expect(refused.status == 503)
            #expect(waited < .seconds(4), "answered after \(waited)")
            _ = await holder.exited()
            let accepted = try await a.call("POST", "/v1/posts", token: ana.token, json: ["text": "goes through"])
            #expect(accepted.status == 201)
        }
    }

    @Test(
        "cluster init moves a single node's data into an empty cluster: positions, decisions, keys and sessions kept"
    )
    func initFromSingleNode() async throws {
        try await ClusterFixture.run(nodes: 0) { cluster in
            // A single node's life before the cluster: a demo network (one commit in the cluster, larger than a
            // tailing node reads in one go), then sign-ups, a follow, posts, one of them idempotent.
            let demo = try await runChorus(["demo", "--data", cluster.data(0), "--events", "12000"])
            #expect(demo.status == 0, "\(demo.standardError)")
            let single = try await ServerProcess(data: cluster.data(0), extraArguments: ["--no-rate-limits"])
            let ana = try await single.register("Ana")
            let bo = try await single.register("Bo")
            #expect(try await single.call("PUT", "/v1/users/\(ana.id)/follow", token: bo.token).status == 200)
            var posts: [String] = []
            for index in 0..<3 {
                let posted = try await single.call(
                    "POST", "/v1/posts", token: ana.token, json: ["text": "before the cluster \(index)"],
                    headers: ["Idempotency-Key": "seed-\(index)"])
                posts.append(try #require(posted.json["id"] as? String))
            }
            let singleHead = try #require(
                try await single.call("GET", "/health", token: single.adminToken).json["position"] as? Int)
            #expect(await single.stop() == 0)

            let moved = try await runChorus([
                "cluster", "init", "--from", cluster.data(0), "--cluster", cluster.postgres.url,
            ])
            #expect(moved.status == 0, "\(moved.standardOutput) \(moved.standardError)")
            #expect(moved.standardOutput.contains("\(singleHead) events"), "\(moved.standardOutput)")
            #expect(try cluster.clusterHead() == UInt64(singleHead), "every event keeps its position")
            let again = try await runChorus([
                "cluster", "init", "--from", cluster.data(0), "--cluster", cluster.postgres.url,
            ])
            #expect(again.status != 0)
            #expect(again.standardError.contains("already holds a log"), "\(again.standardError)")
            #expect(try cluster.clusterHead() == UInt64(singleHead), "a refused init leaves the cluster as it was")

            // The old data directory is the first node; the second starts empty and fills from PostgreSQL.
            let (a, b) = (try await cluster.start(0), try await cluster.start(1))
            try await cluster.waitUntilCaughtUp()
            for node in [a, b] {
                // Tokens issued by the single node still sign in: the sessions and their secret moved.
                #expect(try await node.call("GET", "/v1/me", token: ana.token).json["id"] as? String == ana.id)
                // Post texts read back: every user's data key moved.
                let feed = try await node.call("GET", "/v1/feed/following", token: bo.token)
                #expect(Set(feed.items.compactMap { $0["id"] as? String }) == Set(posts))
                #expect(
                    feed.items.compactMap { $0["text"] as? String }.allSatisfy { $0.hasPrefix("before the cluster") })
            }
            // Decisions moved too: a taken e-mail stays taken, and a replayed idempotency key names the old post.
            let taken = try await b.call(
                "POST", "/v1/auth/register", json: ["email": ana.email, "password": "password1", "name": "Ana again"])
            #expect(taken.status == 409)
            let replayed = try await b.call(
                "POST", "/v1/posts", token: ana.token, json: ["text": "before the cluster 1"],
                headers: ["Idempotency-Key": "seed-1"])
            #expect(replayed.json["id"] as? String == posts[1], "\(replayed.status) \(replayed.json)")
            // New writes continue the log where the single node stopped.
            let next = try await b.call("POST", "/v1/posts", token: bo.token, json: ["text": "first in the cluster"])
            #expect(next.status == 201)
            #expect(try #require(next.position) > UInt64(singleHead))
            // The node that started empty holds the same log as PostgreSQL, demo included.
            let demoUser = try await b.call(
                "POST", "/v1/auth/login", json: ["email": "user7@demo.chorus", "password": "password"])
            #expect(demoUser.status == 200)
            try await cluster.waitUntilCaughtUp()
            let stopped = await b.stop()
            #expect(stopped == 0, "node B exited with \(stopped): \(b.standardError().suffix(1500))")
            let same = try await runChorus([
                "cluster", "verify", "--data", cluster.data(1), "--cluster", cluster.postgres.url,
            ])
            #expect(same.status == 0, "\(same.standardOutput) \(same.standardError)")
        }
    }

    @Test(
        "an image uploaded on one node is served in both sizes by every node, posted from another, and erased everywhere"
    )
    func imagesOnEveryNode() async throws {
        try await ClusterFixture.run(extraArguments: ["--erasure-delay", "1s"]) { cluster in
            let (a, b, c) = (cluster.node(0), cluster.node(1), cluster.node(2))
            let ana = try await a.register("Ana")
            let upload = try await a.call(
                "POST", "/v1/media", token: ana.token, body: Data(SampleImages.bytes("photo.jpg")),
                headers: ["Content-Type": "image/jpeg"])
            #expect(upload.status == 201, "\(upload.json)")
            let id = try #require(upload.json["id"] as? String)
            for size in ["large", "small"] {
                let onA = try await a.call("GET", "/v1/media/\(id)?size=\(size)")
                for node in [b, c] {
                    let served = try await node.call("GET", "/v1/media/\(id)?size=\(size)")
                    #expect(served.status == 200 && served.headers["etag"] == onA.headers["etag"], "\(size)")
                    #expect(served.headers["content-length"] == onA.headers["content-length"], "the same bytes")
                }
            }
            // Posted through B, which did not take the upload; C shows it with its size and BlurHash.
            let post = try await b.call(
                "POST", "/v1/posts", token: ana.token, json: ["media": [["id": id, "alt": "Boats at dawn"]]])
            #expect(post.status == 201, "\(post.json)")
            let postID = try #require(post.json["id"] as? String)
            let read = try await c.call(
                "GET", "/v1/posts/\(postID)", token: ana.token,
                headers: ["Chorus-Min-Position": String(try #require(post.position))])
            let shown = try #require((read.json["media"] as? [[String: Any]])?.first)
            #expect(shown["width"] as? Int == 240 && shown["blurhash"] as? String == upload.json["blurhash"] as? String)
            #expect(shown["alt"] as? String == "Boats at dawn")
            let rows = try cluster.postgres.psql("SELECT count(*) FROM chorus_media WHERE media_id = '\(id)'")
            #expect(rows.trimmingCharacters(in: .whitespacesAndNewlines) == "3", "two variants and the info")

            // An upload PostgreSQL does not take is refused, and leaves no file on the node that took it.
            _ = try cluster.postgres.psql("ALTER TABLE chorus_media RENAME TO chorus_media_away")
            let refused = try await a.call(
                "POST", "/v1/media", token: ana.token, body: Data(SampleImages.bytes("alpha.png")),
                headers: ["Content-Type": "image/png"])
            _ = try cluster.postgres.psql("ALTER TABLE chorus_media_away RENAME TO chorus_media")
            #expect(refused.status == 503, "\(refused.json)")
            let left = try FileManager.default.subpathsOfDirectory(atPath: cluster.data(0) + "/media/" + ana.id)
            #expect(left.allSatisfy { $0.hasPrefix(id) }, "only the first image's files: \(left)")

            let deleted = try await c.call("DELETE", "/v1/me", token: ana.token, json: ["password": "password1"])
            #expect(deleted.status == 202, "the deletion is accepted; its erasure follows")
            for (index, node) in [a, b, c].enumerated() {
                try await eventually("node \(index) serves the image no more", every: .milliseconds(100)) {
                    try await node.call("GET", "/v1/media/\(id)").status == 404
                }
            }
            try await eventually("no node keeps a file of hers, nor PostgreSQL", every: .milliseconds(200)) {
                let rows = try cluster.postgres.psql("SELECT count(*) FROM chorus_media WHERE owner = '\(ana.id)'")
                let files = try (0..<3).flatMap {
                    try FileManager.default.subpathsOfDirectory(atPath: cluster.data($0) + "/media")
                }
                return rows.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
                    && !files.contains { $0.contains(id) }
            }
        }
    }

    // MARK: Load

    /// Users on `nodes` posting, liking and following concurrently; returns the ids of the posts acknowledged (201).
    /// Stops after `operations` each, or once `stop` is set; 503s (the cluster unreachable) are counted as refused.
    static func writeConcurrently(
        on cluster: ClusterFixture, nodes: [Int] = [0, 1, 2], writersPerNode: Int, operations: Int = .max,
        until stop: StopSignal? = nil
    ) async throws -> [String] {
        var writers: [(ServerProcess, (id: String, token: String, email: String))] = []
        for index in nodes {
            for writer in 0..<writersPerNode {
                writers.append((cluster.node(index), try await cluster.node(index).register("W\(index)x\(writer)")))
            }
        }
        let everyone = writers.map(\.1.id)
        return try await withThrowingTaskGroup(of: [String].self) { group in
            for (server, user) in writers {
                group.addTask {
                    var posted: [String] = []
                    var count = 0
                    while count < operations, !(stop?.isRaised ?? false) {
                        count += 1
                        let answer: ServerProcess.Answer
                        switch count % 3 {
                        case 0 where !posted.isEmpty:
                            answer = try await server.call(
                                "PUT", "/v1/posts/\(posted.randomElement()!)/like", token: user.token)
                        case 1:
                            answer = try await server.call(
                                "PUT", "/v1/users/\(everyone.filter { $0 != user.id }.randomElement()!)/follow",
                                token: user.token)
                        default:
                            answer = try await server.call(
                                "POST", "/v1/posts", token: user.token, json: ["text": "post \(count) by \(user.id)"])
                            if answer.status == 201, let id = answer.json["id"] as? String {
                                posted.append(id)
                                stop?.noteAcknowledged()
                            }
                        }
                        guard [200, 201, 409, 503].contains(answer.status) else {
                            throw ServerError("a write answered \(answer.status): \(answer.json)")
                        }
                        if answer.status == 503 { try await Task.sleep(for: .milliseconds(100)) }
                    }
                    return posted
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

}

/// Tells background writers to stop, and counts the posts they have had acknowledged so far.
final class StopSignal: Sendable {
    private let raised = Mutex(false)
    private let acknowledged = Mutex(0)
    var isRaised: Bool { raised.withLock { $0 } }
    func raise() { raised.withLock { $0 = true } }
    func noteAcknowledged() { acknowledged.withLock { $0 += 1 } }

    /// Waits (at most 60 s) until `count` more posts than now have been acknowledged.
    func waitForAcknowledged(_ count: Int) async throws {
        let target = acknowledged.withLock { $0 } + count
        for _ in 0..<600 where acknowledged.withLock({ $0 }) < target { try await Task.sleep(for: .milliseconds(100)) }
        guard acknowledged.withLock({ $0 }) >= target else { throw ServerError("the writers made no progress") }
    }
}
