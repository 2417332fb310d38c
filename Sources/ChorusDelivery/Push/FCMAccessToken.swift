import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// A Firebase service account, from the JSON file the Firebase console gives (`CHORUS_FCM_SERVICE_ACCOUNT_FILE`): what
/// FCM's HTTP v1 API and its OAuth 2.0 flow need of it.
package struct FCMServiceAccount: Sendable {
    package let projectID: String
    package let clientEmail: String
    package let privateKeyPEM: String
    /// Where access tokens are asked for: Google's `https://oauth2.googleapis.com/token` in a real file.
    package let tokenURI: String

    /// Reads the file's JSON; a missing field is named in the error.
    package init(json: [UInt8]) throws(FCMError) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw FCMError("the service account file is not a JSON object")
        }
        func field(_ name: String) throws(FCMError) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw FCMError("the service account file has no \(name)")
            }
            return value
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        privateKeyPEM = try field("private_key")
        tokenURI = try field("token_uri")
    }
}

/// The OAuth 2.0 access token FCM's HTTP v1 API takes (Google's "service account" flow): an RS256 JWT assertion
/// `{iss: client_email, scope, aud: token_uri, iat, exp}` under the account's key, posted to `token_uri`, whose answer
/// `{access_token, expires_in}` is reused until a minute before it expires. An actor, so that sends racing for an
/// expired token ask for one new token between them.
package actor FCMAccessToken {
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Asked for anew this long before Google says it expires, for clocks and requests in flight.
    package static let margin: TimeInterval = 60
    /// The assertion's own lifetime: Google takes at most an hour.
    static let assertionLifetime: TimeInterval = 3600

    private struct Assertion: JWTPayload {
        let iss: IssuerClaim
        let scope: String
        let aud: AudienceClaim
        let iat: IssuedAtClaim
        let exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let account: FCMServiceAccount
    private let client: HTTPClient
    /// An answer from the token endpoint slower than this fails the send, which is tried again.
    private let timeout: Duration
    private let keys = JWTKeyCollection()
    private var current: (token: String, renewAt: Date)?

    /// Checks the account's key (RSA, at least 2,048 bits, PEM); asks for no token yet.
    package init(account: FCMServiceAccount, client: HTTPClient = .shared, timeout: Duration = .seconds(30))
        async throws(FCMError)
    {
        self.account = account
        self.client = client
        self.timeout = timeout
        let key: Insecure.RSA.PrivateKey
        do {
            key = try Insecure.RSA.PrivateKey(pem: account.privateKeyPEM)
        } catch {
            throw FCMError("the service account's private_key is not an RSA private key in PEM: \(error)")
        }
        await keys.add(rsa: key, digestAlgorithm: .sha256, serializer: DefaultJWTSerializer.wholeSeconds)
    }

    /// The access token to send at `now`: the one in use until a minute before it expires, else a new one.
    package func token(at now: Date) async throws -> String {
        if let current, now < current.renewAt { return current.token }
        let (token, lifetime) = try await ask(at: now)
        current = (token, now.addingTimeInterval(lifetime - Self.margin))
        return token
    }

    /// Forgets `token` after FCM refused it (401): the next send asks for a new one.
    package func refused(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func ask(at now: Date) async throws -> (token: String, lifetime: TimeInterval) {
        let assertion = try await keys.sign(
            Assertion(
                iss: IssuerClaim(value: account.clientEmail), scope: Self.scope,
                aud: AudienceClaim(value: account.tokenURI), iat: IssuedAtClaim(value: now),
                exp: ExpirationClaim(value: now.addingTimeInterval(Self.assertionLifetime))))
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        // The grant type's colons escaped; the assertion is base64url and dots, which a form takes as they are.
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await client.execute(
            request, timeout: .milliseconds(WebhookConfiguration.milliseconds(timeout)))
        let body = try await response.body.collect(upTo: 64 << 10)
        let answer = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        guard response.status.code == 200 else {
            let said = [answer?["error"], answer?["error_description"]].compactMap { $0 as? String }
            throw FCMError(
                "\(account.tokenURI) answered \(response.status.code) to the access token request"
                    + (said.isEmpty ? "" : ": " + said.joined(separator: ", ")))
        }
        guard let token = answer?["access_token"] as? String, let lifetime = answer?["expires_in"] as? NSNumber,
            lifetime.doubleValue > 0
        else { throw FCMError("\(account.tokenURI) answered no access_token with an expires_in") }
        return (token, lifetime.doubleValue)
    }
}

/// What went wrong with FCM's configuration or its token endpoint, said for an operator.
package struct FCMError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
