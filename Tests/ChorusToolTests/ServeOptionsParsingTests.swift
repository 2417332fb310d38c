import ArgumentParser
import ChorusHTTP
import Crypto
import Foundation
import Testing

@testable import chorus

/// `chorus serve`'s flags and environment made into the options the server is built from: every flag, its variable,
/// its default, and what a bad value is told. The process-level tests (`ServeOptionsTests`) show that a refusal stops
/// serve before it opens anything.
@Suite("chorus serve: flags and environment to options")
struct ServeOptionsParsingTests {
    private func options(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServeOptions {
        try ServeCommand.parse(arguments).options(environment: environment)
    }

    /// What the options say of one setting, as text: a flag, its variable and the default are compared through it.
    private struct Setting: Sendable {
        let flag: [String]
        let variable: (name: String, value: String)?
        let expected: String
        let read: @Sendable (ServeOptions) -> String
    }

    private static let settings: [Setting] = [
        Setting(flag: ["--data", "/srv/a"], variable: ("CHORUS_DATA", "/srv/a"), expected: "/srv/a") { $0.data.root },
        Setting(flag: ["--host", "0.0.0.0"], variable: ("CHORUS_HOST", "0.0.0.0"), expected: "0.0.0.0") {
            $0.server.host
        },
        Setting(flag: ["--port", "9000"], variable: ("CHORUS_PORT", "9000"), expected: "9000") { "\($0.server.port)" },
        Setting(
            flag: ["--public-url", "https://x.example"], variable: ("CHORUS_PUBLIC_URL", "https://x.example"),
            expected: "https://x.example"
        ) { $0.server.publicBaseURL ?? "" },
        Setting(flag: ["--log-level", "debug"], variable: ("CHORUS_LOG_LEVEL", "DEBUG"), expected: "debug true") {
            "\($0.logLevel) \($0.server.logsRequests)"
        },
        Setting(flag: ["--read-only"], variable: nil, expected: "true") { "\($0.server.readOnly)" },
        Setting(flag: ["--admin-console", "off"], variable: ("CHORUS_ADMIN_CONSOLE", "off"), expected: "false") {
            "\($0.server.adminConsole)"
        },
        Setting(flag: ["--demo-events", "500"], variable: nil, expected: "500") { "\($0.demoEvents ?? 0)" },
        Setting(flag: ["--no-rate-limits"], variable: ("CHORUS_RATE_LIMITS", "off"), expected: "nil nil") {
            "\($0.server.rateLimits.writesPerUser.map(\.burst) as Int?) \($0.server.rateLimits.loginPerAddress as Any?)"
        },
        Setting(
            flag: ["--rate-limit", "rooms-per-user=3,1m", "--rate-limit", "reports-per-user=off"],
            variable: ("CHORUS_RATE_LIMITS", "rooms-per-user=3,1m reports-per-user=off"), expected: "3 true true"
        ) {
            let (rooms, reports) = ($0.server.rateLimits.roomsPerUser, $0.server.rateLimits.reportsPerUser)
            return "\(rooms?.burst ?? 0) \(rooms?.interval == .seconds(60)) \(reports == nil)"
        },
        Setting(
            flag: ["--live-streams-per-user", "off"], variable: ("CHORUS_LIVE_STREAMS_PER_USER", "off"),
            expected: "nil"
        ) { "\($0.server.liveStreamsPerUser as Int?)" },
        Setting(
            flag: ["--trusted-proxies", "10.0.0.0/8, 192.168.1.1"],
            variable: ("CHORUS_TRUSTED_PROXIES", "10.0.0.0/8,192.168.1.1"), expected: "10.0.0.0/8 192.168.1.1"
        ) { $0.server.trustedProxies.map(\.description).joined(separator: " ") },
        Setting(flag: ["--max-log-size", "2G"], variable: ("CHORUS_MAX_LOG_SIZE", "2G"), expected: "2147483648") {
            "\($0.maximumLogSize ?? 0)"
        },
        Setting(flag: ["--erasure-delay", "30s"], variable: ("CHORUS_ERASURE_DELAY", "30s"), expected: "30000 ms") {
            "\(Int($0.erasureDelay / .milliseconds(1))) ms"
        },
        Setting(flag: ["--fan-out-limit", "7"], variable: ("CHORUS_FAN_OUT_LIMIT", "7"), expected: "7") {
            "\($0.fanOutLimit)"
        },
        Setting(flag: ["--kept-pages", "off"], variable: ("CHORUS_KEPT_PAGES", "off"), expected: "0") {
            "\($0.server.keptPageBytes)"
        },
        Setting(
            flag: ["--cluster", "postgresql://chorus@db:5433/log", "--cluster-write-timeout", "2s"],
            variable: ("CHORUS_CLUSTER_URL", "postgresql://chorus@db:5433/log"), expected: "db 5433 chorus log"
        ) { options in
            guard let address = options.cluster?.address else { return "" }
            return "\(address.host) \(address.port) \(address.user) \(address.database)"
        },
    ]

    @Test("with no flag and no variable, every setting is serve's default")
    func defaults() throws {
        let options = try options([])
        #expect(options.data.root == "./chorus-data")
        #expect(options.server.host == "127.0.0.1" && options.server.port == 8080)
        #expect(options.server.publicBaseURL == nil && options.server.adminToken == nil)
        #expect(options.logLevel == .info && !options.server.logsRequests && !options.server.readOnly)
        #expect(options.demoEvents == nil && options.maximumLogSize == nil && options.cluster == nil)
        #expect(options.server.rateLimits.writesPerUser == RateLimits().writesPerUser)
        #expect(options.server.liveStreamsPerUser == 20 && options.server.trustedProxies.isEmpty)
        #expect(options.erasureDelay == .seconds(600) && options.server.keptPageBytes == 64 << 20)
        #expect(options.fanOutLimit == ServeOptions().fanOutLimit && options.server.webhooks == nil)
        #expect(options.server.adminConsole)
    }

    @Test("each flag sets its setting, its variable sets the same when the flag is not given, and the flag wins")
    func flagsAndVariables() throws {
        let defaults = try options([])
        for setting in Self.settings {
            #expect(setting.read(defaults) != setting.expected, "\(setting.flag) is not the default")
            #expect(setting.read(try options(setting.flag)) == setting.expected, "\(setting.flag)")
            guard let variable = setting.variable else { continue }
            let fromVariable = try options([], [variable.name: variable.value])
            #expect(setting.read(fromVariable) == setting.expected, "\(variable.name)")
            let overruled = try options(setting.flag, [variable.name: "overruled"])
            #expect(setting.read(overruled) == setting.expected, "\(setting.flag) over \(variable.name)")
        }
        let cluster = ["--cluster", "postgresql://chorus@db/log"]
        #expect(try options(cluster).cluster?.writeTimeout == .seconds(5))
        #expect(try options(cluster + ["--cluster-write-timeout", "2s"]).cluster?.writeTimeout == .seconds(2))
        let fromVariable = try options(cluster, ["CHORUS_CLUSTER_WRITE_TIMEOUT": "750ms"])
        #expect(fromVariable.cluster?.writeTimeout == .milliseconds(750))
    }

    @Test("the admin token and the webhooks come from the environment only")
    func environmentOnly() throws {
        let options = try options(
            [],
            [
                "CHORUS_ADMIN_TOKEN": "admin-token", "CHORUS_WEBHOOK_URL": "https://hooks.example/in",
                "CHORUS_WEBHOOK_SECRET": "whsec_" + "MDEyMzQ1Njc4OWFiY2RlZg==", "CHORUS_WEBHOOK_RETRY_DELAY_MS": "250",
                "CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS": "60000", "CHORUS_WEBHOOK_TIMEOUT_MS": "3000",
            ])
        #expect(options.server.adminToken == "admin-token")
        let webhooks = try #require(options.server.webhooks)
        #expect(webhooks.url == "https://hooks.example/in")
        #expect(webhooks.retryDelay == .milliseconds(250) && webhooks.maximumRetryDelay == .seconds(60))
        #expect(webhooks.timeout == .seconds(3))
        #expect(try self.options([], ["CHORUS_ADMIN_TOKEN": ""]).server.adminToken == nil, "empty is none")
    }

    /// Push's files, as `readFile` reads them: a `.p8` key, a service account, a CA; any other path is missing.
    private static let pushFiles: [String: [UInt8]] = [
        "/keys/AuthKey.p8": Array(P256.Signing.PrivateKey().pemRepresentation.utf8),
        "/keys/other.pem": Array("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n".utf8),
        "/keys/service-account.json": Array(
            #"{"project_id":"photos-1","client_email":"push@photos-1.iam.gserviceaccount.com","private_key":"k","token_uri":"https://oauth2.example/token"}"#
                .utf8),
        "/keys/ca.pem": Array("a CA".utf8),
    ]

    private func pushOptions(_ environment: [String: String], _ arguments: [String] = []) throws -> ServeOptions {
        try ServeCommand.parse(arguments).options(environment: environment) { path in
            guard let bytes = Self.pushFiles[path] else { throw CocoaError(.fileReadNoSuchFile) }
            return bytes
        }
    }

    private static let apns = [
        "CHORUS_APNS_KEY_FILE": "/keys/AuthKey.p8", "CHORUS_APNS_KEY_ID": "ABC123DEFG",
        "CHORUS_APNS_TEAM_ID": "DEF456GHIJ", "CHORUS_APNS_TOPIC": "com.example.photos",
    ]

    @Test(
        "push comes from the environment: APNs from its key file and ids, FCM from its service account, each endpoint and the CA; a missing or wrong part is named"
    )
    func push() throws {
        #expect(try options([]).server.push == nil, "no push without its variables")
        let apnsOnly = try #require(try pushOptions(Self.apns).server.push)
        let apns = try #require(apnsOnly.apns)
        #expect(apns.keyID == "ABC123DEFG" && apns.teamID == "DEF456GHIJ" && apns.topic == "com.example.photos")
        #expect(apns.productionURL == "https://api.push.apple.com")
        #expect(apns.sandboxURL == "https://api.sandbox.push.apple.com")
        #expect(apnsOnly.fcm == nil && apnsOnly.caFile == nil && apnsOnly.retryDelay == .seconds(1))
        let both = try #require(
            try pushOptions(
                Self.apns.merging([
                    "CHORUS_APNS_URL": "https://apns.internal:8443/",
                    "CHORUS_APNS_SANDBOX_URL": "https://sandbox.internal",
                    "CHORUS_FCM_SERVICE_ACCOUNT_FILE": "/keys/service-account.json",
                    "CHORUS_FCM_URL": "https://fcm.internal", "CHORUS_PUSH_CA_FILE": "/keys/ca.pem",
                    "CHORUS_PUSH_RETRY_DELAY_MS": "200", "CHORUS_PUSH_MAX_RETRY_DELAY_MS": "5000",
                    "CHORUS_PUSH_TIMEOUT_MS": "2500",
                ]) { $1 }
            ).server.push)
        #expect(
            both.apns?.productionURL == "https://apns.internal:8443"
                && both.apns?.sandboxURL == "https://sandbox.internal")
        #expect(both.fcm?.account.projectID == "photos-1" && both.fcm?.url == "https://fcm.internal")
        #expect(both.caFile == "/keys/ca.pem")
        #expect(both.retryDelay == .milliseconds(200) && both.maximumRetryDelay == .seconds(5))
        #expect(both.apns?.timeout == .milliseconds(2500) && both.fcm?.timeout == .milliseconds(2500))
        #expect(apnsOnly.apns?.timeout == .seconds(10), "ten seconds by default")

        let refusals: [([String: String], [String], String)] = [
            (
                ["CHORUS_APNS_KEY_FILE": "/keys/AuthKey.p8"], [],
                "needs CHORUS_APNS_KEY_ID, CHORUS_APNS_TEAM_ID, CHORUS_APNS_TOPIC"
            ),
            (
                Self.apns.merging(["CHORUS_APNS_KEY_FILE": "/keys/missing.p8"]) { $1 }, [],
                "CHORUS_APNS_KEY_FILE: cannot read /keys/missing.p8"
            ),
            (Self.apns.merging(["CHORUS_APNS_KEY_FILE": "/keys/other.pem"]) { $1 }, [], "is not an APNs signing key"),
            (
                Self.apns.merging(["CHORUS_APNS_URL": "http://apns.internal"]) { $1 }, [],
                "CHORUS_APNS_URL must be an https URL"
            ),
            (
                ["CHORUS_FCM_SERVICE_ACCOUNT_FILE": "/keys/ca.pem"], [],
                "CHORUS_FCM_SERVICE_ACCOUNT_FILE: /keys/ca.pem: the service account file is not a JSON object"
            ),
            (["CHORUS_APNS_URL": "https://apns.internal"], [], "CHORUS_APNS_URL is set, but neither"),
            (
                Self.apns.merging(["CHORUS_PUSH_CA_FILE": "/keys/none.pem"]) { $1 }, [],
                "CHORUS_PUSH_CA_FILE: cannot read"
            ),
            (
                Self.apns.merging(["CHORUS_PUSH_RETRY_DELAY_MS": "soon"]) { $1 }, [],
                "CHORUS_PUSH_RETRY_DELAY_MS must be a positive number"
            ),
            (Self.apns, ["--read-only"], "cannot go with --read-only"),
        ]
        for (environment, arguments, message) in refusals {
            do {
                _ = try pushOptions(environment, arguments)
                Issue.record("\(environment) \(arguments) was taken")
            } catch let error as ValidationError {
                #expect(error.message.contains(message), "\(environment): \(error.message)")
            }
        }
    }

    @Test("a value a setting cannot take is refused, naming the flag or the variable and what was wrong")
    func refusals() throws {
        let refusals: [([String], [String: String], String)] = [
            (["--port", "0"], [:], "--port must be from 1 to 65535"),
            ([], ["CHORUS_PORT": "http"], "CHORUS_PORT must be a number, not http"),
            (["--log-level", "loud"], [:], "must be one of trace, debug"),
            ([], ["CHORUS_LOG_LEVEL": "loud"], "not loud"),
            (
                ["--admin-console", "maybe"], [:],
                "--admin-console (or CHORUS_ADMIN_CONSOLE) must be on or off, not maybe"
            ),
            ([], ["CHORUS_ADMIN_CONSOLE": "yes"], "must be on or off, not yes"),
            (["--demo-events", "0"], [:], "--demo-events must be positive"),
            (["--demo-events", "10", "--read-only"], [:], "cannot go with --read-only"),
            (["--rate-limit", "nope=1,1s"], [:], "NAME is one of login-per-address"),
            ([], ["CHORUS_RATE_LIMITS": "rooms-per-user=0,1m"], "a burst of at least 1"),
            (["--live-streams-per-user", "0"], [:], "a positive number or off"),
            ([], ["CHORUS_TRUSTED_PROXIES": "proxy.internal"], "proxy.internal is neither"),
            (["--max-log-size", "1K"], [:], "--max-log-size must be at least 1M"),
            ([], ["CHORUS_MAX_LOG_SIZE": "big"], "CHORUS_MAX_LOG_SIZE: a whole number of bytes"),
            (["--erasure-delay", "0s"], [:], "must be a positive duration"),
            ([], ["CHORUS_ERASURE_DELAY": "soon"], "not soon"),
            (["--fan-out-limit", "0"], [:], "--fan-out-limit (or CHORUS_FAN_OUT_LIMIT) must be at least 1, not 0"),
            ([], ["CHORUS_FAN_OUT_LIMIT": "many"], "not many"),
            (["--kept-pages", "lots"], [:], "must be off or a whole number"),
            (["--cluster", "mysql://db/log"], [:], "--cluster (or CHORUS_CLUSTER_URL)"),
            (["--cluster", "postgresql://u@db/log", "--cluster-write-timeout", "0ms"], [:], "not 0ms"),
            (["--cluster", "postgresql://u@db/log", "--read-only"], [:], "--cluster cannot go with --read-only"),
            ([], ["CHORUS_WEBHOOK_URL": "ftp://x"], "must be an http or https URL"),
            ([], ["CHORUS_WEBHOOK_URL": "https://x.example"], "needs CHORUS_WEBHOOK_SECRET"),
            (
                [], ["CHORUS_WEBHOOK_URL": "https://x.example", "CHORUS_WEBHOOK_SECRET": "whsec_short"],
                "needs CHORUS_WEBHOOK_SECRET"
            ),
            (
                [],
                [
                    "CHORUS_WEBHOOK_URL": "https://x.example",
                    "CHORUS_WEBHOOK_SECRET": "whsec_MDEyMzQ1Njc4OWFiY2RlZg==", "CHORUS_WEBHOOK_TIMEOUT_MS": "-1",
                ],
                "CHORUS_WEBHOOK_TIMEOUT_MS must be a positive number of milliseconds, not -1"
            ),
        ]
        for (arguments, environment, message) in refusals {
            do {
                _ = try options(arguments, environment)
                Issue.record("\(arguments) \(environment) was taken")
            } catch let error as ValidationError {
                #expect(error.message.contains(message), "\(arguments) \(environment): \(error.message)")
            }
        }
    }
}
