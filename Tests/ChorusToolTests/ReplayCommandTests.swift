import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus replay")
struct ReplayCommandTests {
    @Test("prints decoded events, filtered by position, time, type, stream and user; hashes are not shown")
    func filters() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            try #require(try await runChorus(["demo", "--data", data, "--events", "800", "--seed", "4"]).status == 0)
            func replay(_ arguments: [String]) async throws -> [[String: Any]] {
                let run = try await runChorus(["replay", "--data", data, "--json"] + arguments)
                try #require(run.status == 0, "\(run.standardError)")
                return try run.standardOutput.split(separator: "\n").map { try lastJSONLine(String($0)) }
            }
            let all = try await replay([])
            #expect(all.count >= 800)
            #expect(all.map { $0["position"] as? Int ?? 0 } == Array(1...all.count))
            let first = try #require(all.first)
            #expect(first["type"] as? String == "UserRegistered")
            let registered = try #require(first["data"] as? [String: Any])
            #expect(registered["passwordHash"] as? String == "(not shown)")
            let user = try #require(registered["user"] as? String)

            #expect(
                try await replay(["--from", "10", "--to", "19"]).map { $0["position"] as? Int ?? 0 } == Array(10...19))
            let posts = try await replay(["--type", "PostCreated"])
            #expect(!posts.isEmpty && posts.allSatisfy { $0["type"] as? String == "PostCreated" })
            #expect(posts.count == all.filter { $0["type"] as? String == "PostCreated" }.count)
            let stream = try #require(posts.first?["stream"] as? String)
            #expect(try await replay(["--stream", stream]).allSatisfy { $0["stream"] as? String == stream })

            // The user's own events and the events naming them (a follow of them, a message to them).
            let theirs = try await replay(["--user", user])
            #expect(
                theirs.count
                    == all.filter { event in
                        event["actor"] as? String == user
                            || (event["data"] as? [String: Any] ?? [:]).values.contains { $0 as? String == user }
                    }.count)
            #expect(theirs.contains { $0["actor"] as? String != user }, "someone else's event naming them")

            let time = try #require(all[400]["recordedAt"] as? String)
            let since = try await replay(["--since", time])
            #expect(since.first?["recordedAt"] as? String == time)
            #expect(since.count == all.filter { ($0["recordedAt"] as? String ?? "") >= time }.count)
            #expect(
                try await replay(["--until", time]).count
                    == all.filter { ($0["recordedAt"] as? String ?? "") < time }.count)

            let text = try await runChorus(["replay", "--data", data, "--to", "1"])
            #expect(text.standardOutput.hasPrefix("1  "))
            #expect(text.standardOutput.contains("UserRegistered"))
            let bad = try await runChorus(["replay", "--data", data, "--since", "last tuesday"])
            #expect(bad.status != 0)
            #expect(bad.standardError.contains("ISO 8601"))
        }
    }

    @Test("a profile edit shows the fields it changed, and its image as set or removed, as JSON and as text")
    func profileEdits() async throws {
        try await withTemporaryDirectory { root in
            let server = try await ServerProcess(data: root)
            let (user, token) = try await server.register(email: "min@example.com", name: "Min")
            let media = try await server.call(
                "POST", "/v1/media", token: token, body: pngBytes, headers: ["Content-Type": "image/png"])
            let image = try #require(media.json["id"] as? String)
            #expect(
                try await server.call("PATCH", "/v1/me", token: token, json: ["name": "김민지", "profileImage": image])
                    .status == 200)
            #expect(
                try await server.call("PATCH", "/v1/me", token: token, json: ["bio": "노을", "profileImage": NSNull()])
                    .status == 200)
            #expect(await server.stop() == 0)

            let json = try await runChorus(["replay", "--data", root, "--json", "--type", "ProfileEdited"])
            let edits = try json.standardOutput.split(separator: "\n").map { try lastJSONLine(String($0)) }
            try #require(edits.count == 2, "\(json.standardError)")
            let set = try #require(edits[0]["data"] as? [String: Any])
            #expect(set["name"] as? String == "김민지" && set["bio"] is NSNull && set["major"] is NSNull)
            #expect((set["profileImage"] as? [String: Any])?["set"] as? String == image)
            #expect(set["user"] as? String == user)
            let removed = try #require(edits[1]["data"] as? [String: Any])
            #expect(removed["bio"] as? String == "노을" && removed["name"] is NSNull)
            #expect(removed["profileImage"] as? String == "remove")

            let text = try await runChorus(["replay", "--data", root, "--type", "ProfileEdited"]).standardOutput
            let lines = text.split(separator: "\n")
            #expect(lines.count == 2)
            let first = "bio=null handle=null isPrivate=null major=null name=김민지 profileImage=set:\(image) user=\(user)"
            #expect(lines.first?.hasSuffix(first) == true, "\(lines)")
            let last = "bio=노을 handle=null isPrivate=null major=null name=null profileImage=remove user=\(user)"
            #expect(lines.last?.hasSuffix(last) == true)
        }
    }

    @Test("an event read by reflection shows its fields; one that does not decode says why, as JSON and as text")
    func reflectedAndUndecodable() async throws {
        try await withTemporaryDirectory { root in
            let server = try await ServerProcess(data: root)
            let (ana, token) = try await server.register(email: "ana@example.com", name: "Ana")
            let created = try await server.call("POST", "/v1/rooms", token: token, json: ["name": "Lobby"])
            #expect(created.status == 201)
            let room = try #require(created.json["id"] as? String)
            #expect(await server.stop() == 0)

            // A room's creation is not among the types written without reflection: its fields, sorted, and its
            // creator a user the event names.
            let json = try await runChorus(["replay", "--data", root, "--json", "--type", "RoomCreated"])
            #expect(json.status == 0, "\(json.standardError)")
            #expect(json.standardOutput.contains(#""data":{"creator":"\#(ana)","name":"Lobby","room":"\#(room)"}"#))
            let text = try await runChorus(["replay", "--data", root, "--type", "RoomCreated"]).standardOutput
            #expect(text.hasSuffix("creator=\(ana) name=Lobby room=\(room)\n"), "\(text)")
            let named = try await runChorus(["replay", "--data", root, "--user", ana, "--type", "RoomCreated"])
            #expect(named.standardOutput.split(separator: "\n").count == 1)

            // Without the data keys the sign-up's sealed fields cannot be opened: the event is printed with why.
            try FileManager.default.moveItem(atPath: root + "/keys", toPath: root + "/keys-elsewhere")
            let undecoded = try await runChorus(["replay", "--data", root, "--json", "--type", "UserRegistered"])
            #expect(undecoded.status == 0, "\(undecoded.standardError)")
            let line = try lastJSONLine(undecoded.standardOutput)
            #expect(line["data"] == nil)
            #expect((line["problem"] as? String)?.contains("there is no data key for user \(ana)") == true, "\(line)")
            let plain = try await runChorus(["replay", "--data", root, "--type", "UserRegistered"]).standardOutput
            #expect(plain.contains("(does not decode: "), "\(plain)")
            #expect(plain.contains("there is no data key for user \(ana)"))
        }
    }

    @Test("a replay of many batches prints every event once, in log order, as JSON and as text")
    func manyBatchesInOrder() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            // Three batches of up to 8,192 events: each is formatted while the next is read.
            try #require(try await runChorus(["demo", "--data", data, "--events", "20000", "--seed", "4"]).status == 0)
            let json = try await runChorus(["replay", "--data", data, "--json"])
            try #require(json.status == 0, "\(json.standardError)")
            let positions = try json.standardOutput.split(separator: "\n").map {
                try lastJSONLine(String($0))["position"] as? Int ?? 0
            }
            #expect(positions.count > 2 * 8_192)
            #expect(positions == Array(1...positions.count))
            let text = try await runChorus(["replay", "--data", data])
            try #require(text.status == 0, "\(text.standardError)")
            let textPositions = text.standardOutput.split(separator: "\n").map {
                Int($0.prefix { $0 != " " }) ?? 0
            }
            #expect(textPositions == positions)

            // Standard output that cannot take the lines (a full disk): an error that says why, not a crash.
            let full = try await ChildProcess.run(
                "/bin/sh",
                ["-c", #"exec "$0" replay --data "$1" --json > /dev/full"#, chorusExecutableURL().path, data])
            #expect(full.status == 1)
            #expect(
                full.errors.contains("Error: cannot write the events to standard output: No space left on device\n"),
                "\(full.errors)")
        }
    }

    @Test("--follow prints events as a server appends them")
    func follow() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let server = try await ServerProcess(data: data, extraArguments: ["--demo-events", "500"])
            let head = try #require(
                try await server.call("GET", "/health", token: server.adminToken).json["position"] as? Int)
            let follower = try ChildProcess(
                try chorusExecutableURL().path,
                ["replay", "--data", data, "--json", "--follow", "--from", String(head + 1)], output: .pipe)
            let output = try #require(follower.output)

            let login = try await server.call(
                "POST", "/v1/auth/login", json: ["email": "user2@demo.chorus", "password": "password"])
            let token = try #require(login.json["token"] as? String)
            let post = try await server.call("POST", "/v1/posts", token: token, json: ["text": "seen live by replay"])
            let position = try #require(post.position)

            // Lines arrive as they are appended: the login's session, then the post.
            let printed = PipeText(output)
            var received = ""
            try await eventually("replay's line of the post", timeout: .seconds(20), every: .milliseconds(50)) {
                received = printed.read()
                return received.contains("seen live by replay")
            }
            let lines = try received.split(separator: "\n").map { try lastJSONLine(String($0)) }
            #expect(lines.first?["type"] as? String == "SessionStarted")
            let posted = try #require(lines.first { $0["type"] as? String == "PostCreated" })
            #expect(posted["position"] as? Int == Int(position))
            #expect(await server.stop() == 0)
        }
    }

    @Test("time travel: the read models as of a past position, served read-only; every write answers 403")
    func timeTravel() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let past = root + "/past"
            let server = try await ServerProcess(data: data, extraArguments: ["--demo-events", "800"])
            let login = try await server.call(
                "POST", "/v1/auth/login", json: ["email": "user1@demo.chorus", "password": "password"])
            let token = try #require(login.json["token"] as? String)
            let user = try #require((login.json["user"] as? [String: Any])?["id"] as? String)
            let before = try await server.call("POST", "/v1/posts", token: token, json: ["text": "before the incident"])
            let position = try #require(before.position)
            let incident = try await server.call("POST", "/v1/posts", token: token, json: ["text": "the incident"])
            #expect(incident.status == 201)

            // Built beside the running server.
            let travel = try await runChorus([
                "replay", "--data", data, "--to", String(position), "--into", past, "--json",
            ])
            #expect(travel.status == 0, "\(travel.standardError)")
            #expect(try lastJSONLine(travel.standardOutput)["position"] as? Int == Int(position))
            #expect(await server.stop() == 0)

            let served = try await ServerProcess(data: past, extraArguments: ["--read-only"])
            let posts = try await served.call("GET", "/v1/users/\(user)/posts?limit=100", token: token)
            #expect(posts.status == 200)
            #expect(posts.position == position)
            let texts = posts.items.compactMap { $0["text"] as? String }
            #expect(texts.contains("before the incident"))
            #expect(!texts.contains("the incident"))
            let health = try await served.call("GET", "/health", token: served.adminToken)
            #expect(health.json["position"] as? Int == Int(position))

            for (method, path, body) in [
                ("POST", "/v1/posts", ["text": "after"] as [String: Any]),
                ("POST", "/v1/auth/login", ["email": "user1@demo.chorus", "password": "password"]),
                ("PATCH", "/v1/me", ["name": "Changed"]),
                ("PUT", "/v1/users/\(user)/follow", [:]),
            ] {
                let answer = try await served.call(method, path, token: token, json: body)
                #expect(answer.status == 403, "\(method) \(path)")
                #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "forbidden")
            }
            #expect(await served.stop() == 0)

            let exists = try await runChorus(["replay", "--data", data, "--to", "5", "--into", past])
            #expect(exists.status == 1)
            #expect(exists.standardError.contains("already exists"))
        }
    }
}
