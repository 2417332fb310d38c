import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// Register, log in, log out, and reset a forgotten password. Sign-up and login answers hold a token, so a retry under
/// an `Idempotency-Key` is answered from the session the first request started (the executor checks the password
/// again), never from a stored copy.
struct AuthRoutes {
    let endpoints: Endpoints
    /// Nil: no limits.
    let limits: Limits?

    /// The limiters of sign-ups, logins and password resets, consulted before any password is hashed. Resets are
    /// limited as logins are, apart from them.
    struct Limits {
        let loginPerAccount: RateLimiter
        let loginPerAddress: RateLimiter
        let registrationPerAddress: RateLimiter
        let resetPerAccount: RateLimiter
        let resetPerAddress: RateLimiter

        init(_ limits: RateLimits) {
            loginPerAccount = RateLimiter(limits.loginPerAccount, now: limits.clock)
            loginPerAddress = RateLimiter(limits.loginPerAddress, now: limits.clock)
            registrationPerAddress = RateLimiter(limits.registrationPerAddress, now: limits.clock)
            resetPerAccount = RateLimiter(limits.loginPerAccount, now: limits.clock)
            resetPerAddress = RateLimiter(limits.loginPerAddress, now: limits.clock)
        }
    }

    /// Throws `429 rate_limited` when `limiter` has no attempt left for `key`.
    private static func spend(_ limiter: RateLimiter, _ key: String?, _ what: String) throws {
        guard let key, let wait = limiter.attempt(key) else { return }
        let seconds = max(1, Int(wait.seconds.rounded(.up)))
        throw APIError(
            .tooManyRequests, "rate_limited", "too many \(what); try again in \(seconds) s", retryAfter: seconds)
    }

    struct Registration: Decodable {
        let email: String
        let password: String
        let name: String
        let major: String?
        let bio: String?
    }

    struct Credentials: Decodable {
        let email: String
        let password: String
    }

    struct ResetRequest: Decodable {
        let email: String
    }

    struct ResetConfirmation: Decodable {
        let token: String
        let newPassword: String
    }

    func addOpen(to router: Router<ChorusRequestContext>) {
        router.post("/v1/auth/register") { request, context in
            if let limits {
                try Self.spend(limits.registrationPerAddress, context.remoteAddress, "sign-ups from this address")
            }
            let (body, _) = try await JSONBody.decode(Registration.self, from: request)
            let command = Command.registerUser(
                email: body.email, password: body.password, name: body.name, major: body.major, bio: body.bio)
            return try await startSession(command, request: request, status: .created)
        }
        router.post("/v1/auth/login") { request, context in
            if let limits { try Self.spend(limits.loginPerAddress, context.remoteAddress, "logins from this address") }
            let (body, _) = try await JSONBody.decode(Credentials.self, from: request)
            if let limits {
                try Self.spend(limits.loginPerAccount, Validate.emailKey(body.email), "logins to this account")
            }
            return try await startSession(
                .logIn(email: body.email, password: body.password), request: request, status: .ok)
        }
        router.post("/v1/auth/password-reset") { request, context in
            if let limits {
                try Self.spend(limits.resetPerAddress, context.remoteAddress, "password resets from this address")
            }
            let (body, _) = try await JSONBody.decode(ResetRequest.self, from: request)
            if let limits {
                try Self.spend(limits.resetPerAccount, Validate.emailKey(body.email), "password resets of this account")
            }
            // The same answer whether an account has the e-mail or not: nothing to learn about who signed up.
            _ = try await endpoints.backend.execute(
                .requestPasswordReset(email: body.email), idempotencyKey: try Endpoints.idempotencyKey(request))
            return Response(status: .accepted)
        }
        router.post("/v1/auth/password-reset/confirm") { request, context in
            if let limits {
                try Self.spend(limits.resetPerAddress, context.remoteAddress, "password resets from this address")
            }
            let (body, _) = try await JSONBody.decode(ResetConfirmation.self, from: request)
            guard let (user, reset) = endpoints.backend.tokens.reset(fromToken: body.token) else {
                throw APIError(DomainError(.invalidToken, "the reset token is unknown, used or expired"))
            }
            let result = try await endpoints.backend.execute(
                .resetPassword(user: user, reset: reset, newPassword: body.newPassword),
                idempotencyKey: try Endpoints.idempotencyKey(request))
            var headers = HTTPFields()
            headers[.chorusPosition] = String(result.position.rawValue)
            return Response(status: .noContent, headers: headers)
        }
    }

    func addProtected(to group: RouterGroup<ChorusRequestContext>) {
        group.post("auth/logout") { request, context in
            let caller = try context.requireCaller()
            let result = try await endpoints.backend.execute(
                .logOut(user: caller.user, session: caller.session),
                idempotencyKey: try Endpoints.idempotencyKey(request))
            var headers = HTTPFields()
            headers[.chorusPosition] = String(result.position.rawValue)
            return Response(status: .noContent, headers: headers)
        }
    }

    private func startSession(_ command: Command, request: Request, status: HTTPResponse.Status) async throws
        -> Response
    {
        let result = try await endpoints.backend.execute(
            command, idempotencyKey: try Endpoints.idempotencyKey(request))
        guard let session = result.session else {
            throw APIError.unavailable("the command started no session")
        }
        let token = endpoints.backend.tokens.token(for: session.session)
        let body = try await endpoints.render(after: result) { view, _, json in
            guard let profile = try view.profile(session.user, viewer: session.user) else {
                throw APIError.unavailable("the read models have no profile for \(session.user) yet")
            }
            AuthJSON(user: endpoints.renderer.profile(profile), token: token).write(to: &json)
        }
        return Endpoints.json(status, body, position: result.position)
    }
}
