import Foundation

/// Times posts from the moment their author sends them to the moment they arrive on a follower's live Following feed
/// (`GET /v1/live?topics=feed`), one at a time, authors in turn: how long a post takes to reach its followers'
/// feeds under load, for authors on both sides of the fan-out limit.
struct FeedDeliveryProbe {
    struct Author {
        let user: String
        let token: String
        /// Whether the author has so many followers that their posts are merged into feeds when read, not written.
        let heldBack: Bool
    }

    struct Figures {
        var all = Latencies()
        var heldBack = Latencies()
        /// Posts refused, or never seen on the stream within 10 s.
        var lost = 0
    }

    let server: BenchServer
    let follower: (user: String, token: String)
    let authors: [Author]
    private let stream: EventStreamReader

    /// Opens `follower`'s live feed, who must follow every one of `authors`.
    init(server: BenchServer, follower: (user: String, token: String), authors: [Author]) throws {
        self.server = server
        self.follower = follower
        self.authors = authors
        let port = Int(server.base.split(separator: ":").last ?? "") ?? 0
        stream = try EventStreamReader(port: port, path: "/v1/live?topics=feed", token: follower.token)
    }

    /// Posts one probe every `interval` until `deadline`, numbering them from `first` on (markers must not repeat
    /// on one stream); returns what it measured and the next number.
    func measure(from first: Int, every interval: Duration, until deadline: ContinuousClock.Instant) async throws
        -> (figures: Figures, next: Int)
    {
        try await stream.waitUntilOpen()
        var figures = Figures()
        var number = first
        let clock = ContinuousClock()
        while clock.now < deadline {
            let author = authors[number % authors.count]
            let marker = "probe-\(number)-end"
            number += 1
            let sent = clock.now
            let (status, _) = try await server.request(
                "POST", "/v1/posts", token: author.token, json: ["text": marker])
            if status == 201, let arrived = await stream.arrival(of: marker, timeout: .seconds(10)) {
                figures.all.add(arrived - sent)
                if author.heldBack { figures.heldBack.add(arrived - sent) }
            } else {
                figures.lost += 1
            }
            try await Task.sleep(until: sent + interval)
        }
        return (figures, number)
    }

    func close() { stream.close() }
}
