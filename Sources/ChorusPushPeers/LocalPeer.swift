import Foundation
import Hummingbird
import HummingbirdHTTP2
import Synchronization

/// Runs a router over HTTP/2 and TLS on loopback, with a certificate of `authority`, for as long as `body` runs: on
/// `port`, or one the system picks (0). `body` gets the port it listens on.
func runLocalPeer(
    _ router: Router<BasicRequestContext>, authority: LocalCertificateAuthority, port: Int,
    _ body: (Int) async throws -> Void
) async throws {
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router, server: try .http2Upgrade(tlsConfiguration: authority.serverTLS),
        configuration: .init(address: .hostname("127.0.0.1", port: port)),
        onServerRunning: { channel in
            listening.yield(channel.localAddress?.port ?? 0)
        })
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        do {
            try await body(port)
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

/// A JWT's header and claims, when `verifies` accepts its signature over its first two parts.
func verifiedJWT(_ jwt: String, verifies: (_ signature: Data, _ signed: Data) -> Bool) -> (
    header: [String: Any], claims: [String: Any]
)? {
    let parts = jwt.split(separator: ".").map(String.init)
    guard parts.count == 3, let signature = base64URLData(parts[2]),
        verifies(signature, Data((parts[0] + "." + parts[1]).utf8)),
        let header = base64URLData(parts[0]).flatMap({ try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }),
        let claims = base64URLData(parts[1]).flatMap({ try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
    else { return nil }
    return (header, claims)
}

/// The bytes of base64url without padding (RFC 7515), as a JWT's parts are; nil for what is not.
package func base64URLData(_ text: String) -> Data? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64)
}

/// A JSON answer.
func jsonResponse(_ status: Int, _ json: String) -> Response {
    Response(
        status: .init(code: status), headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: json)))
}

/// What a peer took, in order, with how many requests each device token had: counted as they come, since a benchmark
/// sends hundreds of thousands.
struct TakenRequests<Item: Sendable>: Sendable {
    private(set) var items: [Item] = []
    private var perToken: [String: Int] = [:]

    /// Keeps `item`, for `token`; answers how many requests for `token` came before it.
    mutating func take(_ item: Item, token: String) -> Int {
        items.append(item)
        defer { perToken[token, default: 0] += 1 }
        return perToken[token, default: 0]
    }
}
