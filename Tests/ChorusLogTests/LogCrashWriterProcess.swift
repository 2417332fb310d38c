import ChorusFixtures
import ChorusProcesses
import Foundation

/// The `LogCrashWriter` helper, built beside this test binary.
func logCrashWriterURL() throws -> URL { try Executables.beside(named: "LogCrashWriter") }

/// Starts `LogCrashWriter` appending to the log in `directory`, acknowledging positions into `ackFile`.
func startLogCrashWriter(
    directory: String, ackFile: String, writers: Int, eventsPerWriter: Int, tinyMap: Bool = false,
    smallIndexBatches: Bool = false
) throws -> ChildProcess {
    try ChildProcess(
        try logCrashWriterURL().path,
        [directory, ackFile, "\(writers)", "\(eventsPerWriter)"] + (tinyMap ? ["--tiny-map"] : [])
            + (smallIndexBatches ? ["--small-index-batches"] : []))
}

/// The positions acknowledged in `ackFile`; a line cut short (none should be) is ignored.
func acknowledgedPositions(in ackFile: String) -> [UInt64] {
    guard let text = try? String(contentsOfFile: ackFile, encoding: .utf8) else { return [] }
    return text.split(separator: "\n", omittingEmptySubsequences: true).compactMap { UInt64($0) }
}
