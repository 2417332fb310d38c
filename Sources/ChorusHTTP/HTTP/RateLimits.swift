/// How often each thing may be done before `429 rate_limited` with `Retry-After`: a burst, then one more every interval
/// (``RateLimiter/Rule``); nil turns a limit off. Sign-ins are held per address and per account, so that guessing a
/// password or filling the log with accounts takes time no attacker has; writes are held per user, so that one account
/// cannot flood the log, other people's inboxes or the admins' queue. The defaults are sized so that people, the demo,
/// the five apps' tests and `chorus bench day` never meet them; docs/SECURITY.md lists them with their flags.
public struct RateLimits: Sendable {
    public typealias Rule = RateLimiter.Rule

    /// Logins from one address, to any accounts: 300, then 5 a second (an office or a campus behind one address).
    public var loginPerAddress: Rule? = Rule(burst: 300, every: .milliseconds(200))
    /// Wrong passwords for one account, from anywhere: 10, then one every 30 s. Past them, only an address that has not
    /// failed for the account may still try: the owner, who knows the password, is not locked out by whoever guesses.
    public var loginFailuresPerAccount: Rule? = Rule(burst: 10, every: .seconds(30))
    /// Wrong passwords for one account from one address: 10, then one every 30 s.
    public var loginFailuresPerAccountAndAddress: Rule? = Rule(burst: 10, every: .seconds(30))
    /// Accounts made from one address: 30, then one a minute.
    public var registrationsPerAddress: Rule? = Rule(burst: 30, every: .seconds(60))
    /// Password resets asked for one account: 5, then one every 6 minutes (each sends the owner an e-mail).
    public var resetsPerAccount: Rule? = Rule(burst: 5, every: .seconds(360))
    /// Password resets asked, and reset tokens tried, from one address: 25, then one every 12 s.
    public var resetsPerAddress: Rule? = Rule(burst: 25, every: .seconds(12))
    /// Writes of one user, of every kind (posts, likes, follows, uploads, …): 1,000, then 10 a second.
    public var writesPerUser: Rule? = Rule(burst: 1_000, every: .milliseconds(100))
    /// Messages of one user, direct and to rooms: 200, then one a second.
    public var messagesPerUser: Rule? = Rule(burst: 200, every: .seconds(1))
    /// Direct messages to strangers (users who do not follow the sender and never wrote to them): 20, then one a
    /// minute.
    public var messagesToStrangers: Rule? = Rule(burst: 20, every: .seconds(60))
    /// Rooms made by one user: 10, then one every 5 minutes.
    public var roomsPerUser: Rule? = Rule(burst: 10, every: .seconds(300))
    /// Reports filed by one user: 20, then one a minute. (A report of what the reporter has reported already, while
    /// that report is open, is that report: it counts, but files nothing.)
    public var reportsPerUser: Rule? = Rule(burst: 20, every: .seconds(60))
    /// Sign-ins to the admin console from one address, right or wrong: 10, then one every 6 s.
    public var consoleSignInsPerAddress: Rule? = Rule(burst: 10, every: .seconds(6))
    /// The limiters' clock; tests move their own.
    public var clock: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    public init() {}

    /// No limit at all: for load tests, never in production.
    public static var none: RateLimits {
        var limits = RateLimits()
        for limit in named { limits[keyPath: limit.rule] = nil }
        return limits
    }

    /// Every limit by the name `chorus serve --rate-limit NAME=…` takes.
    public static var named: [(name: String, rule: WritableKeyPath<RateLimits, Rule?>)] {
        [
            ("login-per-address", \.loginPerAddress),
            ("login-failures-per-account", \.loginFailuresPerAccount),
            ("login-failures-per-account-and-address", \.loginFailuresPerAccountAndAddress),
            ("registrations-per-address", \.registrationsPerAddress),
            ("resets-per-account", \.resetsPerAccount),
            ("resets-per-address", \.resetsPerAddress),
            ("writes-per-user", \.writesPerUser),
            ("messages-per-user", \.messagesPerUser),
            ("messages-to-strangers", \.messagesToStrangers),
            ("rooms-per-user", \.roomsPerUser),
            ("reports-per-user", \.reportsPerUser),
            ("console-sign-ins-per-address", \.consoleSignInsPerAddress),
        ]
    }
}

/// The limiters of one server, one for each limit of its ``RateLimits`` that is on.
final class Limiters: Sendable {
    let loginPerAddress: RateLimiter?
    let loginFailuresPerAccount: RateLimiter?
    let loginFailuresPerAccountAndAddress: RateLimiter?
    let registrationsPerAddress: RateLimiter?
    let resetsPerAccount: RateLimiter?
    let resetsPerAddress: RateLimiter?
    let writesPerUser: RateLimiter?
    let messagesPerUser: RateLimiter?
    let messagesToStrangers: RateLimiter?
    let roomsPerUser: RateLimiter?
    let reportsPerUser: RateLimiter?
    let consoleSignInsPerAddress: RateLimiter?

    init(_ limits: RateLimits) {
        func limiter(_ rule: RateLimiter.Rule?) -> RateLimiter? { rule.map { RateLimiter($0, now: limits.clock) } }
        loginPerAddress = limiter(limits.loginPerAddress)
        loginFailuresPerAccount = limiter(limits.loginFailuresPerAccount)
        loginFailuresPerAccountAndAddress = limiter(limits.loginFailuresPerAccountAndAddress)
        registrationsPerAddress = limiter(limits.registrationsPerAddress)
        resetsPerAccount = limiter(limits.resetsPerAccount)
        resetsPerAddress = limiter(limits.resetsPerAddress)
        writesPerUser = limiter(limits.writesPerUser)
        messagesPerUser = limiter(limits.messagesPerUser)
        messagesToStrangers = limiter(limits.messagesToStrangers)
        roomsPerUser = limiter(limits.roomsPerUser)
        reportsPerUser = limiter(limits.reportsPerUser)
        consoleSignInsPerAddress = limiter(limits.consoleSignInsPerAddress)
    }

    /// Spends an attempt of `key` on `limiter`; throws `429 rate_limited` with `Retry-After` when it has none left.
    /// `what` names what is limited, as in "too many \(what)". No limiter, or no key, limits nothing.
    static func spend(_ limiter: RateLimiter?, _ key: String?, _ what: String) throws {
        guard let limiter, let key, let wait = limiter.attempt(key) else { return }
        throw refusal(wait, what)
    }

    /// A limiter's wait as `Retry-After` says it: whole seconds, rounded up, at least one.
    static func retryAfterSeconds(_ wait: Duration) -> Int { max(1, Int(wait.seconds.rounded(.up))) }

    /// `429 rate_limited`, with `Retry-After` in whole seconds (at least one).
    static func refusal(_ wait: Duration, _ what: String) -> APIError {
        let seconds = retryAfterSeconds(wait)
        return APIError(
            .tooManyRequests, "rate_limited", "too many \(what); try again in \(seconds) s", retryAfter: seconds)
    }
}
