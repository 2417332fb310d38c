/// Where pushes go (APNs, FCM or both) and how failed ones are tried again: what `chorus serve` makes of the
/// `CHORUS_APNS_*`, `CHORUS_FCM_*` and `CHORUS_PUSH_*` variables.
package struct PushConfiguration: Sendable {
    package var apns: APNsConfiguration?
    package var fcm: FCMConfiguration?
    /// A CA certificate (PEM) trusted besides the system's roots: a private gateway's, or a test peer's.
    package var caFile: String?
    /// The wait after a push's first failure; it doubles after each, up to ``maximumRetryDelay``, and a push is given
    /// up on when it expires (``Push/lifetime``).
    package var retryDelay: Duration = .seconds(1)
    package var maximumRetryDelay: Duration = .seconds(600)
    /// Pushes in flight at once: streams over the HTTP/2 connection, one push per device at a time.
    package var concurrency = 256

    package init(apns: APNsConfiguration? = nil, fcm: FCMConfiguration? = nil) {
        self.apns = apns
        self.fcm = fcm
    }

    /// When the `attempts`th failure of a push expiring at `expiresAt` happened at `now`: when to try again (after
    /// `retryAfter` when the service asked for it), nil when that would be after the push expired.
    func retryTime(afterAttempt attempts: Int64, retryAfter: Duration?, expiresAt: Int64, now: Int64) -> Int64? {
        let backoff = min(
            WebhookConfiguration.milliseconds(maximumRetryDelay),
            WebhookConfiguration.milliseconds(retryDelay) << min(max(attempts - 1, 0), 40))
        let wait = max(backoff, retryAfter.map(WebhookConfiguration.milliseconds) ?? 0)
        return now + wait < expiresAt ? now + wait : nil
    }
}
