import ChorusDomain
import ChorusLog
import Foundation
import Logging

/// Where a data directory keeps its read models: `projections` is a symbolic link to the current generation,
/// `projections.<id>`, so that a rebuilt generation replaces the old one with a single atomic rename of the link.
/// Whoever opens `projections` gets either the old read models or the new ones, never a mix, never nothing.
public struct ProjectionGenerations: Sendable {
    public let dataDirectory: String

    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }

    /// The path read models are opened at.
    public var current: String { dataDirectory + "/projections" }

    /// Rebuilds the read models of `log` (through `last`, or the head) as a new generation beside the current one,
    /// swaps it in atomically, then removes the previous generation. Returns the position built to.
    @discardableResult
    public func rebuildAndSwap(
        log: any EventLog, keys: any PersonalDataKeys, through last: LogPosition? = nil,
        fanOutLimit: Int = ProjectionEngine.defaultFanOutLimit, logger: Logger = Logger(label: "chorus.projections"),
        progress: BuildProgress = { _, _ in }
    ) throws -> LogPosition {
        let (name, path) = try newGeneration()
        let position = try ProjectionEngine.rebuild(
            log: log, keys: keys, into: path, through: last, fanOutLimit: fanOutLimit, logger: logger,
            progress: progress)
        try makeCurrent(name)
        return position
    }

    /// A name and path for a generation beside the current one, which nothing uses yet.
    public func newGeneration() throws -> (name: String, path: String) {
        try prepareCurrent()
        let name = "projections.\(UUID().uuidString.lowercased())"
        return (name, dataDirectory + "/" + name)
    }

    /// Points `projections` at the generation `name` in one atomic rename, then removes the one it pointed at.
    public func makeCurrent(_ name: String) throws {
        let files = FileManager.default
        let previous = try? files.destinationOfSymbolicLink(atPath: current)
        // A new link beside the old one, renamed over it: rename(2) replaces the old link atomically.
        let link = dataDirectory + "/projections.link-\(UUID().uuidString.lowercased())"
        try files.createSymbolicLink(atPath: link, withDestinationPath: name)
        guard rename(link, current) == 0 else {
            let code = errno
            try? files.removeItem(atPath: link)
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSFilePathErrorKey: current,
                    NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
                ])
        }
        if let previous, previous != name {
            // Anyone who still has the old store open keeps its files until they close them.
            try? files.removeItem(atPath: dataDirectory + "/" + previous)
        }
    }

    /// Makes `projections` a link to a generation: to a new, empty one in a new data directory, or to the plain
    /// directory that a data directory from before generations has there.
    public func prepareCurrent() throws {
        let files = FileManager.default
        guard (try? files.destinationOfSymbolicLink(atPath: current)) == nil else { return }
        try files.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let name = "projections.\(UUID().uuidString.lowercased())"
        var isDirectory: ObjCBool = false
        if files.fileExists(atPath: current, isDirectory: &isDirectory), isDirectory.boolValue {
            try files.moveItem(atPath: current, toPath: dataDirectory + "/" + name)
        } else {
            try files.createDirectory(atPath: dataDirectory + "/" + name, withIntermediateDirectories: false)
        }
        try files.createSymbolicLink(atPath: current, withDestinationPath: name)
    }
}
