import ChorusDomain
import ChorusFixtures
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("Account erasure")
struct AccountErasureTests {
    /// Unique strings the deleted account writes through every route that takes personal data, one per route so that
    /// a leak names its route.
    struct Markers {
        /// The route each marker goes through, and the word in it that names the route.
        static let routes = [
            ("sign-up name", "Name"), ("profile name", "Rename"), ("profile major", "Major"), ("profile bio", "Bio"),
            ("post caption", "Caption"), ("post text", "Text"), ("post edit", "Edited"), ("comment", "Comment"),
            ("message", "Message"), ("media bytes", "Media"), ("idempotent retry", "Retried"), ("alt text", "Alt"),
            ("alt text edit", "Realt"), ("device token", "Device"), ("muted word", "Muted"),
        ]
        let tag = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")

        /// The marker of the route named by `word`.
        func callAsFunction(_ word: String) -> String { "marker\(word)\(tag)" }

        var email: String { "marker-email-\(tag)@example.com" }
        /// A handle's marker: lowercase, at most 30 characters.
        var handle: String { "h" + tag.prefix(29) }

        /// Each marker as the bytes searched for; the e-mail as the part before the `@`, and as the key the decision
        /// state finds an account by (a hash that still tells whether the e-mail had an account).
        var all: [(route: String, bytes: [UInt8])] {
            ([
                ("sign-up e-mail", "marker-email-\(tag)"), ("sign-up e-mail key", Validate.emailKey(email)),
                ("profile handle", handle),
            ]
                + Self.routes.map { ($0.0, self($0.1)) }).map { ($0.0, Array($0.1.utf8)) }
        }
    }

    @Test(
        "a deleted account's marker strings, written through every route that takes personal data, are in no byte of any file of the data directory nor of an export once the erasure delay is out; verify, replay and an offline rebuild work, and the rebuild equals the live read models"
    )
    func noMarkerSurvives() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let markers = Markers()
            // Webhooks that fail, so that the outbox holds the account's data while the erasure runs.
            let receiver = WebhookReceiver(port: try LoopbackPort.free(), mode: .status(500))
            try await receiver.start()
            let server = try await ServerProcess(
                data: data, extraArguments: ["--erasure-delay", "1s"],
                environment: [
                    "CHORUS_ADMIN_TOKEN": "admin", "CHORUS_WEBHOOK_URL": "http://127.0.0.1:\(receiver.port)/hook",
                    "CHORUS_WEBHOOK_SECRET": WebhookDeliveryTests.secret, "CHORUS_WEBHOOK_RETRY_DELAY_MS": "60000",
                ])
            func register(_ email: String, _ name: String) async throws -> (id: String, token: String) {
                try await server.register(email: email, name: name)
            }
            func id(_ answer: ServerProcess.Answer) throws -> String { try #require(answer.json["id"] as? String) }

            let ana = try await register("ana@example.com", "Ana")
            let gone = try await register(markers.email, markers("Name"))

            // Everything the account writes, and what others do with it.
            let png = Data(SampleImages.png(withText: markers("Media")))
            let media = try await server.call(
                "POST", "/v1/media", token: gone.token, body: png, headers: ["Content-Type": "image/png"])
            #expect(media.status == 201, "\(media.json)")
            let profile = try await server.call(
                "PATCH", "/v1/me", token: gone.token,
                json: [
                    "name": markers("Rename"), "major": markers("Major"), "bio": markers("Bio"),
                    "profileImage": id(media), "handle": markers.handle,
                ])
            #expect(profile.status == 200, "\(profile.json)")
            let post = try await server.call(
                "POST", "/v1/posts", token: gone.token,
                json: [
                    "caption": markers("Caption"), "text": markers("Text"),
                    "media": [["id": id(media), "alt": markers("Alt")]],
                ])
            #expect(post.status == 201, "\(post.json)")
            let edit = try await server.call(
                "PATCH", "/v1/posts/\(id(post))", token: gone.token,
                json: ["text": markers("Edited"), "media": [["id": id(media), "alt": markers("Realt")]]])
            #expect(edit.status == 200, "\(edit.json)")
            let device = try await server.call(
                "POST", "/v1/me/devices", token: gone.token, json: ["platform": "fcm", "token": markers("Device")])
            #expect(device.status == 201, "\(device.json)")
            let muted = try await server.call(
                "POST", "/v1/me/muted-words", token: gone.token, json: ["word": markers("Muted")])
            #expect(muted.status == 201, "\(muted.json)")
            let anasPost = try await server.call("POST", "/v1/posts", token: ana.token, json: ["text": "hello"])
            let comment = try await server.call(
                "POST", "/v1/posts/\(id(anasPost))/comments", token: gone.token, json: ["text": markers("Comment")])
            #expect(comment.status == 201, "\(comment.json)")
            let message = try await server.call(
                "POST", "/v1/messages", token: gone.token, json: ["to": ana.id, "text": markers("Message")])
            #expect(message.status == 201, "\(message.json)")
            for _ in 0..<2 {
                let retried = try await server.call(
                    "POST", "/v1/posts", token: gone.token, json: ["text": markers("Retried")],
                    headers: ["Idempotency-Key": "retry-\(markers.tag)"])
                #expect(retried.status == 201, "\(retried.json)")
            }
            let postID = try id(post)
            for call in [
                ("PUT", "/v1/users/\(gone.id)/follow"), ("PUT", "/v1/posts/\(postID)/like"),
                ("PUT", "/v1/users/\(ana.id)/follow"),
            ] {
                let token = call.1.contains(ana.id) ? gone.token : ana.token
                #expect(try await server.call(call.0, call.1, token: token).status == 200)
            }
            #expect(
                try await server.call(
                    "POST", "/v1/posts/\(id(post))/comments", token: ana.token, json: ["text": "nice"]
                ).status == 201)
            #expect(
                try await server.call("POST", "/v1/messages", token: ana.token, json: ["to": gone.id, "text": "hi"])
                    .status == 201)
            try await receiver.waitForRequests(moreThan: 0)

            // The scan finds what is there in plain: the read models hold the account's fields before the deletion.
            let before = try Self.markersFound(under: data, markers)
            for route in [
                "sign-up e-mail key", "profile name", "profile bio", "post caption", "post edit", "comment", "message",
                "device token", "profile handle", "muted word",
            ] {
                #expect(before.contains { $0.route == route }, "the scan finds the \(route) before the deletion")
            }

            let deletion = try await server.call(
                "DELETE", "/v1/me", token: gone.token, json: ["password": "secret-password"])
            #expect(deletion.status == 202, "\(deletion.json)")
            try await Self.waitForErasure(of: gone.id, on: server)

            // While the server runs, after it stopped, and in an export of the log: no marker anywhere.
            let whileServing = try Self.markersFound(under: data, markers).filter { !Self.isKnownResidue($0) }
            #expect(whileServing.isEmpty, "\(whileServing)")
            #expect(await server.stop() == 0)
            await receiver.stop()
            let stopped = try Self.markersFound(under: data, markers).filter { !Self.isKnownResidue($0) }
            #expect(stopped.isEmpty, "\(stopped)")
            let export = root + "/export.jsonl"
            let exported = try await runChorus(["log", "export", "--data", data, "--output", export])
            #expect(exported.status == 0, "\(exported.standardError)")
            let inExport = try Self.markersFound(in: export, markers)
            #expect(inExport.isEmpty, "\(inExport)")

            // The log is whole, and everything built from it works and agrees.
            let verify = try await runChorus(["log", "verify", "--data", data])
            #expect(verify.status == 0, "\(verify.standardOutput) \(verify.standardError)")
            let replay = try await runChorus(["replay", "--data", data, "--json"])
            #expect(replay.status == 0, "\(replay.standardError)")
            #expect(replay.standardOutput.contains("AccountDeleted"))
            let live = try dumpReadModels(atDirectory: data + "/projections")
            let rebuild = try await runChorus(["projections", "rebuild", "--data", data])
            #expect(rebuild.status == 0, "\(rebuild.standardError)")
            #expect(try dumpReadModels(atDirectory: data + "/projections") == live)
            let rebuilt = try Self.markersFound(under: data, markers).filter { !Self.isKnownResidue($0) }
            #expect(rebuilt.isEmpty, "\(rebuilt)")
        }
    }

    @Test("an outbox left from when webhooks were configured loses a deleted account's webhooks all the same")
    func dormantOutbox() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let markers = Markers()
            let receiver = WebhookReceiver(port: try LoopbackPort.free(), mode: .status(500))
            try await receiver.start()
            var server = try await ServerProcess(
                data: data,
                environment: [
                    "CHORUS_WEBHOOK_URL": "http://127.0.0.1:\(receiver.port)/hook",
                    "CHORUS_WEBHOOK_SECRET": WebhookDeliveryTests.secret, "CHORUS_WEBHOOK_RETRY_DELAY_MS": "60000",
                ])
            var tokens: [String] = []
            var ids: [String] = []
            for (email, name) in [("ana@example.com", "Ana"), (markers.email, markers("Name"))] {
                let answer = try await server.call(
                    "POST", "/v1/auth/register", json: ["email": email, "password": "secret-password", "name": name])
                tokens.append(try #require(answer.json["token"] as? String))
                ids.append(try #require((answer.json["user"] as? [String: Any])?["id"] as? String))
            }
            let message = try await server.call(
                "POST", "/v1/messages", token: tokens[1], json: ["to": ids[0], "text": markers("Message")])
            #expect(message.status == 201)
            try await receiver.waitForRequests(moreThan: 0)
            #expect(await server.stop() == 0)
            await receiver.stop()
            let pending = try Self.markersFound(in: data + "/webhooks/data.mdb", markers)
            #expect(pending.contains { $0.route == "message" }, "the outbox holds the message: \(pending)")

            // Served again without webhooks: the outbox stays, unsent, until the account is deleted.
            server = try await ServerProcess(
                data: data, extraArguments: ["--erasure-delay", "1s"], environment: ["CHORUS_ADMIN_TOKEN": "admin"])
            let deletion = try await server.call(
                "DELETE", "/v1/me", token: tokens[1], json: ["password": "secret-password"])
            #expect(deletion.status == 202)
            try await Self.waitForErasure(of: ids[1], on: server)
            #expect(await server.stop() == 0)
            let left = try Self.markersFound(under: data, markers).filter { !Self.isKnownResidue($0) }
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test(
        "an erasure waits while another process has the data keys open, and completes once it closes them; every other account's data reads whole after it, and after a restart"
    )
    func keysOpenElsewhere() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let arguments = ["--erasure-delay", "1s"]
            var server = try await ServerProcess(
                data: data, extraArguments: arguments, environment: ["CHORUS_ADMIN_TOKEN": "admin"])
            let ana = try await server.register(email: "ana@example.com", name: "Ana")
            let gone = try await server.register(email: "gone@example.com", name: "Gone")
            let post = try await server.call("POST", "/v1/posts", token: ana.token, json: ["text": "kept text"])
            let postID = try #require(post.json["id"] as? String)

            // A replay following the log has the data keys open until it is stopped: it has opened them once it has
            // printed the post's text, which it read with Ana's key.
            let follower = try ChildProcess(
                try chorusExecutableURL().path, ["replay", "--data", data, "--json", "--follow"], output: .pipe)
            let printed = PipeText(try #require(follower.output))
            try await eventually("replay's line of the post", timeout: .seconds(30), every: .milliseconds(50)) {
                printed.read().contains("kept text")
            }
            let deletion = try await server.call(
                "DELETE", "/v1/me", token: gone.token, json: ["password": "secret-password"])
            #expect(deletion.status == 202)
            try await eventually("the erasure waiting for the key store", timeout: .seconds(30)) {
                server.standardError().contains("an account erasure waits for a store to be closed")
            }
            let waiting = try await server.call("GET", "/v1/admin/erasures", token: "admin")
            #expect(waiting.items.first { $0["userId"] as? String == gone.id }?["completedAt"] is NSNull)

            follower.terminate()
            _ = await follower.exited()
            try await Self.waitForErasure(of: gone.id, on: server)

            for restarted in [false, true] {
                if restarted {
                    #expect(await server.stop() == 0)
                    server = try await ServerProcess(
                        data: data, extraArguments: arguments, environment: ["CHORUS_ADMIN_TOKEN": "admin"])
                }
                let profile = try await server.call("GET", "/v1/users/\(ana.id)", token: ana.token)
                #expect(profile.json["name"] as? String == "Ana", "restarted: \(restarted), \(profile.json)")
                let read = try await server.call("GET", "/v1/posts/\(postID)", token: ana.token)
                #expect(read.json["text"] as? String == "kept text", "restarted: \(restarted), \(read.json)")
                let newcomer = try await server.register(email: "new\(restarted)@example.com", name: "New")
                let theirs = try await server.call("GET", "/v1/users/\(newcomer.id)", token: ana.token)
                #expect(theirs.json["name"] as? String == "New", "restarted: \(restarted), \(theirs.json)")
            }
            #expect(await server.stop() == 0)
            let verify = try await runChorus(["log", "verify", "--data", data])
            #expect(verify.status == 0, "\(verify.standardOutput) \(verify.standardError)")
        }
    }

    /// Returns once `GET /v1/admin/erasures` shows `user`'s erasure completed; fails after 30 s.
    static func waitForErasure(of user: String, on server: ServerProcess) async throws {
        var erasure: [String: Any] = [:]
        for _ in 0..<300 {
            let listed = try await server.call("GET", "/v1/admin/erasures", token: "admin")
            erasure = listed.items.first { $0["userId"] as? String == user } ?? [:]
            if erasure["completedAt"] is String { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the erasure did not complete within 30 s: \(erasure)")
    }

    /// The one trace an erasure leaves, by design: the e-mail's key — a hash, never the e-mail — in freed pages of the
    /// log's own file, where the decision state kept it until the deletion took it out (`log verify` shows it is out).
    /// The log cannot be compacted under a running writer; the pages are reused as the log grows.
    static func isKnownResidue(_ found: (route: String, file: String)) -> Bool {
        found.route == "sign-up e-mail key" && found.file.hasSuffix("/log/data.mdb")
    }

    /// Which markers are in any file under `directory`, and where.
    static func markersFound(under directory: String, _ markers: Markers) throws -> [(route: String, file: String)] {
        var found: [(route: String, file: String)] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            found += try markersFound(in: path, markers)
        }
        return found
    }

    /// Which markers are in the bytes of the file at `path`. Reads its data extents only: the read models' files are
    /// sparse, gigabytes long, and a hole is zero bytes, which hold no marker.
    static func markersFound(in path: String, _ markers: Markers) throws -> [(route: String, file: String)] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ServerError("cannot open \(path): errno \(errno)") }
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        let longest = markers.all.map(\.bytes.count).max() ?? 0
        var found = Set<String>()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var start = off_t(0)
        while start < size {
            // Where the next data begins and ends; without SEEK_DATA support, the whole file is data.
            let dataStart = lseek(descriptor, start, Self.seekData)
            if dataStart < 0 && errno == ENXIO { break }
            let from = dataStart < 0 ? start : dataStart
            let hole = lseek(descriptor, from, Self.seekHole)
            let to = hole < 0 ? size : hole
            // Chunks that overlap by a marker's length, so that none is missed across a boundary.
            var offset = from
            while offset < to {
                let count: Int = chunk.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress, min(buffer.count, Int(to - offset)), offset)
                }
                guard count > 0 else { throw ServerError("cannot read \(path) at \(offset): errno \(errno)") }
                chunk.withUnsafeBytes { buffer in
                    let read = UnsafeRawBufferPointer(rebasing: buffer[..<count])
                    for marker in markers.all where contains(marker.bytes, in: read) { found.insert(marker.route) }
                }
                offset += off_t(count)
                if offset < to { offset -= off_t(longest - 1) }
            }
            start = to
        }
        return markers.all.filter { found.contains($0.route) }.map { ($0.route, path) }
    }

    /// lseek(2)'s SEEK_DATA and SEEK_HOLE on Linux, which the Glibc module leaves out.
    static let seekData: Int32 = 3
    static let seekHole: Int32 = 4

    /// Whether `needle` is in `haystack`: memchr to each place its first byte is, then a comparison.
    static func contains(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first, let base = haystack.baseAddress, haystack.count >= needle.count else {
            return false
        }
        let last = haystack.count - needle.count
        var offset = 0
        while offset <= last {
            guard let hit = memchr(base + offset, Int32(first), last - offset + 1) else { return false }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + at, needle, needle.count) == 0 { return true }
            offset = at + 1
        }
        return false
    }
}
