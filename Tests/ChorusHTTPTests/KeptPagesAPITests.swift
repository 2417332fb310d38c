import ChorusBackend
import ChorusHTTP
import ChorusTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@Suite("API: pages kept as rendered")
struct KeptPagesAPITests {
    /// Feeds, cursors and posts tabs, as a few users read them.
    private static func pages(of users: [APIFixture.User]) -> [(uri: String, reader: APIFixture.User)] {
        users.flatMap { reader in
            [
                ("/v1/feed/following?limit=4", reader), ("/v1/feed/following?limit=50", reader),
                ("/v1/feed/home?limit=6", reader), ("/v1/users/\(users[0].id)/posts", reader),
                ("/v1/users/\(users[1].id)/likes", reader), ("/v1/feed/following?limit=3&media=true", reader),
            ]
        }
    }

    @Test(
        "every page answered, kept or not, gzipped or not, is byte for byte what a server keeping none answers at the same position, through posts, likes, reposts, follows, edits, deletions, blocks and mutes, across the fan-out limit",
        arguments: [0x5EED, 42, 7] as [UInt64]
    )
    func keptPagesNeverGoStale(seed: UInt64) async throws {
        // A limit of 2 followers: authors cross it both ways as the follows come and go.
        var options = APIFixture.options
        options.fanOutLimit = 2
        try await withAPI(options: options) { api in
            var plain = ServerConfiguration()
            plain.publicBaseURL = "http://chorus.test"
            plain.keptPageBytes = 0
            let keepingNone = Application(
                router: ChorusServer.makeRouter(backend: api.backend, configuration: plain),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Logger(label: "chorus.test"))
            try await keepingNone.test(.router) { client in
                let fresh = APIFixture(client: client, backend: api.backend)
                var users: [APIFixture.User] = []
                for name in ["Ana", "Bo", "Cy", "Di", "Ed"] { users.append(try await api.register(name)) }
                let image = try await api.uploadImage(users[0])
                var posts: [(id: String, author: Int)] = []
                var random = Xorshift(seed: seed)
                var reused = 0
                for step in 0..<160 {
                    let actor = random.next(below: users.count)
                    let other = random.next(below: users.count)
                    let post = posts.isEmpty ? nil : posts[random.next(below: posts.count)]
                    let token = users[actor].token
                    switch random.next(below: 12) {
                    case 0, 1:
                        let json: [String: Any] =
                            random.next(below: 3) == 0
                            ? ["caption": "step \(step)", "image": image] : ["text": "step \(step)"]
                        let answer = try await api.call(.post, "/v1/posts", token: token, json: json)
                        if let id = answer.object["id"] as? String { posts.append((id, actor)) }
                    case 2: try await api.call(.put, "/v1/users/\(users[other].id)/follow", token: token)
                    case 3: try await api.call(.delete, "/v1/users/\(users[other].id)/follow", token: token)
                    case 4: if let post { try await api.call(.put, "/v1/posts/\(post.id)/like", token: token) }
                    case 5: if let post { try await api.call(.delete, "/v1/posts/\(post.id)/like", token: token) }
                    case 6: if let post { try await api.call(.put, "/v1/posts/\(post.id)/repost", token: token) }
                    case 7: if let post { try await api.call(.delete, "/v1/posts/\(post.id)/repost", token: token) }
                    case 8: try await api.call(.patch, "/v1/me", token: token, json: ["name": "Name \(step)"])
                    case 9:
                        guard let post else { break }
                        let author = users[post.author].token
                        if random.next(below: 2) == 0 {
                            try await api.call(
                                .patch, "/v1/posts/\(post.id)", token: author, json: ["text": "edited \(step)"])
                        } else {
                            try await api.call(.delete, "/v1/posts/\(post.id)", token: author)
                        }
                    case 10:
                        if let post {
                            try await api.call(
                                .post, "/v1/posts/\(post.id)/comments", token: token, json: ["text": "hi"])
                        }
                    default:
                        let relation = random.next(below: 2) == 0 ? "block" : "mute"
                        let method: HTTPRequest.Method = random.next(below: 3) == 0 ? .put : .delete
                        try await api.call(method, "/v1/users/\(users[other].id)/\(relation)", token: token)
                    }
                    // Each command's answer came once the read models showed it, and nothing else writes: both servers
                    // answer at the same position.
                    for (uri, reader) in Self.pages(of: users) where random.next(below: 4) == 0 {
                        let kept = try await api.call(.get, uri, token: reader.token)
                        let again = try await api.call(.get, uri, token: reader.token)
                        let gzipped = try await api.call(
                            .get, uri, token: reader.token, headers: ["Accept-Encoding": "gzip"])
                        let read = try await fresh.call(.get, uri, token: reader.token)
                        // A user blocked either way is not found, by both servers.
                        #expect(kept.status == read.status && again.status == read.status, "step \(step): \(uri)")
                        #expect(
                            kept.position == read.position && again.position == read.position, "step \(step): \(uri)")
                        #expect(kept.bytes == read.bytes, "step \(step): \(uri) as \(reader.id)")
                        #expect(again.bytes == read.bytes, "step \(step): \(uri) as \(reader.id), answered again")
                        #expect(
                            try GzipPagesAPITests.unzipped(gzipped) == read.bytes,
                            "step \(step): \(uri) as \(reader.id), gzipped")
                    }
                }
                let metrics = String(
                    decoding: try await api.call(.get, "/metrics", token: APIFixture.adminToken).bytes, as: UTF8.self)
                reused = Self.counter(#"chorus_pages_total{result="reused"}"#, in: metrics)
                let rendered = Self.counter(#"chorus_pages_total{result="rendered"}"#, in: metrics)
                // Every page was asked for at least twice in a row, so at least half were answered as kept; and the
                // first of each pair after a relevant change had to be read again.
                #expect(reused > 0 && reused >= rendered, "reused \(reused), rendered \(rendered)")
                #expect(rendered > Self.pages(of: users).count, "pages read again after changes: \(rendered)")
            }
        }
    }

    @Test("a kept page is answered at the newest position while writes elsewhere move it, and a write it shows ends it")
    func keptPageFollowsThePosition() async throws {
        try await withAPI { api in
            let (ana, bo, cy) = (
                try await api.register("Ana"), try await api.register("Bo"), try await api.register("Cy")
            )
            try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            _ = try await api.post(bo, "first")
            let first = try await api.call(.get, "/v1/feed/following", token: ana.token)
            // Cy posts: nothing Ana's page shows changes; the same bytes come at the new position.
            let unrelated = try await api.call(.post, "/v1/posts", token: cy.token, json: ["text": "elsewhere"])
            let position = try #require(unrelated.position)
            let later = try await api.call(
                .get, "/v1/feed/following", token: ana.token, headers: ["Chorus-Min-Position": "\(position)"])
            #expect(later.bytes == first.bytes)
            #expect(try #require(later.position) >= position)
            // Bo's name shows on Ana's page: the edit ends the kept page.
            try await api.call(.patch, "/v1/me", token: bo.token, json: ["name": "Bo Renamed"])
            let renamed = try await api.call(.get, "/v1/feed/following", token: ana.token)
            let author = try #require(renamed.items.first?["author"] as? [String: Any])
            #expect(author["name"] as? String == "Bo Renamed")
            let metrics = String(
                decoding: try await api.call(.get, "/metrics", token: APIFixture.adminToken).bytes, as: UTF8.self)
            #expect(Self.counter(#"chorus_pages_total{result="reused"}"#, in: metrics) == 1)
        }
    }

    @Test("with --kept-pages off every page is read again")
    func keepingNone() async throws {
        var options = APIFixture.options
        options.server.keptPageBytes = 0
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            _ = try await api.post(ana, "mine")
            for _ in 0..<3 { try await api.call(.get, "/v1/feed/following", token: ana.token) }
            let metrics = String(
                decoding: try await api.call(.get, "/metrics", token: APIFixture.adminToken).bytes, as: UTF8.self)
            #expect(Self.counter(#"chorus_pages_total{result="reused"}"#, in: metrics) == 0)
        }
    }

    /// A counter's value in Prometheus text (0 when absent).
    private static func counter(_ name: String, in metrics: String) -> Int {
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// A small seeded generator: the same steps on every run.
private struct Xorshift {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(below bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
