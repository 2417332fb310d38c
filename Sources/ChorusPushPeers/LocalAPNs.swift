import Crypto
import Foundation
import Hummingbird
import Synchronization

/// An APNs-compatible server on loopback: HTTP/2 over TLS with a certificate of a ``LocalCertificateAuthority``, taking
/// `POST /3/device/{token}` (and `/sandbox/3/device/{token}`, the sandbox host) as Apple's does. It checks the provider
/// token's signature with the team key's public half (403 `InvalidProviderToken` otherwise), keeps every request, and
/// answers by the device token: `gone` 410 `Unregistered` stamped with the time of the request, `bad` 400 `BadDeviceToken`, `busy` 429
/// with `Retry-After: 7`, `broken` 500, `slow` after 3 s, `expired` 403 `ExpiredProviderToken` to its first request;
/// any other 200.
package final class LocalAPNs: Sendable {
    /// One request as the peer took it.
    package struct Received: Sendable {
        package let sandbox: Bool
        package let token: String
        package let headers: [String: String]
        package let body: [UInt8]
        /// The provider token's claims, its signature checked.
        package let claims: [String: String]
        package let keyID: String?
        /// When the request's body had all arrived.
        package let arrivedAt: ContinuousClock.Instant

        package var payload: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    package let port: Int
    private let key: P256.Signing.PublicKey
    private let requests = Mutex(TakenRequests<Received>())
    /// Provider tokens whose signature checked, with their `kid` and claims.
    private let checkedTokens = Mutex<[String: (String?, [String: String])]>([:])

    private init(port: Int, key: P256.Signing.PublicKey) {
        self.port = port
        self.key = key
    }

    package var received: [Received] { requests.withLock { $0.items } }
    /// How many requests it took, of any kind.
    package var receivedCount: Int { requests.withLock { $0.items.count } }

    /// Runs `body` with a peer listening (on `port`, or one the system picks), and stops it after.
    package static func run(
        _ authority: LocalCertificateAuthority, checkingWith key: P256.Signing.PublicKey, port: Int = 0,
        _ body: (LocalAPNs) async throws -> Void
    ) async throws {
        let peer = Mutex<LocalAPNs?>(nil)
        let router = Router()
        router.get("/health") { _, _ in "ok" }
        for prefix in ["/3/device/:token", "/sandbox/3/device/:token"] {
            router.post(RouterPath(prefix)) { request, context in
                guard let answering = peer.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
                return try await answering.answer(request, context, sandbox: prefix.hasPrefix("/sandbox"))
            }
        }
        try await runLocalPeer(router, authority: authority, port: port) { port in
            let running = LocalAPNs(port: port, key: key)
            peer.withLock { $0 = running }
            try await body(running)
        }
    }

    private func answer(_ request: Request, _ context: BasicRequestContext, sandbox: Bool) async throws -> Response {
        let token = context.parameters.get("token") ?? ""
        let body = Array(try await request.body.collect(upTo: 8192).readableBytesView)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        guard let bearer = headers["authorization"], bearer.hasPrefix("bearer "),
            let (keyID, claims) = verified(String(bearer.dropFirst("bearer ".count)))
        else { return Self.refusal(403, "InvalidProviderToken") }
        let received = Received(
            sandbox: sandbox, token: token, headers: headers, body: body, claims: claims, keyID: keyID, arrivedAt: .now)
        let earlier = requests.withLock { $0.take(received, token: token) }
        switch token {
        case "gone":
            return Self.refusal(410, "Unregistered", timestamp: Int64(Date().timeIntervalSince1970 * 1000))
        case "bad": return Self.refusal(400, "BadDeviceToken")
        case "busy":
            var response = Self.refusal(429, "TooManyRequests")
            response.headers[.retryAfter] = "7"
            return response
        case "broken": return Self.refusal(500, "InternalServerError")
        case "slow":
            try await Task.sleep(for: .seconds(3))
        case "expired" where earlier == 0:
            return Self.refusal(403, "ExpiredProviderToken")
        default: break
        }
        var response = Response(status: .ok)
        response.headers[.init("apns-id")!] = headers["apns-id"] ?? ""
        return response
    }

    /// The JWT's `kid` and claims, when its ES256 signature checks with the team key: checked once per token, as APNs
    /// checks a provider token once and then takes it until it expires.
    private func verified(_ jwt: String) -> (String?, [String: String])? {
        if let known = checkedTokens.withLock({ $0[jwt] }) { return known }
        let verified = verifiedJWT(jwt) { signature, signed in
            guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: signed)
        }
        guard let verified else { return nil }
        let checked = (verified.header["kid"] as? String, verified.claims.mapValues { "\($0)" })
        checkedTokens.withLock { $0[jwt] = checked }
        return checked
    }

    private static func refusal(_ status: Int, _ reason: String, timestamp: Int64? = nil) -> Response {
        var json = "{\"reason\":\"\(reason)\""
        if let timestamp { json += ",\"timestamp\":\(timestamp)" }
        return jsonResponse(status, json + "}")
    }
}
