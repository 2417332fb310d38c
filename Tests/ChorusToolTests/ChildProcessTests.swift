import ChorusProcesses
import Foundation
import Testing

@Suite("Child processes")
struct ChildProcessTests {
    @Test("a run collects much more than a pipe holds from both streams, and its exit code")
    func collectsBothStreams() async throws {
        // 300 KB to each stream, interleaved: read one after the other, the full other pipe would stall the child.
        let run = try await ChildProcess.run(
            "/bin/sh", ["-c", "for i in $(seq 1 3000); do echo out$i; echo err$i >&2; done; exit 3"],
            environment: ["LC_ALL": "C"])
        #expect(run.status == 3)
        #expect(run.output.split(separator: "\n").count == 3000)
        #expect(run.errors.split(separator: "\n").count == 3000)
        #expect(run.output.hasSuffix("out3000\n") && run.errors.hasSuffix("err3000\n"))
    }

    @Test("a child gets none of this process's descriptors: a long-lived one cannot hold another's pipe open")
    func descriptorsDoNotLeak() async throws {
        // A pipe made without close-on-exec, as any thread of this process may make one.
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        // Long enough to be running still when it is terminated, however loaded the machine.
        let sleeper = try ChildProcess("/bin/sleep", ["600"])
        close(ends[1])
        // Were the write end inherited by the sleeper, this read would wait for it.
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0, "the pipe is at its end")
        let listed = try await ChildProcess.run("/bin/ls", ["/proc/self/fd"]).output.split(separator: "\n")
        #expect(listed.count <= 4, "only standard input, output and error, and ls's own directory: \(listed)")
        sleeper.terminate()
        #expect(await sleeper.exited() == SIGTERM)
        #expect(sleeper.termination == .signalled(SIGTERM))
        #expect(!sleeper.isRunning)
    }

    @Test("environment, working directory and a file for standard error are the child's; a missing program throws")
    func startsAsAsked() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let child = try ChildProcess(
            "/bin/sh", ["-c", "pwd; echo \"$CHORUS_CHILD_TEST\" >&2"], environment: ["CHORUS_CHILD_TEST": "given"],
            directory: "/tmp", output: .pipe, errors: .file(log))
        #expect(await child.exited() == 0)
        #expect(String(decoding: try #require(child.output).readDataToEndOfFile(), as: UTF8.self) == "/tmp\n")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "given\n")
        #expect(throws: ChildProcessError.self) { try ChildProcess("/nonexistent/program", []) }
    }
}
