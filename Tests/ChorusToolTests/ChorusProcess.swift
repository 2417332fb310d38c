import ChorusCluster
import Foundation

/// The output of one run of the `chorus` executable built beside this test binary.
struct ChorusRun {
    let status: Int32
    let standardOutput: String
    let standardError: String
}

/// Runs `chorus` with `arguments` and waits for it to exit.
func runChorus(_ arguments: [String], environment: [String: String] = [:]) throws -> ChorusRun {
    let process = Process()
    process.executableURL = try chorusExecutableURL()
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // Read both pipes to their end before waiting, so that a full pipe cannot stall the child.
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    return ChorusRun(
        status: process.waitForExit(),
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData, as: UTF8.self))
}

func chorusExecutableURL() throws -> URL {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    while directory.path != "/" {
        let candidate = directory.appendingPathComponent("chorus")
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isExecutableFile(atPath: candidate.path)
        {
            return candidate
        }
        directory = directory.deletingLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "the chorus executable beside the tests"])
}
