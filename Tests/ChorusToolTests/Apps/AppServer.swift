import ChorusClient
import ChorusTestSupport
import Foundation
import Synchronization

/// `chorus serve` for the five apps' end-to-end tests, which talk to it only through the SDK: started on a data
/// directory, and killed (SIGKILL) and started again on the same port mid-test, so that every open live stream drops
/// and must resume by itself.
final class AppServer: Sendable {
    let data: String
    let url: URL
    private let current: Mutex<ServerProcess>

    private init(data: String, server: ServerProcess) {
        self.data = data
        url = URL(string: server.base)!
        current = Mutex(server)
    }

    /// Runs `body` against a server on a fresh data directory, stopped at the end.
    static func run(_ body: (AppServer) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/data"
            let server = try await ServerProcess(data: data)
            let app = AppServer(data: data, server: server)
            do {
                try await body(app)
            } catch {
                _ = await app.current.withLock { $0 }.stop()
                throw error
            }
            _ = await app.current.withLock { $0 }.stop()
        }
    }

    /// A new client of this server, signed out.
    func client() -> ChorusClient { ChorusClient(serverURL: url) }

    /// A new client, signed up as `name`.
    func user(_ name: String) async throws -> (client: ChorusClient, profile: Profile) {
        let client = client()
        let email = "\(name.lowercased().filter(\.isLetter))-\(UUID().uuidString.prefix(8))@example.com"
        let profile = try await client.signUp(email: email, password: "secret-password", name: name)
        return (client, profile)
    }

    /// What the server answers to a GET of `url`, one of its own (an image's variant, say), as a browser or an image
    /// view would fetch it, without the SDK.
    func fetch(_ url: String) async throws -> ServerProcess.Answer {
        guard let parts = URLComponents(string: url), url.hasPrefix(self.url.absoluteString) else {
            throw ServerError("\(url) is not on this server")
        }
        let query = parts.percentEncodedQuery.map { "?" + $0 } ?? ""
        return try await current.withLock { $0 }.call("GET", parts.percentEncodedPath + query)
    }

    /// Kills the server outright and starts it again on the same port and data: every connection drops.
    func crashAndRestart() async throws {
        let old = current.withLock { $0 }
        old.kill()
        _ = await old.exited()
        let port = old.port
        let restarted = try await ServerProcess(data: data, port: port)
        current.withLock { $0 = restarted }
    }
}

/// Collects what a live stream delivers, in the background, for a test to wait on.
final class LiveCollector: Sendable {
    private final class Received: Sendable {
        let events = Mutex<[LiveUpdate]>([])
        let failure = Mutex<(any Error)?>(nil)
    }

    private let received = Received()
    private let task: Task<Void, Never>

    init(_ live: LiveEvents) {
        let received = self.received
        task = Task {
            do {
                for try await update in live { received.events.withLock { $0.append(update) } }
            } catch {
                received.failure.withLock { $0 = error }
            }
        }
    }

    deinit { task.cancel() }

    /// Everything delivered so far.
    var delivered: [LiveUpdate] { received.events.withLock { $0 } }

    /// Waits until `count` events in all have come (at most 30 s), and returns them all.
    @discardableResult
    func waitFor(_ count: Int, sourceLocation: String = #function) async throws -> [LiveUpdate] {
        try await eventually("\(sourceLocation): \(count) live events, of which came \(delivered)") {
            if let error = received.failure.withLock({ $0 }) { throw error }
            return delivered.count >= count
        }
        return delivered
    }

    func stop() { task.cancel() }
}

/// A small PNG.
let pngBytes = Data(SampleImages.png)

extension LiveUpdate {
    /// The event's kind, for comparing sequences of them.
    var name: String {
        switch event {
        case .post: "post"
        case .postRemoved: "post_removed"
        case .comment: "comment"
        case .commentRemoved: "comment_removed"
        case .likes: "like"
        case .reposts: "repost"
        case .notification: "notification"
        case .message: "message"
        case .conversation: "conversation"
        case .read: "read"
        case .profile: "profile"
        case .room: "room"
        case .other(let name, _): name
        }
    }
}
