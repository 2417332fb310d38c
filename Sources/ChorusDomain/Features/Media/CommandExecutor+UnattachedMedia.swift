import ChorusLog

/// Uploaded images that no post or profile shows. Uploads are not events: an image is attached when a ``PostCreated``
/// or a ``ProfileEdited`` names it, and the state's `attached-media` table remembers that it was.
extension CommandExecutor {
    /// Removes each of `candidates` (an image and its uploader) that nothing ever attached: appends a ``MediaRemoved``
    /// for it, decided in the log's writer like every command, and returns the images removed, whose files the caller
    /// then deletes. `hide` is called with each image as it is decided on, before the write, so that the media
    /// store refuses it from then on (``CreatePost`` and ``EditProfile`` ask the store again as they decide): a post
    /// naming the image at the same moment either comes first, and the image is attached and kept, or comes after and
    /// is refused. `hide` answers false, and the image stays, when it may no longer be removed (uploaded again since
    /// it was found). `show` takes back a hiding when the write does not happen, or is decided again (a cluster node
    /// that was behind).
    public func removeUnattachedMedia(
        _ candidates: [(media: MediaID, owner: UserID)], hide: @escaping @Sendable (MediaID) -> Bool,
        show: @escaping @Sendable (MediaID) -> Void
    ) async throws -> [MediaID] {
        guard !candidates.isEmpty else { return [] }
        try await upgradeDecisionState()
        let (state, keys) = (self.state, self.keys)
        do {
            return try await log.append(.durable, eventCount: candidates.count) { batch in
                for candidate in candidates { show(candidate.media) }
                var removed: [MediaRemoved] = []
                for candidate in candidates where try !state.isAttached(candidate.media, in: batch.state) {
                    guard hide(candidate.media) else { continue }
                    removed.append(MediaRemoved(media: candidate.media, owner: candidate.owner))
                }
                guard !removed.isEmpty else { return [] }
                let decision = RemoveMedia(removals: removed)
                let context = DecisionContext(
                    state: state, transaction: batch.state, batch: batch, keys: keys, actor: Command.adminActor)
                _ = try decision.decide(in: context)
                return removed.map(\.media)
            }
        } catch {
            for candidate in candidates { show(candidate.media) }
            throw error
        }
    }
}

/// Appends the removal of images found unattached, each to its uploader's stream.
struct RemoveMedia: Decision {
    let removals: [MediaRemoved]

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.recordEach(removals.map(DomainEvent.mediaRemoved))
    }
}

extension DecisionState {
    func isAttached(_ media: MediaID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(media.rawValue), in: attachedMedia) { $0 != nil }
    }
}
