import ChorusClient
import ChorusPushPeers
import ChorusTestSupport
import Foundation
import Synchronization
import Testing

/// `chorus serve` for the five apps' end-to-end tests, which talk to it only through the SDK: started on a data
/// directory, and killed (SIGKILL) and started again on the same port mid-test, so that every open live stream drops
/// and must resume by itself. It sends pushes to a local APNs, where the tests see what each phone got.
final class AppServer: Sendable {
    let data: String
    let url: URL
    /// Where the server's pushes arrive.
    let apns: LocalAPNs
    private let environment: [String: String]
    private let current: Mutex<ServerProcess>

    private init(data: String, server: ServerProcess, apns: LocalAPNs, environment: [String: String]) {
        self.data = data
        url = URL(string: server.base)!
        current = Mutex(server)
        self.apns = apns
        self.environment = environment
    }

    /// Runs `body` against a server on a fresh data directory, stopped at the end.
    static func run(_ body: (AppServer) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            try await PushDeliveryTests.withPeers(root: directory) { peers in
                let data = directory + "/data"
                let server = try await ServerProcess(data: data, environment: peers.environment)
                let app = AppServer(data: data, server: server, apns: peers.apns, environment: peers.environment)
                do {
                    try await body(app)
                } catch {
                    _ = await app.current.withLock { $0 }.stop()
                    throw error
                }
                _ = await app.current.withLock { $0 }.stop()
            }
        }
    }

    /// Registers a new phone of `client`'s user, as the app does with the token iOS gives it; answers the token, hex.
    func registerPhone(of client: ChorusClient) async throws -> String {
        let token = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        try await client.registerDevice(token: token, service: .apns(sandbox: true))
        return token.map { String(format: "%02x", $0) }.joined()
    }

    /// The alerts' texts of the pushes the phone with `token` got so far, in the order each first came. A push is sent
    /// at least once: one the server sent just before it was killed, and had not recorded as sent, comes again after
    /// the restart, with the same `apns-id`, and counts once.
    func alerts(on token: String) -> [String] {
        var seen = Set<String>()
        return apns.received.filter { $0.token == token && seen.insert($0.headers["apns-id"] ?? "").inserted }
            .compactMap { (($0.payload["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String }
    }

    /// Waits until the phone with `token` has got `expected` alerts, and no others.
    func waitForAlerts(_ expected: [String], on token: String) async throws {
        try await eventually("the alerts \(expected) on the phone, not \(alerts(on: token))") {
            alerts(on: token).count >= expected.count
        }
        #expect(alerts(on: token) == expected)
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
        let restarted = try await ServerProcess(data: data, port: port, environment: environment)
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
