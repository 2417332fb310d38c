import ChorusLMDBLog
import ChorusLog
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Crash safety")
struct CrashSafetyTests {
    @Test("SIGKILL at random moments, 24 times: every acknowledged event survives, gapless, checksums sound")
    func killedWriterLosesNothingAcknowledged() async throws {
        try await withTemporaryDirectory { directory in
            let logDirectory = directory + "/log"
            let ackFile = directory + "/acks"
            var generator = SystemRandomNumberGenerator()
            var lastHead: UInt64 = 0
            for round in 1...24 {
                // Every other round writes the indexes often, so that some kills land in an index write.
                let child = try startLogCrashWriter(
                    directory: logDirectory, ackFile: ackFile, writers: 16, eventsPerWriter: 0,
                    smallIndexBatches: round.isMultiple(of: 2))
                // Kill only once this round's writer is appending, at a random moment after that.
                let acknowledgedBefore = acknowledgedPositions(in: ackFile).count
                try await eventually("the writer appending") {
                    acknowledgedPositions(in: ackFile).count > acknowledgedBefore || !child.isRunning
                }
                try #require(child.isRunning, "the writer exited by itself in round \(round)")
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...150, using: &generator)))
                child.send(SIGKILL)
                _ = await child.exited()
                #expect(child.termination == .signalled(SIGKILL))

                let acknowledged = acknowledgedPositions(in: ackFile)
                let log = try LMDBEventLog(directory: logDirectory)
                let report = try log.verifyIntegrity()
                #expect(report.isSound, "round \(round): \(report.firstProblem.map(String.init(describing:)) ?? "")")
                let highest = acknowledged.max() ?? 0
                #expect(log.head.rawValue >= highest, "round \(round): acknowledged \(highest), head \(log.head)")
                #expect(log.head.rawValue > lastHead, "round \(round) appended")
                lastHead = log.head.rawValue
                let stored = Set(try log.read(from: 1, limit: Int(log.head.rawValue)).map(\.position.rawValue))
                #expect(Set(acknowledged).isSubset(of: stored), "round \(round): an acknowledged event is missing")
                // The writer's tail was rebuilt from the events: stream versions carry on from the log, not the index.
                let versions = try (0..<8).map { try log.streamVersion(of: try StreamID("crash-\($0)")) }
                #expect(
                    versions.reduce(0, +) == log.head.rawValue, "round \(round): stream versions add up to the head")
                log.close()
            }
        }
    }
}
