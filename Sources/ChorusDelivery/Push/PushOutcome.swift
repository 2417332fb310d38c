import Foundation

/// What a push service's answer asks of the sender, whichever service gave it.
package enum PushOutcome: Equatable, Sendable {
    /// 200: never sent again.
    case delivered
    /// The token is dead (APNs: 410 `Unregistered` with a timestamp after the device registered, 400 `BadDeviceToken`
    /// or `DeviceTokenNotForTopic`; FCM: `UNREGISTERED`, `INVALID_ARGUMENT` on the token, `SENDER_ID_MISMATCH`): the
    /// device is forgotten and its pushes dropped.
    case forgetDevice(reason: String)
    /// The credentials expired (APNs' 403 `ExpiredProviderToken`, FCM's 401): sent again with renewed ones.
    case renewCredentials
    /// 429, 5xx, a connection that failed, or the configuration refused (APNs' 403 `InvalidProviderToken`, a topic not
    /// allowed): tried again after `after` (from `Retry-After`) or the sender's backoff, until the push expires.
    case retry(after: Duration?, reason: String)
    /// A push the service will never take as it is (payload too large, a bad header), or an APNs 410 about the token
    /// from before the device registered it again: dropped, and counted.
    case drop(reason: String)

    /// The outcome of `attempt` with the credentials `current` gives, and once more with those `renewed` gives when the
    /// answer asks for it; a second refusal is a retry for `refusal`, and an error (a token request that failed, a
    /// refused connection, a timeout) a retry too.
    static func attempting(
        with current: () async throws -> String, renewed: (_ refused: String) async throws -> String,
        refusal: String, attempt: (_ credentials: String) async throws -> PushOutcome
    ) async -> PushOutcome {
        do {
            let credentials = try await current()
            let outcome = try await attempt(credentials)
            guard outcome == .renewCredentials else { return outcome }
            let again = try await attempt(try await renewed(credentials))
            return again == .renewCredentials ? .retry(after: nil, reason: refusal) : again
        } catch {
            return .retry(after: nil, reason: "\(error)")
        }
    }

    /// `Retry-After` in seconds (APNs and FCM send no dates).
    static func seconds(_ retryAfter: String?) -> Duration? {
        retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(max(0, $0)) }
    }
}
