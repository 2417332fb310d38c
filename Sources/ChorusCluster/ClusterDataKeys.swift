import ChorusDataKeys
import ChorusDomain
import Crypto

/// The users' data keys of a cluster: kept in PostgreSQL (`chorus_keys`), so that a node reads what a user who signed
/// up on another node wrote, and cached in the node's own key store. A key is made once for the whole cluster (the
/// first node's proposal wins); destroying it destroys it in PostgreSQL first, then here. Other nodes drop their
/// cached copy when they apply the account's deletion (``forget(_:)``).
public final class ClusterDataKeys: PersonalDataKeys {
    public let local: DataKeyStore
    private let database: ClusterDatabase

    public init(local: DataKeyStore, database: ClusterDatabase) {
        self.local = local
        self.database = database
    }

    public func key(of user: UserID) throws -> SymmetricKey? {
        do {
            return try local.key(of: user)
        } catch DataKeyError.missing {
            guard let stored = try database.key(of: user.rawValue) else {
                throw DataKeyError.missing(user)
            }
            try local.adopt(stored, for: user)
            return stored.isEmpty ? nil : SymmetricKey(data: stored)
        }
    }

    public func makeKey(for user: UserID) throws -> SymmetricKey {
        // A key held here; a destroyed one (nil) or none (an error) goes on to the database, which tells them apart.
        if let key = try? local.key(of: user) { return key }
        let proposed = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let stored = try database.makeKey(of: user.rawValue, proposing: proposed)
        try local.adopt(stored, for: user)
        guard !stored.isEmpty else { throw DataKeyError.destroyed(user) }
        return SymmetricKey(data: stored)
    }

    public func destroy(_ user: UserID) throws {
        try database.destroyKey(of: user.rawValue)
        try local.destroy(user)
    }

    /// Destroys this node's cached copy of the user's key (the cluster's was destroyed by the node that deleted the
    /// account).
    public func forget(_ user: UserID) throws {
        try local.destroy(user)
    }
}
