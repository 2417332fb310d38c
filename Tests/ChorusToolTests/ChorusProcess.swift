import ChorusProcesses
import Foundation

/// The output of one run of the `chorus` executable built beside this test binary.
struct ChorusRun {
    let status: Int32
    let standardOutput: String
    let standardError: String
}

/// Runs `chorus` with `arguments` and waits for it to exit.
func runChorus(_ arguments: [String], environment: [String: String] = [:]) throws -> ChorusRun {
    let run = try ChildProcess.run(try chorusExecutableURL().path, arguments, environment: environment)
    return ChorusRun(status: run.status, standardOutput: run.output, standardError: run.errors)
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
