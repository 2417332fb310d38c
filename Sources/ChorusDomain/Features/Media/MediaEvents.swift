import ChorusLog

/// An uploaded image was removed: no post or profile showed it within a day of its upload. Every node that keeps a copy
/// drops it on applying this; a post that names the image afterwards is refused.
public struct MediaRemoved: Sendable, Hashable {
    public var media: MediaID
    /// Who uploaded it.
    public var owner: UserID
    public init(media: MediaID, owner: UserID) {
        self.media = media
        self.owner = owner
    }
}

extension MediaRemoved: StoredEvent {
    static let typeName = "MediaRemoved"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(owner) }
    var domainEvent: DomainEvent { .mediaRemoved(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(media)
        payload.write(owner)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(media: try payload.read(MediaID.self), owner: try payload.read(UserID.self))
    }
}
