import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusDelivery
import ChorusHTTP
import Foundation
import Logging

/// `chorus serve`'s flags and environment made into the one options value the server is built from. Pure: it reads
/// nothing but its arguments, so every flag, variable, default and refusal is unit-tested (ServeOptionsParsingTests).
extension ServeCommand {
    /// The options of these flags, else of `environment`, else the defaults; throws, naming the flag and its
    /// variable, for a value neither can take.
    /// `readFile` reads the files the variables name (push's keys): the real files, or a test's.
    func options(
        environment: [String: String],
        readFile: (String) throws -> [UInt8] = { Array(try Data(contentsOf: URL(fileURLWithPath: $0))) }
    ) throws -> ServeOptions {
        var options = ServeOptions()
        options.data = data.directory(environment: environment)
        try applyAddress(to: &options.server, environment: environment)
        options.logLevel = try logLevel(environment)
        options.server.logsRequests = options.logLevel <= .debug
        options.server.readOnly = readOnly
        switch adminConsole ?? environment["CHORUS_ADMIN_CONSOLE"] ?? "on" {
        case "on": options.server.adminConsole = true
        case "off": options.server.adminConsole = false
        case let other:
            throw ValidationError("--admin-console (or CHORUS_ADMIN_CONSOLE) must be on or off, not \(other)")
        }
        try applyLimits(to: &options.server, environment: environment)
        if let demoEvents {
            guard !readOnly else { throw ValidationError("--demo-events writes; it cannot go with --read-only") }
            guard demoEvents > 0 else { throw ValidationError("--demo-events must be positive") }
            options.demoEvents = demoEvents
        }
        try applyStorage(to: &options, environment: environment)
        options.cluster = try clusterOptions(environment)
        if options.cluster != nil, readOnly || demoEvents != nil {
            throw ValidationError(
                "--cluster cannot go with --read-only or --demo-events (fill a cluster with `chorus cluster init`)")
        }
        options.server.webhooks = try Self.webhooks(environment)
        options.server.push = try Self.push(environment, readFile: readFile)
        if options.server.push != nil, readOnly {
            throw ValidationError(
                "push (CHORUS_APNS_KEY_FILE, CHORUS_FCM_SERVICE_ACCOUNT_FILE) cannot go with --read-only")
        }
        return options
    }

    /// The address to listen on, where clients reach it, and the admin token.
    private func applyAddress(to server: inout ServerConfiguration, environment: [String: String]) throws {
        server.host = host ?? environment["CHORUS_HOST"] ?? server.host
        if let port = try port ?? environment["CHORUS_PORT"].map(Self.port) { server.port = port }
        guard (1...65_535).contains(server.port) else { throw ValidationError("--port must be from 1 to 65535") }
        server.publicBaseURL = publicURL ?? environment["CHORUS_PUBLIC_URL"]
        server.adminToken = environment["CHORUS_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    private func logLevel(_ environment: [String: String]) throws -> Logger.Level {
        let name = logLevel ?? environment["CHORUS_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: name.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--log-level (or CHORUS_LOG_LEVEL) must be one of \(names), not \(name)")
        }
        return level
    }

    /// The log's size, the erasure delay, the fan-out limit and the kept pages.
    private func applyStorage(to options: inout ServeOptions, environment: [String: String]) throws {
        let maximumLogSize =
            try maxLogSize
            ?? environment["CHORUS_MAX_LOG_SIZE"].map { text in
                guard let size = ByteCount(argument: text) else {
                    throw ValidationError("CHORUS_MAX_LOG_SIZE: \(ByteCount.help)")
                }
                return size
            }
        if let maximumLogSize, maximumLogSize.bytes < ByteCount.minimumLogSize {
            throw ValidationError("--max-log-size must be at least 1M")
        }
        options.maximumLogSize = maximumLogSize?.bytes
        let erasureDelayText = erasureDelay ?? environment["CHORUS_ERASURE_DELAY"] ?? "10m"
        guard let erasureDelay = Self.duration(erasureDelayText), erasureDelay > .zero else {
            throw ValidationError(
                "--erasure-delay (or CHORUS_ERASURE_DELAY) must be a positive duration such as 500ms, 30s, 10m or 1h, "
                    + "not \(erasureDelayText)")
        }
        options.erasureDelay = erasureDelay
        if let text = fanOutLimit.map(String.init) ?? environment["CHORUS_FAN_OUT_LIMIT"] {
            guard let limit = Int(text), limit >= 1 else {
                throw ValidationError("--fan-out-limit (or CHORUS_FAN_OUT_LIMIT) must be at least 1, not \(text)")
            }
            options.fanOutLimit = limit
        }
        if let text = keptPages ?? environment["CHORUS_KEPT_PAGES"] {
            guard let bytes = text == "off" ? 0 : ByteCount(argument: text)?.bytes else {
                throw ValidationError(
                    "--kept-pages (or CHORUS_KEPT_PAGES) must be off or \(ByteCount.help), not \(text)")
            }
            options.server.keptPageBytes = bytes
        }
    }

    /// The cluster to join, from --cluster or CHORUS_CLUSTER_URL; nil for a single node.
    private func clusterOptions(_ environment: [String: String]) throws -> ServeOptions.Cluster? {
        guard let url = cluster ?? environment["CHORUS_CLUSTER_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return nil
        }
        let address: ClusterAddress
        do { address = try ClusterAddress(url) } catch let error as ClusterError {
            throw ValidationError("--cluster (or CHORUS_CLUSTER_URL): \(error.description)")
        }
        let timeoutText = clusterWriteTimeout ?? environment["CHORUS_CLUSTER_WRITE_TIMEOUT"] ?? "5s"
        guard let timeout = Self.duration(timeoutText), timeout >= .milliseconds(1) else {
            throw ValidationError(
                "--cluster-write-timeout (or CHORUS_CLUSTER_WRITE_TIMEOUT) must be a duration such as 500ms or 5s, "
                    + "not \(timeoutText)")
        }
        return ServeOptions.Cluster(address: address, writeTimeout: timeout)
    }

    /// The webhook settings of the environment; nil without `CHORUS_WEBHOOK_URL`.
    private static func webhooks(_ environment: [String: String]) throws -> WebhookConfiguration? {
        guard let url = environment["CHORUS_WEBHOOK_URL"], !url.isEmpty else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        else { throw ValidationError("CHORUS_WEBHOOK_URL must be an http or https URL, not \(url)") }
        guard let secret = environment["CHORUS_WEBHOOK_SECRET"], let signer = WebhookSigner(secret: secret) else {
            throw ValidationError(
                "CHORUS_WEBHOOK_URL needs CHORUS_WEBHOOK_SECRET: whsec_ and the base64 of at least 16 random bytes")
        }
        var configuration = WebhookConfiguration(url: url, signer: signer)
        func milliseconds(_ name: String) throws -> Duration? {
            guard let text = environment[name] else { return nil }
            guard let value = Int64(text), value > 0 else {
                throw ValidationError("\(name) must be a positive number of milliseconds, not \(text)")
            }
            return .milliseconds(value)
        }
        if let delay = try milliseconds("CHORUS_WEBHOOK_RETRY_DELAY_MS") { configuration.retryDelay = delay }
        if let delay = try milliseconds("CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS") { configuration.maximumRetryDelay = delay }
        if let timeout = try milliseconds("CHORUS_WEBHOOK_TIMEOUT_MS") { configuration.timeout = timeout }
        return configuration
    }

    /// `500ms`, `30s`, `10m` or `1h`.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, milliseconds) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast(suffix.count)), value >= 0, value <= Int64.max / milliseconds else {
                return nil
            }
            return .milliseconds(value * milliseconds)
        }
        return nil
    }

    private static func port(_ text: String) throws -> Int {
        guard let port = Int(text) else { throw ValidationError("CHORUS_PORT must be a number, not \(text)") }
        return port
    }
}
