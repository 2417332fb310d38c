import Crypto
import Foundation
import Synchronization

/// Bearer tokens: a session id, a dot, and an HMAC-SHA256 of the id under the server's secret. Password-reset tokens
/// are made the same way from a user and a reset (``resetToken(user:reset:)``).
///
/// The log and the decision state hold session ids only, so neither a copy of the log nor `chorus replay` output gives
/// anyone a token; and the token of a session can be made again from its id, which is how a retried registration or
/// login (same idempotency key) answers with the same token. A token is valid while its MAC checks out (compared in
/// constant time) and its session has neither ended nor expired (``CommandExecutor/user(ofSession:at:)``).
public struct SessionTokens: Sendable {
    /// Bytes of secret; fewer would weaken the MAC.
    public static let secretSize = 32
    /// Longer bearer values are refused before any work is done on them.
    public static let maximumTokenLength = 128

    /// Keyed once and copied for each token: keying hashes a block for each of HMAC's two pads, about half the work
    /// of checking a token, which every authenticated request does.
    private let keyed: HMAC<SHA256>
    /// Tokens whose MAC checked out, and their sessions: a client sends the same token with every request, and
    /// checking its MAC again was a twentieth of a feed request's work. Only tokens made with the secret get in, so
    /// what a lookup reveals is nothing a MAC check would not.
    private let verified = VerifiedTokens()

    public init(secret: [UInt8]) {
        precondition(secret.count >= Self.secretSize, "a session secret has at least \(Self.secretSize) bytes")
        keyed = HMAC<SHA256>(key: SymmetricKey(data: secret))
    }

    private func mac(of session: SessionID) -> HMAC<SHA256>.MAC {
        var mac = keyed
        mac.update(data: Array(session.rawValue.utf8))
        return mac.finalize()
    }

    /// A new random secret.
    public static func makeSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<secretSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    public func token(for session: SessionID) -> String {
        session.rawValue + "." + Base64URL.encode(mac(of: session))
    }

    /// A reset's MAC covers `reset`, NUL, the user and the reset: no session id holds a NUL, so no session token's MAC
    /// is ever a reset token's.
    private func mac(of user: UserID, _ reset: ResetID) -> HMAC<SHA256>.MAC {
        var mac = keyed
        mac.update(data: Array("reset\u{0}\(user.rawValue).\(reset.rawValue)".utf8))
        return mac.finalize()
    }

    /// The token that confirms `reset` of `user`'s password: the user, a dot, the reset, a dot, the MAC. Like a
    /// session's, it can be made again from the ids the log holds, and only with the secret.
    public func resetToken(user: UserID, reset: ResetID) -> String {
        user.rawValue + "." + reset.rawValue + "." + Base64URL.encode(mac(of: user, reset))
    }

    /// The user and reset a reset token was made for; nil unless it is well formed and its MAC is ours.
    public func reset(fromToken token: String) -> (user: UserID, reset: ResetID)? {
        guard token.utf8.count <= Self.maximumTokenLength else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let user = UserID(String(parts[0])), let reset = ResetID(String(parts[1])),
            let sent = Base64URL.decode(parts[2]), sent.count == SHA256.byteCount,
            mac(of: user, reset) == sent  // compared in constant time
        else { return nil }
        return (user, reset)
    }

    /// The session a token was made for; nil unless the token is well formed and its MAC is ours.
    public func session(fromToken token: String) -> SessionID? {
        guard token.utf8.count <= Self.maximumTokenLength else { return nil }
        if let known = verified.session(of: token) { return known }
        guard let dot = token.firstIndex(of: "."), let session = SessionID(String(token[..<dot])),
            let sent = Base64URL.decode(token[token.index(after: dot)...]), sent.count == SHA256.byteCount,
            mac(of: session) == sent  // compared in constant time
        else { return nil }
        verified.keep(token, of: session)
        return session
    }
}

/// The tokens ``SessionTokens`` has checked, up to ``capacity``; past it all are forgotten and checked again as they
/// come back. A session that ends stays here: whether it is still open is asked of the decision state every time.
private final class VerifiedTokens: Sendable {
    static let capacity = 1 << 16

    private let sessions = Mutex<[String: SessionID]>([:])

    func session(of token: String) -> SessionID? { sessions.withLock { $0[token] } }

    func keep(_ token: String, of session: SessionID) {
        sessions.withLock { sessions in
            if sessions.count >= Self.capacity { sessions.removeAll(keepingCapacity: true) }
            sessions[token] = session
        }
    }
}
