import HummingbirdBcrypt

/// bcrypt, from hummingbird-auth. Hashing at cost 12 takes a few hundred milliseconds by design: callers run it
/// before a command reaches the log writer, never inside it.
public struct PasswordHasher: Sendable {
    /// bcrypt's work factor; tests and demo data use a low one.
    public var cost: UInt8

    public init(cost: UInt8 = 12) { self.cost = cost }

    public func hash(_ password: String) -> String { Bcrypt.hash(password, cost: cost) }

    public func verify(_ password: String, against hash: String) -> Bool { Bcrypt.verify(password, hash: hash) }
}
