import ChorusDomain
import ChorusLog
import ChorusProcesses
import Logging
import ServiceLifecycle

/// Runs the images an older Chorus stored as uploaded through the pipeline once, at start
/// (``MediaStore/upgradeStoredUploads(owners:)``), then stays until the group stops. The owners of the oldest,
/// plain files are found in the log (``ChorusDomain/MediaShownBy``).
struct MediaUpgradeService: Service {
    let media: MediaStore
    let log: any EventLog
    let keys: any PersonalDataKeys
    let readOnly: Bool
    let logger: Logger

    func run() async {
        if !readOnly {
            do {
                let upgrade = try await media.upgradeStoredUploads(owners: owners(of:))
                if upgrade != StoredUploadsUpgrade() {
                    logger.notice(
                        "images stored as uploaded by an older Chorus went through the image pipeline",
                        metadata: [
                            "upgraded": "\(upgrade.upgraded)", "refused, kept as they were": "\(upgrade.refused)",
                            "removed, shown by no one": "\(upgrade.removed)",
                        ])
                }
            } catch {
                // The next start tries again.
                logger.error("images stored as uploaded could not be upgraded", metadata: ["error": "\(error)"])
            }
        }
        try? await gracefulShutdown()
    }

    /// Who showed each of `plain`, hidden from new posts by now: the log is read through a write that appends
    /// nothing, which comes after every post already decided while they were not yet hidden.
    private func owners(of plain: Set<MediaID>) async throws -> [MediaID: UserID] {
        let last = try await log.append(.durable, eventCount: 0) { $0.head }
        let (log, keys) = (self.log, self.keys)
        return try await BlockingWork.run {
            try MediaShownBy.firstShowers(of: plain, in: log, through: last, keys: keys)
        }
    }
}
