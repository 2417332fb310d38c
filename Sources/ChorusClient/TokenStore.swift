import Synchronization

/// Where the client keeps the bearer token of the signed-in user. An app backs it with the Keychain so that a user
/// stays signed in across launches; ``InMemoryTokenStore`` forgets it when the process ends.
public protocol TokenStore: Sendable {
    /// The token to send, nil when signed out.
    func token() async -> String?
    /// Keeps `token` (a sign-up or login), or forgets the token (nil: a logout).
    func setToken(_ token: String?) async
}

/// A ``TokenStore`` in memory: for tests, previews and command-line tools.
public final class InMemoryTokenStore: TokenStore {
    private let stored: Mutex<String?>

    public init(token: String? = nil) { stored = Mutex(token) }

    public func token() async -> String? { stored.withLock { $0 } }

    public func setToken(_ token: String?) async { stored.withLock { $0 = token } }
}
