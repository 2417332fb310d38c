import ChorusTestSupport
import Foundation
import Synchronization
import Testing

@Suite("chorus log backup")
struct LogBackupCommandTests {
    @Test("a backup taken while a server appends is sound, holds every write acknowledged before it began, and serves")
    func hotBackup() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let backup = root + "/backup"
            // No limit on writes: the writer posts for as long as the backup takes, minutes on a loaded machine.
            let server = try await ServerProcess(
                data: data, extraArguments: ["--demo-events", "1500", "--no-rate-limits"])
            let login = try await server.call(
                "POST", "/v1/auth/login", json: ["email": "user0@demo.chorus", "password": "password"])
            let token = try #require(login.json["token"] as? String)
            let user = try #require((login.json["user"] as? [String: Any])?["id"] as? String)

            // A writer that posts until told to stop, remembering what was acknowledged and where.
            let acknowledged = Mutex<[(text: String, position: UInt64)]>([])
            let stop = Atomic<Bool>(false)
            // Why the writer stopped early, if it did: the waits below say so at once rather than time out.
            let stopped = Mutex<String?>(nil)
            let writer = Task {
                var count = 0
                do {
                    while !stop.load(ordering: .relaxed) {
                        count += 1
                        let text = "written during the backup test, number \(count)"
                        let answer = try await server.call("POST", "/v1/posts", token: token, json: ["text": text])
                        guard answer.status == 201, let position = answer.position else {
                            throw ServerError("a post was refused: \(answer.status) \(answer.json)")
                        }
                        acknowledged.withLock { $0.append((text, position)) }
                    }
                } catch {
                    stopped.withLock { $0 = "\(error)" }
                    throw error
                }
            }
            let acknowledgedCount: @Sendable () throws -> Int = {
                if let reason = stopped.withLock({ $0 }) { throw ServerError("the writer stopped: \(reason)") }
                return acknowledged.withLock { $0.count }
            }
            try await eventually("20 posts acknowledged", timeout: .seconds(120), every: .milliseconds(20)) {
                try acknowledgedCount() >= 20
            }
            let before = acknowledged.withLock { $0 }
            let run = try await runChorus(["log", "backup", "--data", data, "--to", backup, "--json"])
            let during = acknowledged.withLock { $0.count }
            try await eventually("10 more posts acknowledged", timeout: .seconds(120), every: .milliseconds(20)) {
                try acknowledgedCount() >= during + 10
            }
            stop.store(true, ordering: .relaxed)
            try await writer.value
            #expect(await server.stop() == 0)
            try #require(run.status == 0, "stderr: \(run.standardError)")
            let report = try lastJSONLine(run.standardOutput)
            let head = try #require(report["head"] as? Int)
            let lastBefore = try #require(before.last)
            #expect(UInt64(head) >= lastBefore.position)
            #expect(
                !FileManager.default.fileExists(atPath: backup + "/projections"), "read models are rebuilt, not copied")

            let verify = try await runChorus(["log", "verify", "--data", backup, "--json"])
            #expect(verify.status == 0, "\(verify.standardOutput) \(verify.standardError)")
            #expect(try lastJSONLine(verify.standardOutput)["head"] as? Int == head)

            // Restored: served as it is, with the same session key (the token from before still works).
            let restored = try await ServerProcess(data: backup)
            // Every page: the writer may have posted over a hundred times before the backup began.
            let posts = try await restored.allItems(
                "/v1/users/\(user)/posts", token: token, headers: ["Chorus-Min-Position": String(head)])
            let texts = Set(posts.compactMap { $0["text"] as? String })
            for write in before { #expect(texts.contains(write.text), "missing \(write.text)") }
            // Nothing written after the backup had returned: at most the one post in flight as it did.
            let numbers = texts.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            #expect(!numbers.isEmpty && numbers.allSatisfy { $0 <= during + 1 }, "\(numbers.sorted()) after \(during)")
            #expect(await restored.stop() == 0)
        }
    }

    @Test("an existing target is refused, and a failed backup leaves nothing behind")
    func refusals() async throws {
        try await withTemporaryDirectory { root in
            let made = try await runChorus(["demo", "--data", root + "/data", "--events", "300"])
            try #require(made.status == 0)
            try FileManager.default.createDirectory(atPath: root + "/taken", withIntermediateDirectories: false)
            let taken = try await runChorus(["log", "backup", "--data", root + "/data", "--to", root + "/taken"])
            #expect(taken.status == 1)
            #expect(taken.standardError.contains("already exists"))
            let missing = try await runChorus(["log", "backup", "--data", root + "/none", "--to", root + "/b"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains("no event log"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["data", "taken"])
        }
    }
}
