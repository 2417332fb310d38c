import Synchronization

/// Token buckets, one per key (an account, an address): a key may spend `burst` attempts at once, and earns one back
/// every `interval`. What sign-ups and logins are held to: guessing a password, or filling the log with accounts,
/// takes time no attacker has.
///
/// Memory is bounded: past `maximumKeys` the buckets that have refilled, which say nothing, are dropped; if none has,
/// the key is refused until some do.
public final class RateLimiter: Sendable {
    public struct Rule: Sendable, Equatable {
        public var burst: Int
        public var interval: Duration

        public init(burst: Int, every interval: Duration) {
            precondition(burst > 0 && interval > .zero)
            self.burst = burst
            self.interval = interval
        }
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public let rule: Rule
    private let maximumKeys: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let buckets = Mutex<[String: Bucket]>([:])

    /// `now` is the clock; tests pass one they move.
    public init(
        _ rule: Rule, maximumKeys: Int = 100_000,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.rule = rule
        self.maximumKeys = maximumKeys
        self.now = now
    }

    /// Spends an attempt of `key`: nil if it may go ahead, else how long until it may.
    public func attempt(_ key: String) -> Duration? {
        let now = now()
        let perSecond = 1 / rule.interval.seconds
        return buckets.withLock { buckets in
            var bucket = refilled(buckets[key], now: now)
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return .seconds((1 - bucket.tokens) / perSecond)
            }
            if buckets[key] == nil, buckets.count >= maximumKeys {
                buckets = buckets.filter {
                    (now - $0.value.updated).seconds * perSecond + $0.value.tokens < Double(rule.burst)
                }
                guard buckets.count < maximumKeys else { return rule.interval }
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            return nil
        }
    }

    /// Gives back an attempt of `key` spent by ``attempt(_:)``: for one that turned out not to count (a login with
    /// the right password, where only failures do).
    public func refund(_ key: String) {
        let now = now()
        buckets.withLock { buckets in
            guard buckets[key] != nil else { return }
            var bucket = refilled(buckets[key], now: now)
            bucket.tokens = min(Double(rule.burst), bucket.tokens + 1)
            buckets[key] = bucket
        }
    }

    /// Whether `key` has every attempt of its burst: none spent, or all earned back.
    public func isUntouched(_ key: String) -> Bool {
        let now = now()
        return buckets.withLock { buckets in refilled(buckets[key], now: now).tokens >= Double(rule.burst) }
    }

    /// `bucket` (a full one when there is none) with what it has earned back by `now`.
    private func refilled(_ bucket: Bucket?, now: ContinuousClock.Instant) -> Bucket {
        guard var bucket else { return Bucket(tokens: Double(rule.burst), updated: now) }
        bucket.tokens = min(Double(rule.burst), bucket.tokens + (now - bucket.updated).seconds / rule.interval.seconds)
        bucket.updated = now
        return bucket
    }
}
