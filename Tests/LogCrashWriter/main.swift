// A child process for the log's crash and multi-process tests.
//
//   LogCrashWriter <log-directory> <ack-file> <writers> <events-per-writer> [--tiny-map] [--small-index-batches]
//
// Appends durably from <writers> concurrent tasks (0 events per writer: until killed) and, after each append returns,
// writes its last position as one line to <ack-file> with a single write(2), so a SIGKILL never leaves half a line
// that claims an acknowledgement. --tiny-map starts with a 64 KiB map that grows 64 KiB at a time;
// --small-index-batches writes the log's indexes every 50 events, so that kills land during index writes too.
import ChorusLMDBLog
import ChorusLog

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 5, let writers = Int(arguments[3]), let eventsPerWriter = Int(arguments[4]) else {
    print("usage: LogCrashWriter <log-directory> <ack-file> <writers> <events-per-writer> [--tiny-map]")
    exit(2)
}
var configuration = LMDBEventLog.Configuration()
if arguments.contains("--small-index-batches") {
    configuration.indexBatchSize = 50
}
if arguments.contains("--tiny-map") {
    configuration.initialMapSize = 64 << 10
    configuration.maximumMapGrowthStep = 64 << 10
}
let ackFile = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
guard ackFile >= 0 else {
    print("cannot open \(arguments[2])")
    exit(1)
}
let log = try LMDBEventLog(directory: arguments[1], configuration: configuration)

func acknowledge(_ position: LogPosition) {
    let line = Array("\(position.rawValue)\n".utf8)
    _ = line.withUnsafeBytes { write(ackFile, $0.baseAddress, $0.count) }
}

try await log.withWriter {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                var appended = 0
                while eventsPerWriter == 0 || appended < eventsPerWriter {
                    let size = 16 + (writer * 37 + appended * 11) % 400
                    let request = AppendRequest(
                        stream: try StreamID("crash-\(writer % 8)"),
                        events: [
                            NewEvent(
                                type: "Tick",
                                payload: [UInt8](repeating: UInt8(truncatingIfNeeded: appended), count: size))
                        ],
                        actor: "writer-\(writer)")
                    let outcome = try await log.append(request)
                    acknowledge(outcome.lastPosition)
                    appended += 1
                }
            }
        }
        try await group.waitForAll()
    }
}
log.close()
