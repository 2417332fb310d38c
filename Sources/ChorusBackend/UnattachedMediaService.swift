import ChorusDomain
import Foundation
import Logging
import ServiceLifecycle

/// Removes the images that no post or profile showed within `lifetime` of their upload (a day, as the contract
/// says): uploads a client made and never used, which nobody can see and which would otherwise stay forever. Whether
/// an image is attached is the decision state's to say, and each removal is a ``ChorusDomain/MediaRemoved`` decided in
/// the log's writer (``ChorusDomain/CommandExecutor/removeUnattachedMedia(_:hide:show:)``), so that a post naming the
/// image at the same moment either keeps it or is refused with `unknown_media`. In a cluster every node runs it; the
/// log decides each removal once, and every node drops its copy as it applies the event.
struct UnattachedMediaService: Service {
    let commands: CommandExecutor
    let media: MediaStore
    let lifetime: Duration
    let readOnly: Bool
    let logger: Logger
    /// Images decided on in one write.
    static let batchSize = 256

    func run() async {
        guard !readOnly else { return await waitForShutdown() }
        // Often enough to remove an image within a small part of its lifetime past it, rarely enough to cost nothing.
        let interval = min(max(lifetime / 4, .milliseconds(50)), .seconds(600))
        await cancelWhenGracefulShutdown {
            /// Images found attached: attachment is for good, so they are never looked at again.
            var attached: Set<MediaID> = []
            while !Task.isCancelled {
                do {
                    try await sweep(attached: &attached)
                } catch is CancellationError {
                    return
                } catch {
                    logger.error(
                        "unattached images could not be removed; trying again", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    private func waitForShutdown() async { try? await gracefulShutdown() }

    private func sweep(attached: inout Set<MediaID>) async throws {
        let cutoff = Date(timeIntervalSinceNow: -(lifetime / .seconds(1)))
        let candidates = media.stored(before: cutoff, leavingOut: attached)
        let media = self.media
        var removed: Set<MediaID> = []
        // A few hundred at a time: the first sweep after an upgrade finds every image stored so far.
        for start in stride(from: 0, to: candidates.count, by: Self.batchSize) {
            let batch = Array(candidates[start..<min(start + Self.batchSize, candidates.count)])
            let gone = try await commands.removeUnattachedMedia(
                batch, hide: { media.hide($0, ifStoredBefore: cutoff) }, show: { media.show($0) })
            for image in gone { media.remove(image) }
            removed.formUnion(gone)
            attached.formUnion(batch.map(\.media).filter { !removed.contains($0) })
        }
        if !removed.isEmpty {
            logger.notice(
                "removed images that no post or profile showed within a day of their upload",
                metadata: ["count": "\(removed.count)"])
        }
    }
}
