import ChorusBackend
import ChorusDataKeys
import Foundation

/// The files of a data directory besides its log and read models.
enum DataDirectoryFiles {
    /// Copies the session key (so that tokens stay valid), the users' data keys as they are now (a key destroyed later
    /// stays in the copy), and every stored media file (not uploads in progress); returns how many media files.
    /// Stored media never change, so a server may run meanwhile. A caller that has the source's keys open passes them:
    /// LMDB's locks break when one process opens a store twice.
    @discardableResult
    static func copyMediaAndKeys(
        from source: DataDirectory, to target: DataDirectory, keys sourceKeys: DataKeyStore? = nil
    ) throws -> Int {
        let files = FileManager.default
        try files.createDirectory(atPath: target.media, withIntermediateDirectories: true)
        if files.fileExists(atPath: source.sessionSecret) {
            try files.copyItem(atPath: source.sessionSecret, toPath: target.sessionSecret)
        }
        if let sourceKeys {
            try sourceKeys.copy(to: target.keys)
        } else if files.fileExists(atPath: source.keys) {
            let keys = try source.openKeys()
            defer { keys.close() }
            try keys.copy(to: target.keys)
        }
        guard let names = try? files.contentsOfDirectory(atPath: source.media) else { return 0 }
        // Each user's media are in a folder of their own; an older Chorus's lie in the folder itself.
        let stored = names.filter { !$0.hasPrefix(".") }
        let progress = WorkProgress("copying media", total: stored.count, unit: "files and folders")
        var count = 0
        for (index, name) in stored.enumerated() {
            let path = source.media + "/" + name
            try files.copyItem(atPath: path, toPath: target.media + "/" + name)
            count += (try? files.contentsOfDirectory(atPath: path).count) ?? 1
            progress.update(index + 1)
        }
        progress.finish()
        return count
    }
}
