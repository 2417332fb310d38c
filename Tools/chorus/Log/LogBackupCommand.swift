import ArgumentParser
import ChorusBackend
import ChorusLog
import Foundation

struct LogBackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a data directory's log, data keys, media and session key into a new one, while it serves.",
        discussion: """
            The log (events, indexes and decision state) is copied as of one moment and compacted, while a server \
            may keep appending; then the users' data keys, the media (files never change once stored, and a post's \
            image is stored before the post) and the session key, so that tokens stay valid. The backup is built \
            beside --to and renamed into place when complete. Restore by serving it: `chorus serve --data DIR` \
            builds its read models from the log on start. Answers kept for Idempotency-Key retries are not copied.

            A backup holds the data keys that existed when it was taken: an account deleted after that can be read \
            again from the backup. Keep backups no longer than your erasure promise allows (restoring an old one \
            brings deleted accounts back), or delete those accounts again after a restore.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var output: JSONOutputOption

    @Option(help: "The new data directory to write; it must not exist yet.")
    var to: String

    mutating func run() async throws {
        let source = try data.existing()
        let files = FileManager.default
        guard !files.fileExists(atPath: to) else {
            throw OperatorError("\(to) already exists; back up into a new directory")
        }
        let clock = ContinuousClock()
        let started = clock.now
        // Built beside the target, so that an interrupted backup never looks like a finished one.
        let staging = URL(fileURLWithPath: to).standardizedFileURL.path + ".partial-\(UUID().uuidString.lowercased())"
        let target = DataDirectory(staging)
        try files.createDirectory(atPath: target.log, withIntermediateDirectories: true)
        do {
            printProgress("copying the log of \(source.root)")
            let log = try source.openLog(readOnly: true)
            do {
                try log.copyCompacted(to: target.log)
                log.close()
            } catch {
                log.close()
                throw error
            }
            let media = try DataDirectoryFiles.copyMediaAndKeys(from: source, to: target)
            let copied = try target.openLog(readOnly: true)
            let head = copied.head
            copied.close()
            // Durable before it is named as finished, and named durably: a backup must survive a crash of its own.
            sync()
            guard rename(staging, to) == 0 else {
                throw OperatorError(
                    "could not move the finished backup \(staging) to \(to): \(String(cString: strerror(errno)))")
            }
            sync()
            let bytes = (try? files.attributesOfItem(atPath: to + "/log/data.mdb")[.size] as? Int) ?? 0
            let seconds = (clock.now - started).seconds
            output.emit(
                "backed up \(source.root) to \(to): the log through position \(head) (\(bytes / 1024) KiB compacted), "
                    + "\(media) media files, in \(String(format: "%.1f", seconds)) s",
                ["backup": to, "head": head.rawValue, "logBytes": bytes, "mediaFiles": media, "seconds": seconds])
        } catch {
            try? files.removeItem(atPath: staging)
            throw error
        }
    }
}
