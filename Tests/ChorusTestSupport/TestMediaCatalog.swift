import ChorusDomain
import Synchronization

/// Media that exists because the test says so, each image uploaded by one user.
public final class TestMediaCatalog: MediaCatalog {
    private let stored = Mutex<[MediaID: UserID]>([:])

    public init() {}

    /// A new media id that the catalog now holds, as uploaded by `user`.
    public func add(uploadedBy user: UserID) -> MediaID {
        let media = MediaID.make()
        stored.withLock { $0[media] = user }
        return media
    }

    public func contains(_ media: MediaID, uploadedBy user: UserID) -> Bool {
        stored.withLock { $0[media] == user }
    }
}
