import ChorusTestSupport
import Foundation
import Testing

@Suite("Full disk and full map")
struct FullDiskTests {
    @Test(
        "on a full disk writes answer 503 unavailable and the log says why, reads go on, the log stays valid, and writes resume once space is freed",
        .enabled(if: SmallFilesystem.canMount, "needs root, to mount a size-limited tmpfs for the data directory"))
    func fullDisk() async throws {
        try await withTemporaryDirectory { root in
            let disk = try SmallFilesystem(at: root + "/small", megabytes: 48)
            defer { disk.unmount() }
            let data = disk.path + "/data"
            // The server's log goes to the roomy disk, so that what it says about the full one can be read.
            let server = try await ServerProcess(
                data: data, logFile: root + "/serve.log", extraArguments: ["--no-rate-limits"])
            let ledger = try await PostLedger(signingUpOn: server)
            for number in 1...5 { #expect(try await ledger.post("before \(number)").status == 201) }

            // Full from the start, then full again after a little was freed: the second time the log has prepared
            // space of its own and the read models run out first (in the map LMDB writes in place, where running
            // out used to kill the process with SIGBUS).
            try disk.fill()
            for (round, freed) in [(1, 0), (2, 8)] {
                try disk.free(megabytes: freed)
                let refused = try await ledger.postUntilRefused("while full \(round)")
                #expect(refused.status == 503 && refused.headers["retry-after"] != nil)
                guard round == 1 else { continue }
                // Not a byte is left now (in round 2 the read models may stall with a little space still free).
                let png = Data(SampleImages.bytes("photo.png"))
                let upload = try await server.call(
                    "POST", "/v1/media", token: ledger.token, body: png, headers: ["Content-Type": "image/png"])
                #expect(
                    upload.status == 503 && upload.errorCode == "unavailable",
                    "an upload: \(upload.status) \(upload.json)")
            }
            for number in 1...5 {
                #expect(try await ledger.post("refused \(number)").errorCode == "unavailable", "writes stay refused")
            }

            try await ledger.expectReadsAnswer()
            #expect(server.standardError().contains("No space left on device"))
            try await expectVerifies(data, "on the full disk")

            // Space freed: the read models catch up (they retry every few seconds at most) and writes resume.
            try disk.free()
            let after = try await ledger.postUntilAccepted("after")
            try await ledger.expectEveryAcknowledgedPost(at: after)
            #expect(await server.stop() == 0)
            try await expectVerifies(data, "after the server stopped")
        }
    }

    @Test(
        "an import onto a disk too small for it stops with a clear error, not a crash; the log verifies, and the import resumes elsewhere",
        .enabled(if: SmallFilesystem.canMount, "needs root, to mount a size-limited tmpfs for the data directory"))
    func importOntoFullDisk() async throws {
        try await withTemporaryDirectory { root in
            let export = try await exportedDemoLog(in: root, events: 40_000, seed: 7)
            // LMDB reports a commit's write cut short by a full disk as an input/output error: the import allocates
            // its disk blocks ahead instead, so that running out is refused as what it is.
            let disk = try SmallFilesystem(at: root + "/small", megabytes: 16)
            defer { disk.unmount() }
            let data = disk.path + "/data"
            try dataDirectoryForImport(at: data, keysOf: root + "/a")
            let full = try await runChorus(["log", "import", "--data", data, export, "--batch-events", "1024"])
            #expect(full.status == 1, "exit \(full.status): \(full.standardError)")
            #expect(full.standardError.contains("No space left on device"), "\(full.standardError)")
            #expect(full.standardError.contains("the log now ends at position"), "\(full.standardError)")
            try await expectVerifies(data, "after the refused import")

            // Moved to a roomy disk, the same command finishes the import.
            try FileManager.default.copyItem(atPath: data, toPath: root + "/b")
            let resumed = try await runChorus(["log", "import", "--data", root + "/b", export])
            #expect(resumed.status == 0, "\(resumed.standardError)")
            try await expectVerifies(root + "/b", "after the resumed import")
        }
    }

    @Test(
        "a log at its maximum size refuses writes with 503 unavailable and says why, reads go on, the log stays valid, and a larger maximum lets writes resume"
    )
    func fullMap() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let small = try await ServerProcess(
                data: data, extraArguments: ["--no-rate-limits", "--max-log-size", "2M"])
            let ledger = try await PostLedger(signingUpOn: small)
            let refused = try await ledger.postUntilRefused("toward the maximum")
            #expect(refused.status == 503 && refused.headers["retry-after"] != nil)
            #expect(try await ledger.post("refused").errorCode == "unavailable", "writes stay refused")
            try await ledger.expectReadsAnswer()
            #expect(small.standardError().contains("MDB_MAP_FULL"))
            try await expectVerifies(data, "at the maximum")
            #expect(await small.stop() == 0)

            let larger = try await ServerProcess(
                data: data, extraArguments: ["--no-rate-limits", "--max-log-size", "64M"])
            ledger.server = larger
            let after = try await ledger.postUntilAccepted("after")
            try await ledger.expectEveryAcknowledgedPost(at: after)
            #expect(await larger.stop() == 0)
            try await expectVerifies(data, "after the server stopped")
        }
    }

    private func expectVerifies(_ data: String, _ when: String) async throws {
        let verify = try await runChorus(["log", "verify", "--data", data, "--json"])
        #expect(verify.status == 0, "\(when): \(verify.standardOutput) \(verify.standardError)")
    }
}

/// Posts of 2 KB by one user, sorted by their answers, so that what is in the log can be checked against them.
private final class PostLedger {
    var server: ServerProcess
    let token: String
    let user: String
    private(set) var acknowledged: [String] = []
    /// Appended, but answered 503 not_caught_up: sent while the read models stalled.
    private(set) var unanswered: [String] = []
    private static let caption = String(repeating: "y", count: 2_000)

    init(signingUpOn server: ServerProcess) async throws {
        self.server = server
        let signUp = try await server.call(
            "POST", "/v1/auth/register",
            json: ["email": "ana@example.com", "password": "secret-password", "name": "Ana"])
        token = try #require(signUp.json["token"] as? String)
        user = try #require((signUp.json["user"] as? [String: Any])?["id"] as? String)
    }

    func post(_ text: String) async throws -> ServerProcess.Answer {
        let answer = try await server.call(
            "POST", "/v1/posts", token: token, json: ["text": text, "caption": Self.caption])
        switch (answer.status, answer.errorCode) {
        case (201, _): acknowledged.append(text)
        case (503, "not_caught_up"): unanswered.append(text)
        case (503, "unavailable"): break
        default: Issue.record("\(text): \(answer.status) \(answer.json)")
        }
        return answer
    }

    /// Posts until one is refused as `unavailable`, and returns that answer.
    func postUntilRefused(_ label: String) async throws -> ServerProcess.Answer {
        for number in 1...3_000 {
            let answer = try await post("\(label) \(number)")
            if answer.errorCode == "unavailable" { return answer }
        }
        throw ServerError("\(label): 3,000 posts of 2 KB were all taken")
    }

    /// Posts until one is accepted, for 20 s at most, and returns that answer.
    func postUntilAccepted(_ label: String) async throws -> ServerProcess.Answer {
        for attempt in 1...100 {
            let answer = try await post("\(label) \(attempt)")
            if answer.status == 201 { return answer }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ServerError("\(label): writes did not resume within 20 s")
    }

    /// Reads answer, at the last position the read models applied.
    func expectReadsAnswer() async throws {
        let posts = try await server.call("GET", "/v1/users/\(user)/posts?limit=1", token: token)
        #expect(posts.status == 200 && posts.items.count == 1)
        #expect(try await server.call("GET", "/v1/feed/home", token: token).status == 200)
    }

    /// Every acknowledged post is in the user's posts as of `answer`'s position, once; no refused one is.
    func expectEveryAcknowledgedPost(at answer: ServerProcess.Answer) async throws {
        let position = try #require(answer.position)
        let texts = try await server.allItems(
            "/v1/users/\(user)/posts", token: token, headers: ["Chorus-Min-Position": String(position)]
        ).compactMap { $0["text"] as? String }
        #expect(Set(acknowledged).isSubset(of: texts))
        #expect(Set(texts).isSubset(of: acknowledged + unanswered), "a refused post was appended")
        #expect(texts.count == Set(texts).count)
    }
}

extension ServerProcess.Answer {
    /// The `code` of an API error body.
    fileprivate var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
}
