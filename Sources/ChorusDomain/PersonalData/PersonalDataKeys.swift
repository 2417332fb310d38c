import Crypto

/// Each user's data key: what their personal fields in the log (``SealedFields``) and their media are encrypted under.
/// Destroying a user's key erases their personal data everywhere it is stored encrypted (crypto-shredding).
public protocol PersonalDataKeys: Sendable {
    /// The user's key; nil once destroyed. Throws ``DataKeyError/missing(_:)`` when the user never had one, which
    /// means the keys were lost, not that the user was erased.
    func key(of user: UserID) throws -> SymmetricKey?
    /// The user's key, made and stored durably first if they have none yet.
    func makeKey(for user: UserID) throws -> SymmetricKey
    /// Destroys the user's key for good (durably); destroying it again changes nothing.
    func destroy(_ user: UserID) throws
}

extension PersonalDataKeys {
    /// Whether the user's key is destroyed.
    public func isDestroyed(_ user: UserID) throws -> Bool {
        do { return try key(of: user) == nil } catch DataKeyError.missing { return false }
    }
}

public enum DataKeyError: Error, CustomStringConvertible {
    case missing(UserID)
    case destroyed(UserID)

    public var description: String {
        switch self {
        case .missing(let user):
            "there is no data key for user \(user): the key store is not the one this log was written with"
        case .destroyed(let user): "the data key of user \(user) was destroyed: the account was erased"
        }
    }
}
