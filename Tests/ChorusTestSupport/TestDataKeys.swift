import ChorusDomain
import Crypto
import Synchronization

/// Data keys kept in memory, for tests that write and read logs in one process: one ring for the whole process, so
/// that whatever writes a user's events and whatever reads them agree without sharing a key store's files.
public final class TestDataKeys: PersonalDataKeys {
    public static let shared = TestDataKeys()

    private let keys = Mutex<[UserID: SymmetricKey?]>([:])

    public init() {}

    public func key(of user: UserID) throws -> SymmetricKey? {
        guard let found = keys.withLock({ $0[user] }) else { throw DataKeyError.missing(user) }
        return found
    }

    public func makeKey(for user: UserID) throws -> SymmetricKey {
        try keys.withLock { keys in
            if let found = keys[user] {
                guard let found else { throw DataKeyError.destroyed(user) }
                return found
            }
            let made = SymmetricKey(size: .bits256)
            keys[user] = .some(made)
            return made
        }
    }

    public func destroy(_ user: UserID) throws { keys.withLock { $0[user] = .some(nil) } }
}
