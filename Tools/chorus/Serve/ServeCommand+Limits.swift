import ArgumentParser
import ChorusHTTP

/// `chorus serve`'s limits: how often things may be done, how many live streams a user holds, and which proxies say
/// who a request comes from.
extension ServeCommand {
    static let rateLimitHelp = """
        A limit to change, as NAME=BURST,EVERY (a burst, then one more every EVERY, such as 10,5m) or NAME=off; \
        repeatable (CHORUS_RATE_LIMITS: such settings separated by spaces, or off for none). NAME is one of \
        \(RateLimits.named.map(\.name).joined(separator: ", ")); docs/SECURITY.md gives each one's default.
        """

    /// Applies the limit settings of the flags, else of the environment, to `settings`.
    func applyLimits(to settings: inout ServerConfiguration, environment: [String: String]) throws {
        let environmentLimits = environment["CHORUS_RATE_LIMITS"]
        if noRateLimits || environmentLimits == "off" {
            settings.rateLimits = .none
        } else {
            let changes =
                rateLimit.isEmpty
                ? (environmentLimits ?? "").split(whereSeparator: { $0 == " " || $0 == ";" }).map(String.init)
                : rateLimit
            for change in changes { try Self.apply(change, to: &settings.rateLimits) }
        }
        if let text = liveStreamsPerUser ?? environment["CHORUS_LIVE_STREAMS_PER_USER"] {
            guard text == "off" || (Int(text) ?? 0) >= 1 else {
                throw ValidationError(
                    "--live-streams-per-user (or CHORUS_LIVE_STREAMS_PER_USER) must be a positive number or off, "
                        + "not \(text)")
            }
            settings.liveStreamsPerUser = Int(text)
        }
        if let text = trustedProxies ?? environment["CHORUS_TRUSTED_PROXIES"] {
            settings.trustedProxies = try text.split(separator: ",").map { part in
                let range = part.trimmingCharacters(in: .whitespaces)
                guard let parsed = IPAddressRange(range) else {
                    throw ValidationError(
                        "--trusted-proxies (or CHORUS_TRUSTED_PROXIES) takes addresses or CIDR ranges such as "
                            + "10.0.0.0/8 or fd00::/8, separated by commas; \(range) is neither")
                }
                return parsed
            }
        }
    }

    /// Applies one `NAME=BURST,EVERY` or `NAME=off` to `limits`.
    static func apply(_ change: String, to limits: inout RateLimits) throws {
        let parts = change.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let limit = RateLimits.named.first(where: { $0.name == parts[0] }) else {
            throw ValidationError("--rate-limit (or CHORUS_RATE_LIMITS) \(change): \(rateLimitHelp)")
        }
        if parts[1] == "off" {
            limits[keyPath: limit.rule] = nil
            return
        }
        let rule = parts[1].split(separator: ",").map(String.init)
        guard rule.count == 2, let burst = Int(rule[0]), burst >= 1, let every = duration(rule[1]), every > .zero
        else {
            throw ValidationError(
                "--rate-limit (or CHORUS_RATE_LIMITS) \(change): give a burst of at least 1 and a positive interval, "
                    + "such as \(limit.name)=10,5m")
        }
        limits[keyPath: limit.rule] = RateLimits.Rule(burst: burst, every: every)
    }
}
