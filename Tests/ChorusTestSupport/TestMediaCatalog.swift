import ChorusDomain
import Synchronization

/// Media that exists because the test says so.
public final class TestMediaCatalog: MediaCatalog {
    private let stored = Mutex<Set<MediaID>>([])

    public init() {}

    /// A new media id that the catalog now contains.
    public func add() -> MediaID {
        let media = MediaID.make()
        stored.withLock { _ = $0.insert(media) }
        return media
    }

    public func contains(_ media: MediaID) -> Bool { stored.withLock { $0.contains(media) } }
}
