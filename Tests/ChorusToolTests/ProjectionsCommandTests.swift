import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus projections")
struct ProjectionsCommandTests {
    @Test("offline: status of a stopped data directory, a rebuild, and a rebuild refused while a server runs")
    func offline() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            try #require(try await runChorus(["demo", "--data", data, "--events", "800"]).status == 0)
            let status = try await runChorus(["projections", "status", "--data", data, "--json", "--interval", "0.1"])
            #expect(status.status == 0, "\(status.standardError)")
            let before = try lastJSONLine(status.standardOutput)
            let head = try #require(before["head"] as? Int)
            #expect(head >= 800)
            #expect(before["position"] as? Int == head)
            #expect(before["lag"] as? Int == 0)
            #expect(before["serving"] as? Bool == false)

            let generation = try FileManager.default.destinationOfSymbolicLink(atPath: data + "/projections")
            let rebuild = try await runChorus(["projections", "rebuild", "--data", data, "--json"])
            #expect(rebuild.status == 0, "\(rebuild.standardError)")
            #expect(try lastJSONLine(rebuild.standardOutput)["position"] as? Int == head)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: data + "/projections") != generation)
            #expect(!FileManager.default.fileExists(atPath: data + "/" + generation), "the old generation is removed")

            let server = try await ServerProcess(data: data)
            let refused = try await runChorus(["projections", "rebuild", "--data", data])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("--server"), "\(refused.standardError)")
            let serving = try await runChorus(["projections", "status", "--data", data, "--json", "--interval", "0.1"])
            #expect(try lastJSONLine(serving.standardOutput)["serving"] as? Bool == true)
            #expect(await server.stop() == 0)
        }
    }

    @Test("online: a rebuild through the admin route is followed to its end; status shows it; a wrong token is refused")
    func online() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let admin = ["CHORUS_ADMIN_TOKEN": "an admin token for the test"]
            let server = try await ServerProcess(
                data: data, extraArguments: ["--demo-events", "1500"], environment: admin)
            let rebuild = try await runChorus(
                ["projections", "rebuild", "--server", server.base, "--json"], environment: admin)
            #expect(rebuild.status == 0, "\(rebuild.standardOutput) \(rebuild.standardError)")
            let rebuilt = try lastJSONLine(rebuild.standardOutput)
            #expect(rebuilt["online"] as? Bool == true)
            #expect(rebuilt["position"] as? Int ?? 0 >= 1500)

            let status = try await runChorus(
                ["projections", "status", "--server", server.base, "--json"], environment: admin)
            #expect(status.status == 0)
            let projection = try lastJSONLine(status.standardOutput)
            #expect(projection["state"] as? String == "live")
            #expect((projection["lastRebuild"] as? [String: Any])?["outcome"] as? String == "finished")
            let text = try await runChorus(["projections", "status", "--server", server.base], environment: admin)
            #expect(text.standardOutput.contains("readModels: live, position"), "\(text.standardOutput)")

            let wrong = try await runChorus(
                ["projections", "status", "--server", server.base], environment: ["CHORUS_ADMIN_TOKEN": "wrong"])
            #expect(wrong.status == 1)
            #expect(wrong.standardError.contains("refused the admin token"), "\(wrong.standardError)")
            let none = try await runChorus(
                ["projections", "status", "--server", server.base], environment: ["CHORUS_ADMIN_TOKEN": ""])
            #expect(none.status == 1)
            #expect(none.standardError.contains("set CHORUS_ADMIN_TOKEN"))
            #expect(await server.stop() == 0)
        }
    }
}
