import ChorusDomain
import Hummingbird
import NIOCore

/// The context of one request: Hummingbird's, plus the caller once ``AuthMiddleware`` has checked the token.
public struct ChorusRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    var caller: Caller?
    private let channel: any Channel

    public init(source: Source) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The address of the connection's other end: the client, or a proxy in front of it. Nil when the connection has
    /// none (in-process tests).
    var peerAddress: String? { channel.remoteAddress?.ipAddress }

    /// The client's IP address, which the limits per address key on: the peer's, or behind a trusted proxy the one
    /// it forwards for (``ClientAddressMiddleware``).
    var clientAddress: String? {
        get { forwardedClient ?? peerAddress }
        set { forwardedClient = newValue }
    }
    private var forwardedClient: String?

    /// The signed-in caller; routes behind ``AuthMiddleware`` always have one.
    func requireCaller() throws -> Caller {
        guard let caller else { throw APIError.unauthorized("this route needs a bearer token") }
        return caller
    }
}

/// Who is calling: the user and the session its token belongs to.
struct Caller: Sendable {
    let user: UserID
    let session: SessionID
}
