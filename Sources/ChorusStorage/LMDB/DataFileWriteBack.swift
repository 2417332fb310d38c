import CFileCalls
import Synchronization

/// The disk's write-back of a data file's pages started as the file grows, for an environment whose commits are not
/// synced one by one (a bulk import's): the sync that makes them durable at its end then finds most of them written.
///
/// Left to the kernel, a bulk import's pages stay dirty in memory until that sync (the kernel writes dirty pages back
/// after 30 s, or once they take a tenth of memory), which then wrote hundreds of megabytes while nothing else ran.
/// Started here a step at a time, the disk writes them while the import works, and the import's end is shorter.
/// Starting write-back does not wait for the disk; a page written again after it was written back is simply written
/// again.
package final class DataFileWriteBack: Sendable {
    /// Write-back is started each time the file's used pages grow by this much.
    package static let step = 16 << 20

    private let descriptor: Int32
    /// How far the file's used pages reached when write-back was last started, in bytes.
    private let startedAt = Atomic(0)

    package init(descriptor: Int32) { self.descriptor = descriptor }

    /// Called after each commit not synced, with the bytes the file's used pages now take: starts write-back of every
    /// dirty page once they grew by ``step`` since it last did. A failure to start it is not an error: the sync at
    /// the end writes the pages.
    package func committed(usedBytes: Int) {
        guard usedBytes - startedAt.load(ordering: .relaxed) >= Self.step else { return }
        startedAt.store(usedBytes, ordering: .relaxed)
        _ = chorus_start_write_back(descriptor)
    }
}
