import ChorusProcesses
import Foundation

/// The wrk load generator (Debian's `wrk`), run with a Lua script that spreads requests over many users' tokens.
struct Wrk {
    let path: String

    /// What one run measured.
    struct Result {
        var requestsPerSecond: Double
        var p99Milliseconds: Double
        /// Requests answered, errors included.
        var requests: Int
        /// Responses that were not 2xx or 3xx, and socket errors.
        var errors: Int
    }

    static func locateOrInstall() throws -> Wrk {
        Wrk(path: try DebianTool.locateOrInstall("wrk", from: "wrk"))
    }

    /// A script that sends `method` with a random one of `tokens` (and `body`, as JSON) on each request; with
    /// `acceptingGzip`, the `Accept-Encoding` iOS's URLSession sends.
    static func script(method: String, tokens: [String], body: String? = nil, acceptingGzip: Bool = false) -> String {
        var lua = "tokens = {" + tokens.map { "\"\($0)\"" }.joined(separator: ",") + "}\n"
        lua += "request = function()\n"
        lua += "  local headers = {[\"Authorization\"] = \"Bearer \" .. tokens[math.random(#tokens)]}\n"
        if acceptingGzip { lua += "  headers[\"Accept-Encoding\"] = \"gzip, deflate, br\"\n" }
        if let body {
            lua += "  headers[\"Content-Type\"] = \"application/json\"\n"
            lua += "  return wrk.format(\"\(method)\", nil, headers, '\(body)')\n"
        } else {
            lua += "  return wrk.format(\"\(method)\", nil, headers)\n"
        }
        lua += "end\n"
        lua += "done = function(summary, latency, requests)\n"
        lua +=
            "  io.write(string.format(\"chorus: %d %d %f\\n\", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.requests, latency:percentile(99)))\n"
        lua += "end\n"
        return lua
    }

    /// A script that mixes the app's reads and writes: each request is one of `requests` (method, path, JSON body or
    /// nil), drawn with its weight, with a random one of `tokens`. With `pause`, each connection waits a random time
    /// of that mean after each answer (wrk's `delay`): connections ÷ pause is then the rate asked for, as long as the
    /// answers take much less than the pause.
    static func mixedScript(
        tokens: [String], requests: [(weight: Int, method: String, path: String, body: String?)],
        pause: Duration? = nil
    ) -> String {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var lua = "tokens = {" + tokens.map(quoted).joined(separator: ",") + "}\n"
        lua +=
            "requests = {"
            + requests.map { request in
                "{\(request.weight), \(quoted(request.method)), \(quoted(request.path)), \(request.body.map(quoted) ?? "nil")}"
            }.joined(separator: ",") + "}\n"
        lua += "total = 0\nfor _, r in ipairs(requests) do total = total + r[1] end\n"
        lua += "request = function()\n"
        lua += "  local pick = math.random(total)\n"
        lua += "  for _, r in ipairs(requests) do\n"
        lua += "    pick = pick - r[1]\n"
        lua += "    if pick <= 0 then\n"
        lua += "      local headers = {[\"Authorization\"] = \"Bearer \" .. tokens[math.random(#tokens)]}\n"
        lua += "      if r[4] then headers[\"Content-Type\"] = \"application/json\" end\n"
        lua += "      return wrk.format(r[2], r[3], headers, r[4])\n"
        lua += "    end\n"
        lua += "  end\n"
        lua += "end\n"
        if let pause {
            // Uniform between 0 and twice the mean, so that connections do not fall into step.
            lua += "delay = function() return math.random() * \(pause.seconds * 2000) end\n"
        }
        lua += "done = function(summary, latency, requests)\n"
        lua +=
            "  io.write(string.format(\"chorus: %d %d %f\\n\", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.requests, latency:percentile(99)))\n"
        lua += "end\n"
        return lua
    }

    /// ``run(url:script:seconds:connections:threads:)`` on a thread of its own, so that several wrk runs (and the
    /// caller's tasks) go on at once without holding Swift concurrency's few threads.
    func runAlongside(url: String, script: String, seconds: Int, connections: Int) async throws -> Result {
        try await BlockingWork.run {
            try run(url: url, script: script, seconds: seconds, connections: connections, threads: 1)
        }
    }

    func run(url: String, script: String, seconds: Int, connections: Int, threads: Int) throws -> Result {
        let scriptPath = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chorus-wrk-\(UUID().uuidString).lua"
        ).path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scriptPath) }
        let text = try ChildProcess.runBlocking(
            path, ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "-s", scriptPath, url]
        ).output
        guard let rateLine = text.split(separator: "\n").first(where: { $0.hasPrefix("Requests/sec:") }),
            let rate = Double(rateLine.split(separator: " ").last ?? ""),
            let summary = text.split(separator: "\n").first(where: { $0.hasPrefix("chorus: ") })
        else { throw BenchmarkError("could not read wrk's output:\n\(text)") }
        let parts = summary.split(separator: " ")
        let errors = Int(parts[1]) ?? 0
        let p99Microseconds = Double(parts[3]) ?? .nan
        return Result(
            requestsPerSecond: rate, p99Milliseconds: p99Microseconds / 1000, requests: Int(parts[2]) ?? 0,
            errors: errors)
    }
}

extension Wrk.Result {
    /// Runs of equal length as one: their mean rate, the highest of their p99s, and their requests and errors.
    init(combining runs: [Wrk.Result]) {
        self.init(
            requestsPerSecond: runs.map(\.requestsPerSecond).reduce(0, +) / Double(max(1, runs.count)),
            p99Milliseconds: runs.map(\.p99Milliseconds).max() ?? .nan, requests: runs.map(\.requests).reduce(0, +),
            errors: runs.map(\.errors).reduce(0, +))
    }
}
