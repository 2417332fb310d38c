import AsyncHTTPClient
import Foundation
import NIOCore

/// Where FCM is and who sends to it: the service account (`CHORUS_FCM_SERVICE_ACCOUNT_FILE`) and the API's base URL
/// (`CHORUS_FCM_URL`).
package struct FCMConfiguration: Sendable {
    package var account: FCMServiceAccount
    package var url = "https://fcm.googleapis.com"
    /// An answer slower than this counts as a failure, tried again.
    package var timeout: Duration = .seconds(10)

    package init(account: FCMServiceAccount) { self.account = account }
}

/// Sends pushes through FCM's HTTP v1 API: `POST {url}/v1/projects/{project_id}/messages:send` with the OAuth 2.0
/// access token of ``FCMAccessToken``, renewed when FCM answers 401.
package final class FCMSender: Sendable {
    private let configuration: FCMConfiguration
    private let accessToken: FCMAccessToken
    private let client: HTTPClient

    package init(configuration: FCMConfiguration, client: HTTPClient) async throws {
        self.configuration = configuration
        self.client = client
        accessToken = try await FCMAccessToken(
            account: configuration.account, client: client, timeout: max(configuration.timeout, .seconds(30)))
    }

    /// Sends `push` and says what its answer asks. A refused access token is renewed and the push sent once more; a
    /// failed token request, a refused connection or a timeout is a retry.
    package func send(_ push: Push) async -> PushOutcome {
        await PushOutcome.attempting(
            with: { try await accessToken.token(at: Date()) },
            renewed: { refused in
                await accessToken.refused(refused)
                return try await accessToken.token(at: Date())
            }, refusal: "UNAUTHENTICATED",
            attempt: { try await attempt(push, bearer: $0) })
    }

    private func attempt(_ push: Push, bearer: String) async throws -> PushOutcome {
        var request = HTTPClientRequest(
            url: configuration.url + "/v1/projects/\(configuration.account.projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + bearer)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: push.payload.fcm(token: push.token)))
        let response = try await client.execute(
            request, timeout: .milliseconds(WebhookConfiguration.milliseconds(configuration.timeout)))
        let body = try await response.body.collect(upTo: 64 * 1024)
        return PushOutcome(
            fcmStatus: Int(response.status.code), body: Array(body.readableBytesView),
            retryAfter: response.headers.first(name: "retry-after"))
    }
}

/// What an answer of FCM asks of the sender, from its status and its error body
/// `{"error": {"status", "message", "details": [{"errorCode"}, {"fieldViolations": [{"field"}]}]}}`.
extension PushOutcome {
    package init(fcmStatus status: Int, body: [UInt8], retryAfter: String?) {
        let error = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["error"] as? [String: Any]
        let details = error?["details"] as? [[String: Any]] ?? []
        let code = details.lazy.compactMap { $0["errorCode"] as? String }.first ?? error?["status"] as? String
        let reason = code ?? "HTTP \(status)"
        // INVALID_ARGUMENT is about the token when a field violation names it (or, without one, its message does).
        let violations = details.flatMap { $0["fieldViolations"] as? [[String: Any]] ?? [] }
        let message = (error?["message"] as? String ?? "").lowercased()
        let aboutToken =
            violations.contains { ($0["field"] as? String)?.hasSuffix("token") == true }
            || (violations.isEmpty && message.contains("registration token"))
        switch (status, code) {
        case (200, _): self = .delivered
        case (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"): self = .forgetDevice(reason: reason)
        case (400, "INVALID_ARGUMENT") where aboutToken: self = .forgetDevice(reason: reason)
        case (401, _): self = .renewCredentials
        case (403, _), (429, _), (500...599, _): self = .retry(after: Self.seconds(retryAfter), reason: reason)
        default: self = .drop(reason: reason)
        }
    }
}
