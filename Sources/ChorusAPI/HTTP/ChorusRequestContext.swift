import ChorusDomain
import Hummingbird

/// The context of one request: Hummingbird's, plus the caller once ``AuthMiddleware`` has checked the token.
public struct ChorusRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    var caller: Caller?

    public init(source: Source) {
        coreContext = .init(source: source)
    }

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
