import ChorusBackend
import Foundation

/// The files of a data directory besides its log and read models.
enum DataDirectoryFiles {
    /// Copies every stored media file (not uploads in progress) and the session key, so that tokens stay valid;
    /// returns how many media files. Stored media never change, so a server may run meanwhile.
    @discardableResult
    static func copyMediaAndSessionKey(from source: DataDirectory, to target: DataDirectory) throws -> Int {
        let files = FileManager.default
        try files.createDirectory(atPath: target.media, withIntermediateDirectories: true)
        if files.fileExists(atPath: source.sessionSecret) {
            try files.copyItem(atPath: source.sessionSecret, toPath: target.sessionSecret)
        }
        guard let names = try? files.contentsOfDirectory(atPath: source.media) else { return 0 }
        let stored = names.filter { !$0.hasPrefix(".") }
        let progress = WorkProgress("copying media", total: stored.count, unit: "files")
        for (index, name) in stored.enumerated() {
            try files.copyItem(atPath: source.media + "/" + name, toPath: target.media + "/" + name)
            progress.update(index + 1)
        }
        progress.finish()
        return stored.count
    }
}
