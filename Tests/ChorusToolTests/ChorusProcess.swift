import ChorusFixtures
import ChorusProcesses
import Foundation

/// The output of one run of the `chorus` executable built beside this test binary.
struct ChorusRun {
    let status: Int32
    let standardOutput: String
    let standardError: String

    /// The figures of a `chorus bench … --json` run: the JSON object on its output's last line, whose suite must be
    /// `suite`.
    func benchFigures(suite: String) throws -> [String: Double] {
        guard let last = standardOutput.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        else { throw ServerError("no JSON object on the last line of:\n\(standardOutput)") }
        guard object["suite"] as? String == suite, let figures = object["figures"] as? [String: Double] else {
            throw ServerError("not the figures of suite \(suite): \(last)")
        }
        return figures
    }
}

/// Runs `chorus` with `arguments` and waits for it to exit, without holding one of the test process's few threads
/// (which would stall every other test), and no more than two runs at once (``ChorusRunSlots``).
func runChorus(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChorusRun {
    let executable = try chorusExecutableURL().path
    let run = try await ChorusRunSlots.shared.withSlot {
        try await ChildProcess.run(executable, arguments, environment: environment)
    }
    return ChorusRun(status: run.status, standardOutput: run.output, standardError: run.errors)
}

func chorusExecutableURL() throws -> URL { try Executables.beside(named: "chorus") }

/// Turns for `chorus` runs, two at a time: the tests all start at once, and a dozen demos, imports and replays
/// running together on two cores starved the in-process servers of the HTTP tests, whose writes then timed out
/// waiting for their read models.
actor ChorusRunSlots {
    static let shared = ChorusRunSlots(count: 2)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    /// Runs `body` once a slot is free, holding it until `body` returns or throws.
    func withSlot<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await take()
        defer { give() }
        return try await body()
    }

    /// Waits for a free slot and takes it.
    private func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives a slot back: to the longest waiting, if any.
    private func give() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// What a child process has written to a pipe so far, read without blocking: a test that waits for a line with
/// `eventually` fails at its deadline when the line never comes, instead of holding a thread for ever.
final class PipeText {
    private let descriptor: Int32
    private var bytes: [UInt8] = []

    init(_ pipe: FileHandle) {
        descriptor = pipe.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Everything written so far.
    func read() -> String {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var count = Foundation.read(descriptor, &chunk, chunk.count)
        while count > 0 {
            bytes += chunk[..<count]
            count = Foundation.read(descriptor, &chunk, chunk.count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
