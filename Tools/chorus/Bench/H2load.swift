import AsyncHTTPClient
import ChorusProcesses
import Foundation

/// The h2load HTTP/2 load generator (Debian's `nghttp2-client`): a plain client, in C, that measures what an
/// endpoint takes with nothing else between.
struct H2load {
    let path: String

    static func locateOrInstall() throws -> H2load {
        H2load(path: try DebianTool.locateOrInstall("h2load", from: "nghttp2-client"))
    }

    /// Sends `count` requests like `request` (its method, headers and body) over one connection, `streams` at once,
    /// to `paths` in turn on `request`'s host; answers the requests per second h2load measured. Every answer must be
    /// a 2xx. Runs on a thread of its own, so that a server in this process keeps Swift concurrency's threads.
    func run(_ request: HTTPClientRequest, body: [UInt8], paths: [String], count: Int, streams: Int) async throws
        -> Double
    {
        guard let url = URL(string: request.url), let scheme = url.scheme, let host = url.host, let port = url.port
        else { throw BenchmarkError("h2load needs a full URL: \(request.url)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-h2load-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bodyFile = directory.appendingPathComponent("body").path
        let urlsFile = directory.appendingPathComponent("urls").path
        try Data(body).write(to: URL(fileURLWithPath: bodyFile))
        try paths.map { "\(scheme)://\(host):\(port)\($0)" }.joined(separator: "\n")
            .write(toFile: urlsFile, atomically: true, encoding: .utf8)
        var options = ["-n", String(count), "-c", "1", "-m", String(streams), "-d", bodyFile, "-i", urlsFile]
        for header in request.headers { options += ["-H", "\(header.name): \(header.value)"] }
        let (path, arguments) = (path, options)
        let (status, output, errors) = try await BlockingWork.run {
            try ChildProcess.runBlocking(path, arguments)
        }
        // "finished in 4.21s, 4750.59 req/s, 1.02MB/s" and "status codes: 20000 2xx, 0 3xx, 0 4xx, 0 5xx".
        let lines = output.split(separator: "\n")
        guard status == 0,
            let finished = lines.first(where: { $0.hasPrefix("finished in ") })?.split(separator: ", "),
            finished.count > 1, let rate = Double(finished[1].split(separator: " ")[0]),
            let codes = lines.first(where: { $0.hasPrefix("status codes: ") })
        else { throw BenchmarkError("could not read h2load's output:\n\(output)\(errors)") }
        guard codes.hasPrefix("status codes: \(count) 2xx") else {
            throw BenchmarkError("the endpoint did not answer h2load's \(count) requests with 2xx: \(codes)")
        }
        return rate
    }
}
