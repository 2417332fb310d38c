import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus serve: options")
struct ServeOptionsTests {
    @Test("--kept-pages takes a size or off, and anything else is refused before the server opens the data directory")
    func keptPages() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/data"
            let flag = try await runChorus(["serve", "--data", data, "--kept-pages", "lots"])
            #expect(flag.status != 0)
            #expect(flag.standardError.contains("--kept-pages (or CHORUS_KEPT_PAGES) must be off or a whole number"))
            let variable = try await runChorus(["serve", "--data", data], environment: ["CHORUS_KEPT_PAGES": "-5M"])
            #expect(variable.status != 0)
            #expect(variable.standardError.contains("not -5M"))
            #expect(!FileManager.default.fileExists(atPath: data), "nothing was opened")
        }
    }

    @Test(
        "--rate-limit, CHORUS_RATE_LIMITS, --live-streams-per-user and --trusted-proxies refuse what they cannot take, naming it"
    )
    func limits() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/data"
            let refusals: [([String], [String: String], String)] = [
                (["--rate-limit", "nope=1,1s"], [:], "NAME is one of login-per-address"),
                (["--rate-limit", "rooms-per-user=0,1m"], [:], "a burst of at least 1"),
                (["--rate-limit", "rooms-per-user=5,often"], [:], "such as rooms-per-user=10,5m"),
                (["--rate-limit", "rooms-per-user"], [:], "NAME=BURST,EVERY"),
                ([], ["CHORUS_RATE_LIMITS": "rooms-per-user=5,1m reports=1,1s"], "reports=1,1s"),
                (["--live-streams-per-user", "0"], [:], "a positive number or off"),
                (["--trusted-proxies", "10.0.0.0/8,proxy.internal"], [:], "proxy.internal is neither"),
            ]
            for (arguments, environment, message) in refusals {
                let run = try await runChorus(["serve", "--data", data] + arguments, environment: environment)
                #expect(run.status != 0, "\(arguments) \(environment)")
                #expect(run.standardError.contains(message), "\(arguments): \(run.standardError)")
            }
            #expect(!FileManager.default.fileExists(atPath: data), "nothing was opened")
        }
    }
}
