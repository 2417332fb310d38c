import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: handles")
struct HandleAPITests {
    @Test(
        "a handle is chosen or made from the name, unique without regard to case, found by lookup and search, shown wherever the user is"
    )
    func chosenAndMade() async throws {
        try await withAPI { api in
            let ana = try await Self.register(api, "Ana Kim", handle: "Ana_Kim")
            #expect(ana.status == .created, "\(ana.object)")
            #expect(Self.handle(ana) == "ana_kim", "kept lowercase")
            let head = api.head
            for (name, handle, code) in [
                ("Ana Again", "ANA_KIM", "handle_taken"), ("Short", "ab", "invalid_handle"),
                ("Symbol", "ana!", "invalid_handle"), ("Long", String(repeating: "a", count: 31), "invalid_handle"),
                ("Hangul", "김민수", "invalid_handle"),
            ] {
                let refused = try await Self.register(api, name, handle: handle)
                #expect(refused.errorCode == code, "\(handle): \(refused.object)")
            }
            #expect(api.head == head, "refusals append nothing")

            // Made from the name: its letters and digits, then with the end of the id when taken.
            let bo = try await Self.register(api, "Bo Lee")
            #expect(Self.handle(bo) == "bo_lee")
            let secondBo = try await Self.register(api, "Bo Lee")
            let madeAgain = Self.handle(secondBo)
            let secondID = try #require((secondBo.object["user"] as? [String: Any])?["id"] as? String)
            #expect(madeAgain == "bo_lee_" + secondID.suffix(4), "\(madeAgain ?? "none")")
            let short = try await Self.register(api, "Jo")
            let shortID = try #require((short.object["user"] as? [String: Any])?["id"] as? String)
            #expect(Self.handle(short) == "jo_" + shortID.suffix(4), "too short alone")
            #expect(Self.handle(try await Self.register(api, "최유진")) == "user")
            #expect(Self.handle(try await Self.register(api, "최유진"))?.hasPrefix("user_") == true)

            let token = try #require(ana.object["token"] as? String)
            let anaID = try #require((ana.object["user"] as? [String: Any])?["id"] as? String)
            for typed in ["ana_kim", "ANA_Kim"] {
                let found = try await api.call(.get, "/v1/users/by-handle/\(typed)", token: token)
                #expect(found.status == .ok && found.object["id"] as? String == anaID, "\(found.object)")
                #expect(found.object["handle"] as? String == "ana_kim")
            }
            #expect(try await api.call(.get, "/v1/users/by-handle/nobody_here", token: token).status == .notFound)
            let searched = try await api.call(.get, "/v1/search/users?q=%40bo_l", token: token)
            #expect(searched.items.compactMap { $0["handle"] as? String }.sorted() == ["bo_lee", madeAgain])

            let post = try await api.call(.post, "/v1/posts", token: token, json: ["text": "hello"])
            #expect((post.object["author"] as? [String: Any])?["handle"] as? String == "ana_kim")
        }
    }

    @Test("a handle changes at once everywhere, frees the old one, and goes with a deleted account")
    func changedAndFreed() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "before the change")

            let changed = try await api.call(.patch, "/v1/me", token: ana.token, json: ["handle": "Ana_New"])
            #expect(changed.status == .ok && changed.object["handle"] as? String == "ana_new", "\(changed.object)")
            let shown = try await api.call(.get, "/v1/posts/\(post)", token: bo.token)
            #expect((shown.object["author"] as? [String: Any])?["handle"] as? String == "ana_new")
            #expect(try await api.call(.get, "/v1/users/by-handle/ana", token: bo.token).status == .notFound)

            let head = api.head
            let taken = try await api.call(.patch, "/v1/me", token: bo.token, json: ["handle": "ANA_NEW"])
            #expect(taken.status == .conflict && taken.errorCode == "handle_taken", "\(taken.object)")
            let invalid = try await api.call(.patch, "/v1/me", token: bo.token, json: ["handle": "no spaces"])
            #expect(invalid.status == .unprocessableContent && invalid.errorCode == "invalid_handle")
            #expect(api.head == head)
            let freed = try await api.call(.patch, "/v1/me", token: bo.token, json: ["handle": "ana"])
            #expect(freed.status == .ok && freed.object["handle"] as? String == "ana", "the old handle is free")
            let same = try await api.call(.patch, "/v1/me", token: bo.token, json: ["handle": "ana"])
            #expect(same.status == .ok, "one's own handle again")

            let deleted = try await api.call(
                .delete, "/v1/me", token: ana.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)
            #expect(try await api.call(.get, "/v1/users/by-handle/ana_new", token: bo.token).status == .notFound)
            let cy = try await Self.register(api, "Cy", handle: "ana_new")
            #expect(cy.status == .created && Self.handle(cy) == "ana_new", "a deleted account's handle is free")
        }
    }

    @Test("an account registered before handles has the one its id makes, as the log is folded, and may change it")
    func earlierAccounts() async throws {
        try await withTemporaryDirectory { directory in
            // A log an older Chorus wrote: a registration of schema version 1, which has no handle.
            let user = UserID.make()
            let data = DataDirectory(directory)
            let log = try data.openLog()
            var payload = PayloadWriter()
            for field in [user.rawValue, "old@example.com", "x", "Old Timer", "", ""] { payload.write(field) }
            try await log.withWriter {
                _ = try await log.append(
                    AppendRequest(
                        stream: StreamID(stringLiteral: "user-\(user.rawValue)"),
                        events: [NewEvent(type: "UserRegistered", schemaVersion: 1, payload: payload.bytes)],
                        actor: user.rawValue))
            }
            log.close()

            try await withAPI(in: directory) { api in
                let bo = try await api.register("Bo")
                let old = try await api.call(.get, "/v1/users/by-handle/u_\(user.rawValue)", token: bo.token)
                #expect(old.status == .ok && old.object["id"] as? String == user.rawValue, "\(old.object)")
                let taken = try await api.call(
                    .patch, "/v1/me", token: bo.token, json: ["handle": "u_\(user.rawValue)"])
                #expect(taken.errorCode == "handle_taken", "the decision state knows it too")
            }
        }
    }

    private static func register(_ api: APIFixture, _ name: String, handle: String? = nil) async throws
        -> APIFixture.Answer
    {
        var body: [String: Any] = [
            "email": "\(UUID().uuidString.prefix(8))@example.com", "password": "secret-password", "name": name,
        ]
        body["handle"] = handle
        return try await api.call(.post, "/v1/auth/register", json: body)
    }

    private static func handle(_ answer: APIFixture.Answer) -> String? {
        (answer.object["user"] as? [String: Any])?["handle"] as? String
    }
}
