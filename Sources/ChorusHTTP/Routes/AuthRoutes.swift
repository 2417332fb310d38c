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
    private var limits: Limiters { endpoints.limiters }

    struct Registration: Decodable {
        let email: String
        let password: String
        let name: String
        let major: String?
        let bio: String?
        let handle: String?
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
            try Limiters.spend(limits.registrationsPerAddress, context.clientAddress, "sign-ups from this address")
            let (body, _) = try await JSONBody.decode(Registration.self, from: request)
            let command = Command.registerUser(
                email: body.email, password: body.password, name: body.name, major: body.major, bio: body.bio,
                handle: body.handle)
            return try await startSession(command, request: request, status: .created)
        }
        router.post("/v1/auth/login") { request, context in
            try Limiters.spend(limits.loginPerAddress, context.clientAddress, "logins from this address")
            let (body, _) = try await JSONBody.decode(Credentials.self, from: request)
            let attempt = try LoginAttempt(
                account: Validate.accountKey(forEmail: body.email), address: context.clientAddress, limits: limits)
            do {
                let response = try await startSession(
                    .logIn(email: body.email, password: body.password), request: request, status: .ok)
                attempt.didNotFail()
                return response
            } catch let error as DomainError where error.code == .invalidCredentials {
                throw error
            } catch {
                attempt.didNotFail()
                throw error
            }
        }
        router.post("/v1/auth/password-reset") { request, context in
            try Limiters.spend(limits.resetsPerAddress, context.clientAddress, "password resets from this address")
            let (body, _) = try await JSONBody.decode(ResetRequest.self, from: request)
            try Limiters.spend(
                limits.resetsPerAccount, Validate.accountKey(forEmail: body.email), "password resets of this account")
            // The same answer whether an account has the e-mail or not, after the same work: one event appended
            // either way (PasswordResetRequested, or PasswordResetUnmatched), so nothing tells who signed up.
            _ = try await endpoints.backend.execute(
                .requestPasswordReset(email: body.email), idempotencyKey: try Endpoints.idempotencyKey(request))
            return Response(status: .accepted)
        }
        router.post("/v1/auth/password-reset/confirm") { request, context in
            try Limiters.spend(limits.resetsPerAddress, context.clientAddress, "password resets from this address")
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

    struct Logout: Decodable {
        let deviceId: String?

        private enum CodingKeys: String, CodingKey { case deviceId }

        init(from decoder: any Decoder) throws {
            deviceId = try decoder.container(keyedBy: CodingKeys.self).decodeUnlessMissing(
                String.self, forKey: .deviceId)
        }
    }

    func addProtected(to group: RouterGroup<ChorusRequestContext>) {
        group.post("auth/logout") { request, context in
            let caller = try context.requireCaller()
            // The body is optional: `{deviceId}` forgets that device too.
            let bytes = try await JSONBody.collect(request)
            let device = try bytes.isEmpty ? nil : JSONBody.decode(Logout.self, from: bytes).deviceId
            let result = try await endpoints.backend.execute(
                .logOut(
                    user: caller.user, session: caller.session,
                    device: try device.map { text in
                        guard let id = DeviceID(text) else { throw APIError.badRequest("deviceId is not a device id") }
                        return id
                    }),
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

/// One login's claim on the limits of wrong passwords. Only failures count, and they count twice: for the account, and
/// for the account from this address. Once the account has had its share of failures, an address that has failed for
/// it must wait, but one that has not (the owner's, usually) may still try: whoever guesses cannot keep the owner out,
/// and each address they guess from gets one try before it waits too.
private struct LoginAttempt {
    let account: String
    let pair: String
    /// Whether the account's limiter took an attempt, to give back if this one does not fail.
    let spentOnAccount: Bool
    let limits: Limiters

    /// Takes an attempt of the account from `address`, or throws `429 rate_limited`.
    init(account: String, address: String?, limits: Limiters) throws {
        (self.account, self.limits) = (account, limits)
        let pair = account + " " + (address ?? "")
        self.pair = pair
        // With no count per address, no address is known not to have failed.
        let addressHasFailed = limits.loginFailuresPerAccountAndAddress.map { !$0.isUntouched(pair) } ?? true
        if let wait = limits.loginFailuresPerAccountAndAddress?.attempt(pair) {
            throw Limiters.refusal(wait, "wrong passwords for this account from this address")
        }
        if let wait = limits.loginFailuresPerAccount?.attempt(account) {
            guard !addressHasFailed else {
                limits.loginFailuresPerAccountAndAddress?.refund(pair)
                throw Limiters.refusal(wait, "wrong passwords for this account")
            }
            spentOnAccount = false
        } else {
            spentOnAccount = true
        }
    }

    /// The login did not fail on its password (it signed in, or failed for another reason): nothing counts.
    func didNotFail() {
        limits.loginFailuresPerAccountAndAddress?.refund(pair)
        if spentOnAccount { limits.loginFailuresPerAccount?.refund(account) }
    }
}
