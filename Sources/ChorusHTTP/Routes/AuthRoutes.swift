import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// Register, log in, log out. Their answers hold a token, so a retry under an `Idempotency-Key` is answered from
/// the session the first request started (the executor checks the password again), never from a stored copy.
struct AuthRoutes {
    let endpoints: Endpoints
    /// Nil: no limits.
    let limits: Limits?

    /// The limiters of sign-ups and logins, consulted before any password is hashed.
    struct Limits {
        let loginPerAccount: RateLimiter
        let loginPerAddress: RateLimiter
        let registrationPerAddress: RateLimiter

        init(_ limits: RateLimits) {
            loginPerAccount = RateLimiter(limits.loginPerAccount, now: limits.clock)
            loginPerAddress = RateLimiter(limits.loginPerAddress, now: limits.clock)
            registrationPerAddress = RateLimiter(limits.registrationPerAddress, now: limits.clock)
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
