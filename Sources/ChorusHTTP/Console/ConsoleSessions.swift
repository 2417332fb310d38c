import ChorusDomain
import Synchronization

/// Who is signed in to the admin console: a random id, sent back in an `HttpOnly` cookie, for each sign-in with the
/// admin token, with a CSRF token of its own that every form carries. A session ends 12 hours after its sign-in or at
/// "Sign out". Kept in memory: a restart signs everyone out, and whoever holds the admin token signs in again.
final class ConsoleSessions: Sendable {
    struct Session: Sendable {
        let csrfToken: String
        let expiresAt: ContinuousClock.Instant
    }

    static let lifetime: Duration = .seconds(12 * 3600)
    /// The session's cookie, sent to `/admin` paths alone.
    static let cookie = "chorus_console"
    /// The sign-in form's CSRF token, before there is a session (the form's hidden field must match it).
    static let signInCookie = "chorus_console_sign_in"

    private let sessions = Mutex<[String: Session]>([:])
    private let now: @Sendable () -> ContinuousClock.Instant

    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
    }

    /// A new session: its id, for the cookie, and what it holds.
    func start() -> (id: String, session: Session) {
        let id = Self.randomToken()
        let session = Session(csrfToken: Self.randomToken(), expiresAt: now() + Self.lifetime)
        sessions.withLock { sessions in
            let now = now()
            sessions = sessions.filter { $0.value.expiresAt > now }
            sessions[id] = session
        }
        return (id, session)
    }

    /// The session of `id`, while it lasts.
    func session(_ id: String?) -> Session? {
        guard let id else { return nil }
        let now = now()
        return sessions.withLock { sessions in
            guard let session = sessions[id] else { return nil }
            guard session.expiresAt > now else {
                sessions[id] = nil
                return nil
            }
            return session
        }
    }

    func end(_ id: String) {
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// 256 random bits, base64url.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
