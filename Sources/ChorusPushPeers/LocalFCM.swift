import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import Synchronization

/// An FCM-compatible server on loopback, HTTP/2 over TLS with a certificate of a ``LocalCertificateAuthority``: Google's
/// token endpoint (`POST /token`, the service account's `token_uri`) and FCM's HTTP v1 API
/// (`POST /v1/projects/{project}/messages:send`), as Google's behave.
///
/// The token endpoint checks the form and the assertion's RS256 signature with the account's public key, and answers a
/// new access token each time. `messages:send` takes only a token it issued (401 `UNAUTHENTICATED` otherwise), keeps
/// every message, and answers by the device token: `gone` 404 `UNREGISTERED`, `bad` 400 `INVALID_ARGUMENT` on
/// `message.token`, `busy` 429 `QUOTA_EXCEEDED` with `Retry-After: 7`, `broken` 500 `INTERNAL`, `revoked` 401 to its
/// first message (the access token revoked); any other 200 with the message's name.
package final class LocalFCM: Sendable {
    /// One message as the peer took it.
    package struct Received: Sendable {
        package let project: String
        package let token: String
        package let accessToken: String
        package let body: [UInt8]

        /// The `message` object.
        package var message: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any])?["message"] as? [String: Any]
                ?? [:]
        }
    }

    package let port: Int
    private let key: _RSA.Signing.PublicKey
    private let requests = Mutex(TakenRequests<Received>())
    private let issued = Mutex<[String]>([])

    private init(port: Int, key: _RSA.Signing.PublicKey) {
        self.port = port
        self.key = key
    }

    package var received: [Received] { requests.withLock { $0.items } }
    /// The access tokens issued, oldest first.
    package var accessTokens: [String] { issued.withLock { $0 } }
    /// Where the service account's `token_uri` points.
    package var tokenURI: String { "https://localhost:\(port)/token" }

    /// Runs `body` with a peer listening (on `port`, or one the system picks) that checks assertions with `key`, and
    /// stops it after.
    package static func run(
        _ authority: LocalCertificateAuthority, checkingWith key: _RSA.Signing.PublicKey, port: Int = 0,
        _ body: (LocalFCM) async throws -> Void
    ) async throws {
        let peer = Mutex<LocalFCM?>(nil)
        let router = Router()
        router.post("/token") { request, _ in
            guard let answering = peer.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await answering.issue(request)
        }
        router.post("/v1/projects/:project/:send") { request, context in
            guard let answering = peer.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await answering.send(request, context)
        }
        try await runLocalPeer(router, authority: authority, port: port) { port in
            let running = LocalFCM(port: port, key: key)
            peer.withLock { $0 = running }
            try await body(running)
        }
    }

    /// The JSON of a service account file whose `token_uri` is this peer's, for the private key `pem`.
    package func serviceAccount(project: String, privateKeyPEM pem: String) -> [UInt8] {
        let json: [String: Any] = [
            "type": "service_account", "project_id": project, "client_email": "push@\(project).iam.gserviceaccount.com",
            "private_key": pem, "token_uri": tokenURI,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: json, options: [.withoutEscapingSlashes])) ?? Data())
    }

    private func issue(_ request: Request) async throws -> Response {
        let form = String(buffer: try await request.body.collect(upTo: 1 << 16))
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            fields[parts[0]] = parts.count > 1 ? parts[1].removingPercentEncoding : ""
        }
        let verified = verifiedJWT(fields["assertion"] ?? "") { signature, signed in
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let verified,
            verified.header["alg"] as? String == "RS256", verified.claims["aud"] as? String == tokenURI
        else {
            return jsonResponse(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
        }
        let token = issued.withLock {
            $0.append("ya29.local-\($0.count + 1)")
            return $0[$0.count - 1]
        }
        return jsonResponse(200, #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#)
    }

    private func send(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let project = context.parameters.get("project") ?? ""
        guard context.parameters.get("send") == "messages:send" else { return Response(status: .notFound) }
        let body = Array(try await request.body.collect(upTo: 1 << 16).readableBytesView)
        let bearer = request.headers[.authorization] ?? ""
        let accessToken = bearer.hasPrefix("Bearer ") ? String(bearer.dropFirst("Bearer ".count)) : ""
        guard issued.withLock({ $0.contains(accessToken) }) else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        }
        let message = ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any])?["message"]
        let token = (message as? [String: Any])?["token"] as? String ?? ""
        let received = Received(project: project, token: token, accessToken: accessToken, body: body)
        let earlier = requests.withLock { $0.take(received, token: token) }
        switch token {
        case "gone": return Self.error(404, "UNREGISTERED", "Requested entity was not found.", code: "UNREGISTERED")
        case "bad":
            return Self.error(
                400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                code: "INVALID_ARGUMENT", field: "message.token")
        case "busy":
            var response = Self.error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", code: "QUOTA_EXCEEDED")
            response.headers[.retryAfter] = "7"
            return response
        case "broken": return Self.error(500, "INTERNAL", "Internal error.", code: "INTERNAL")
        case "revoked" where earlier == 0:
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        default:
            return jsonResponse(200, #"{"name":"projects/\#(project)/messages/\#(earlier + 1)"}"#)
        }
    }

    /// Google's error body: `{"error": {code, message, status, details: [FcmError, BadRequest]}}`.
    private static func error(
        _ status: Int, _ name: String, _ message: String, code: String? = nil, field: String? = nil
    )
        -> Response
    {
        var details: [[String: Any]] = []
        if let code {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code])
        }
        if let field {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [["field": field, "description": message]],
            ])
        }
        let error: [String: Any] = ["code": status, "message": message, "status": name, "details": details]
        let json = (try? JSONSerialization.data(withJSONObject: ["error": error])) ?? Data()
        return jsonResponse(status, String(decoding: json, as: UTF8.self))
    }
}
