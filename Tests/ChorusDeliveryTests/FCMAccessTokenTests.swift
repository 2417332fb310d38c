import AsyncHTTPClient
import ChorusDelivery
import CryptoExtras
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@Suite("Push: FCM's OAuth 2.0 access token")
struct FCMAccessTokenTests {
    private static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    private static let start = Date(timeIntervalSince1970: 1_800_000_000.5)

    /// A token endpoint as Google's: it checks the form and the assertion's RS256 signature with the account's public
    /// key, and answers a new access token each time, or `failing`'s error.
    private final class TokenEndpoint: Sendable {
        /// The claims of each assertion taken, as JSON.
        let assertions = Mutex<[Data]>([])
        let failing = Mutex<Bool>(false)

        func router(tokenURI: @escaping @Sendable () -> String) -> Router<BasicRequestContext> {
            let router = Router()
            router.post("/token") { [self] request, _ -> Response in
                let form = String(buffer: try await request.body.collect(upTo: 1 << 16))
                var fields: [String: String] = [:]
                for pair in form.split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    fields[parts[0]] = parts.count > 1 ? parts[1].removingPercentEncoding : ""
                }
                #expect(request.headers[.contentType] == "application/x-www-form-urlencoded")
                #expect(fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
                let parts = (fields["assertion"] ?? "").split(separator: ".").map(String.init)
                try #require(parts.count == 3)
                let signature = _RSA.Signing.RSASignature(rawRepresentation: try base64URLDecoded(parts[2]))
                #expect(
                    FCMAccessTokenTests.key.publicKey.isValidSignature(
                        signature, for: Data((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5))
                let header = try JSONSerialization.jsonObject(with: try base64URLDecoded(parts[0])) as? [String: Any]
                #expect(header?["alg"] as? String == "RS256")
                let claims = try base64URLDecoded(parts[1])
                let audience = (try JSONSerialization.jsonObject(with: claims) as? [String: Any])?["aud"] as? String
                #expect(audience == tokenURI())
                let count = assertions.withLock {
                    $0.append(claims)
                    return $0.count
                }
                if failing.withLock({ $0 }) {
                    return Response(
                        status: .badRequest, headers: [.contentType: "application/json"],
                        body: .init(
                            byteBuffer: ByteBuffer(
                                string: #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)))
                }
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(
                        byteBuffer: ByteBuffer(
                            string: #"{"access_token":"ya29.\#(count)","expires_in":3599,"token_type":"Bearer"}"#)))
            }
            return router
        }

    }

    private static func account(tokenURI: String, key: String = Self.key.pemRepresentation) throws -> FCMServiceAccount
    {
        let json: [String: Any] = [
            "type": "service_account", "project_id": "chorus-test",
            "client_email": "push@chorus-test.iam.gserviceaccount.com",
            "private_key": key, "token_uri": tokenURI,
        ]
        return try FCMServiceAccount(json: Array(try JSONSerialization.data(withJSONObject: json)))
    }

    @Test(
        "an RS256 assertion of the account's, posted as a form to token_uri; the token reused until a minute before it expires; a refused one asked for again"
    )
    func flow() async throws {
        let endpoint = TokenEndpoint()
        let port = Mutex(0)
        let application = Application(
            router: endpoint.router { "http://127.0.0.1:\(port.withLock { $0 })/token" },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await application.test(.live) { client in
            port.withLock { $0 = client.port ?? 0 }
            let tokenURI = "http://127.0.0.1:\(client.port ?? 0)/token"
            let tokens = try await FCMAccessToken(account: try Self.account(tokenURI: tokenURI))
            let first = try await tokens.token(at: Self.start)
            #expect(first == "ya29.1")
            #expect(try await tokens.token(at: Self.start.addingTimeInterval(3500)) == first)
            let firstClaims = try #require(endpoint.assertions.withLock { $0.first })
            let claims = try #require(try JSONSerialization.jsonObject(with: firstClaims) as? [String: Any])
            #expect(claims["iss"] as? String == "push@chorus-test.iam.gserviceaccount.com")
            #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
            #expect(claims["iat"] as? Int == 1_800_000_000)
            #expect(claims["exp"] as? Int == 1_800_003_600)

            // A minute before its 3,599 s are out, a new one.
            #expect(try await tokens.token(at: Self.start.addingTimeInterval(3540)) == "ya29.2")
            await tokens.refused("ya29.1")
            #expect(
                try await tokens.token(at: Self.start.addingTimeInterval(3541)) == "ya29.2", "an old token's refusal")
            await tokens.refused("ya29.2")
            #expect(try await tokens.token(at: Self.start.addingTimeInterval(3542)) == "ya29.3")

            endpoint.failing.withLock { $0 = true }
            await tokens.refused("ya29.3")
            do {
                _ = try await tokens.token(at: Self.start.addingTimeInterval(3544))
                Issue.record("a token was taken from an endpoint answering 400")
            } catch {
                #expect(
                    "\(error)".contains("answered 400") && "\(error)".contains("Invalid JWT Signature."), "\(error)")
            }
        }
    }

    @Test("a service account file missing a field, or with a key that is not RSA, is refused by name")
    func badAccounts() async throws {
        #expect(throws: FCMError.self) { try FCMServiceAccount(json: Array("[]".utf8)) }
        do {
            _ = try FCMServiceAccount(json: Array(#"{"project_id":"p","client_email":"e","private_key":"k"}"#.utf8))
            Issue.record("a file without token_uri was taken")
        } catch {
            #expect(error.description.contains("token_uri"))
        }
        let account = try Self.account(tokenURI: "http://127.0.0.1:1/token", key: "not a key")
        await #expect(throws: FCMError.self) { try await FCMAccessToken(account: account) }
    }
}
