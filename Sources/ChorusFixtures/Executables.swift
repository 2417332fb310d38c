import Foundation

/// Where programs to run as children are: this process's own, and those built beside it.
public enum Executables {
    /// This process's executable, symbolic links resolved: how `chorus` starts more of itself (a server for a
    /// benchmark, a rebuild worker).
    public static var current: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    /// The executable `name` built beside this process's: in its directory or one above it (a test binary may sit
    /// inside a bundle directory). Throws when there is none.
    public static func beside(named name: String) throws -> URL {
        var directory = current.deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) beside \(current.path)"])
    }
}
