import ChorusTestSupport
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// A webhook receiver on loopback for the tests: it answers as its mode says, and keeps every request it got.
final class WebhookReceiver: Sendable {
    enum Mode: Sendable {
        /// Answers 200 after a delay longer than the sender waits.
        case slow(Duration)
        case status(Int)
    }

    struct Received: Sendable {
        let id: String
        let timestamp: String
        let signature: String
        let body: [UInt8]
        /// What it was answered, and whether the answer was a prompt 2xx (the sender saw it).
        let acknowledged: Bool
    }

    let port: Int
    private let mode: Mutex<Mode>
    private let log = Mutex<[Received]>([])
    /// Requests whose handler has started and not yet answered.
    private let inFlight = Mutex(0)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(port: Int, mode: Mode) {
        self.port = port
        self.mode = Mutex(mode)
    }

    var received: [Received] { log.withLock { $0 } }

    func set(_ mode: Mode) { self.mode.withLock { $0 = mode } }

    /// Returns once no request is being answered and none came for 300 ms. Called after the sending server was
    /// killed and before the mode changes: a request the dead server had already written may still reach the
    /// handler, and it must be answered in the old mode — an answer nobody reads is no acknowledgement.
    func settle() async throws {
        var last = -1
        for _ in 0..<100 {
            let now = received.count
            if now == last, inFlight.withLock({ $0 }) == 0 { return }
            last = now
            try await Task.sleep(for: .milliseconds(300))
        }
        Issue.record("the receiver was still answering requests after 30 s")
    }

    /// Returns once more than `count` requests came; throws after 30 s.
    func waitForRequests(moreThan count: Int) async throws {
        try await eventually("a request past \(count)") { received.count > count }
    }

    /// Starts listening; until then connections are refused (the receiver is down).
    func start() async throws {
        let router = Router()
        router.post("/hook") { [self] request, _ -> Response in
            inFlight.withLock { $0 += 1 }
            defer { inFlight.withLock { $0 -= 1 } }
            let body = try await request.body.collect(upTo: 1 << 20)
            let current = mode.withLock { $0 }
            var acknowledged = false
            var status = HTTPResponse.Status.ok
            switch current {
            case .slow(let delay):
                try await Task.sleep(for: delay)
            case .status(let code):
                status = HTTPResponse.Status(code: code)
                acknowledged = (200..<300).contains(code)
            }
            let headers = request.headers
            log.withLock {
                $0.append(
                    Received(
                        id: headers[HTTPField.Name("webhook-id")!] ?? "",
                        timestamp: headers[HTTPField.Name("webhook-timestamp")!] ?? "",
                        signature: headers[HTTPField.Name("webhook-signature")!] ?? "",
                        body: Array(body.readableBytesView), acknowledged: acknowledged))
            }
            return Response(status: status)
        }
        let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        task.withLock { $0 = Task { try await application.runService() } }
        for _ in 0..<100 {
            if let descriptor = try? connectToLoopback(port: port) {
                close(descriptor)
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }

    /// Whether `received`'s signature is the Standard Webhooks one under `secret` (`whsec_…`).
    static func verifies(_ received: Received, secret: String) -> Bool {
        guard let key = Data(base64Encoded: String(secret.dropFirst(6))) else { return false }
        var mac = HMAC<SHA256>(key: SymmetricKey(data: key))
        mac.update(data: Array("\(received.id).\(received.timestamp).".utf8))
        mac.update(data: received.body)
        return received.signature == "v1," + Data(mac.finalize()).base64EncodedString()
    }
}
