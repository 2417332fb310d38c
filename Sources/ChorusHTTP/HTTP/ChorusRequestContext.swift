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

    /// The client's IP address; nil when the connection has none (in-process tests).
    var remoteAddress: String? { channel.remoteAddress?.ipAddress }

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
