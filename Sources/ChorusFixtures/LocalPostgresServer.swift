import ChorusProcesses
import Foundation

/// A throwaway PostgreSQL on this machine, for the cluster tests, `chorus bench cluster` and `chorus bench postgres`:
/// `initdb` in a temporary directory, the server on a free loopback port with trust authentication for the user
/// `chorus`, everything removed by ``stop()``. Debian's `postgresql` package provides the programs (`make test`
/// installs it).
///
/// `pg_ctl` starts and stops the server, which runs on its own (not as a child of this process). PostgreSQL refuses
/// to run as root, so as root every program runs as the `postgres` user the package made, through `setpriv`, which
/// executes it in place instead of forking.
public final class LocalPostgresServer: Sendable {
    public let directory: String
    public let port: Int
    private let programs: String

    /// The address `chorus serve --cluster` takes.
    public var url: String { "postgresql://chorus@127.0.0.1:\(port)/postgres" }
    private var dataDirectory: String { directory + "/data" }

    /// Makes the database cluster and starts the server on `port`.
    public init(port: Int) throws {
        guard let programs = Self.programs() else {
            throw LocalPostgresError(
                "no PostgreSQL programs under /usr/lib/postgresql: install Debian's postgresql (make test does)")
        }
        self.programs = programs
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres", directory], asPostgres: false) }
        try Self.run(
            programs + "/initdb", ["-D", dataDirectory, "-U", "chorus", "--auth=trust", "-E", "UTF8", "--no-sync"])
        try start()
    }

    /// Starts the server and waits (at most 60 s) until it takes connections.
    public func start() throws {
        try Self.run(
            programs + "/pg_ctl",
            [
                "-D", dataDirectory, "-l", directory + "/server.log", "-w", "-t", "60", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c max_connections=200", "start",
            ])
    }

    /// Stops the server: a fast shutdown, or with `immediate` a crash (recovery from the WAL at the next start).
    public func stopServer(immediate: Bool = false) {
        _ = try? Self.run(
            programs + "/pg_ctl", ["-D", dataDirectory, "-m", immediate ? "immediate" : "fast", "-w", "stop"])
    }

    /// Stops the server and removes everything it had.
    public func stop() {
        stopServer()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `sql` with psql and returns its unaligned output.
    @discardableResult
    public func psql(_ sql: String) throws -> String {
        try Self.run(
            programs + "/psql",
            [
                "-h", "127.0.0.1", "-p", String(port), "-U", "chorus", "-d", "postgres", "-At", "-v",
                "ON_ERROR_STOP=1", "-c", sql,
            ],
            asPostgres: false)
    }

    /// Runs PostgreSQL's `pgbench` against this server's `postgres` database with `arguments`; returns its output.
    public func pgbench(_ arguments: [String]) throws -> String {
        try Self.run(
            programs + "/pgbench", ["-h", "127.0.0.1", "-p", String(port), "-U", "chorus"] + arguments + ["postgres"],
            asPostgres: false)
    }

    /// psql running `sql` in the background, until it ends.
    public func psqlInBackground(_ sql: String) throws -> ChildProcess {
        let (program, arguments) = Self.command(
            programs + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "chorus", "-d", "postgres", "-c", sql],
            asPostgres: false)
        return try ChildProcess(program, arguments, directory: "/", output: .discarded, errors: .discarded)
    }

    /// The newest installed version's programs.
    private static func programs() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().reversed().map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// The program to start and its arguments: as root, through `setpriv` as the `postgres` user.
    private static func command(_ program: String, _ arguments: [String], asPostgres: Bool) -> (String, [String]) {
        guard asPostgres && getuid() == 0 else { return (program, arguments) }
        return (
            "/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", program] + arguments
        )
    }

    @discardableResult
    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool = true) throws -> String {
        let (executable, arguments) = command(program, arguments, asPostgres: asPostgres)
        let run = try ChildProcess.runBlocking(executable, arguments, directory: "/")
        let text = run.output + run.errors
        guard run.status == 0 else {
            throw LocalPostgresError("\((program as NSString).lastPathComponent) failed (\(run.status)): \(text)")
        }
        return text
    }
}

/// PostgreSQL's programs missing, or one of them failing, with what it printed.
public struct LocalPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
