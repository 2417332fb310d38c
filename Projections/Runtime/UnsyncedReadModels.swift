import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation
import Logging

/// The server's read models commit without syncing: each batch is in the page cache the moment it commits, which a
/// killed process cannot lose, and syncing every batch doubled the time a write waits to be readable. Only a crash
/// of the machine can lose (or, with LMDB's in-place writes, tear) such commits. So while a server runs, a marker
/// file holds the machine's boot id; a server that finds the marker of an earlier boot rebuilds the read models from
/// the log before it serves, and a clean stop syncs and removes the marker.
struct UnsyncedReadModels {
    let marker: String

    let generations: ProjectionGenerations

    init(_ generations: ProjectionGenerations) {
        self.generations = generations
        marker = generations.dataDirectory + "/projections.unsynced"
    }

    /// Rebuilds the read models if the machine went down while a server had unsynced commits; then marks them
    /// unsynced for this boot.
    func prepare(log: any EventLog, keys: any PersonalDataKeys, fanOutLimit: Int, logger: Logger) throws {
        if let recorded = try? String(contentsOfFile: marker, encoding: .utf8),
            recorded.trimmingCharacters(in: .whitespacesAndNewlines) != Self.bootID()
        {
            logger.warning(
                "the machine restarted while the read models had unsynced commits; rebuilding them from the log")
            let position = try generations.rebuildAndSwap(
                log: log, keys: keys, fanOutLimit: fanOutLimit, logger: logger)
            logger.notice("read models rebuilt", metadata: ["position": "\(position)"])
        }
        try AtomicFile.write(Array((Self.bootID() + "\n").utf8), to: marker)
    }

    /// After the read models are synced and closed.
    func markSynced() {
        unlink(marker)
    }

    /// This boot of the machine (Linux); a fixed value elsewhere, where the marker then only tells clean stops apart.
    static func bootID() -> String {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }
}
