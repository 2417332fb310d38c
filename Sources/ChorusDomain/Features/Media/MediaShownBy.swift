import ChorusLog

/// Who first showed each of some images, as the log tells: a post's author or a profile's user. The oldest Chorus
/// stored uploads in plain with no owner on disk; the log is the only record of whose they are.
public enum MediaShownBy {
    /// The user who first showed each of `media` in the log through `last`, for those shown by a user the log has not
    /// erased since (an erased user's images go with them). Reads and decodes only the events that can show an image
    /// or erase a user.
    public static func firstShowers(
        of media: Set<MediaID>, in log: any EventLog, through last: LogPosition, keys: any PersonalDataKeys
    ) throws -> [MediaID: UserID] {
        guard !media.isEmpty else { return [:] }
        let kinds: Set<String> = [PostCreated.typeName, ProfileEdited.typeName, AccountDeleted.typeName]
        var shown: [MediaID: UserID] = [:]
        var erased: Set<UserID> = []
        func show(_ image: MediaID, by user: UserID) {
            if media.contains(image), shown[image] == nil { shown[image] = user }
        }
        try log.scan(from: LogPosition.start.next, through: last, chunkSize: 1_000) { recorded in
            guard kinds.contains(recorded.type) else { return }
            switch try DomainEvent(decoding: recorded, keys: keys) {
            case .postCreated(let created):
                for image in created.media { show(image.id, by: created.author) }
            case .profileEdited(let edited):
                if case .set(let image)? = edited.profileImage { show(image, by: edited.user) }
            case .accountDeleted(let deleted):
                erased.insert(deleted.user)
            default:
                break
            }
        }
        return shown.filter { !erased.contains($0.value) }
    }
}
