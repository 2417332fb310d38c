import ChorusProcesses
import Foundation

/// The output of one run of the `chorus` executable built beside this test binary.
struct ChorusRun {
    let status: Int32
    let standardOutput: String
    let standardError: String
}

/// Runs `chorus` with `arguments` and waits for it to exit, on a thread of its own: blocking one of the test process's
/// few threads for a whole run would stall every other test that is running.
func runChorus(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChorusRun {
    let run = try await ChildProcess.run(try chorusExecutableURL().path, arguments, environment: environment)
    return ChorusRun(status: run.status, standardOutput: run.output, standardError: run.errors)
}

func chorusExecutableURL() throws -> URL { try Executables.beside(named: "chorus") }
