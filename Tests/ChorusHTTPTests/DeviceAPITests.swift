import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: devices and push settings")
struct DeviceAPITests {
    /// An APNs token as an iPhone gives it: 32 bytes as 64 hexadecimal digits.
    static func apnsToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    @Test(
        "a token registers one device, again the same one (200), never shown; another account's registration moves it; forgetting is 204 then 404"
    )
    func devices() async throws {
        try await withTemporaryDirectory { directory in
            try await withAPI(in: directory) { api in
                let ana = try await api.register("Ana")
                let bo = try await api.register("Bo")
                let token = Self.apnsToken()
                let registration: [String: Any] = [
                    "platform": "apns", "token": token, "environment": "sandbox", "locale": "ko-KR",
                ]

                let first = try await api.call(.post, "/v1/me/devices", token: ana.token, json: registration)
                #expect(first.status == .created, "\(first.object)")
                let id = try #require(first.object["id"] as? String)
                #expect(first.object["platform"] as? String == "apns")
                #expect(first.object["environment"] as? String == "sandbox")
                #expect(first.object["locale"] as? String == "ko-KR")
                #expect(
                    Set(first.object.keys) == ["id", "platform", "environment", "locale", "createdAt", "lastSeenAt"])
                #expect(!String(decoding: first.bytes, as: UTF8.self).contains(token), "the token is never shown")

                let again = try await api.call(.post, "/v1/me/devices", token: ana.token, json: registration)
                #expect(again.status == .ok, "\(again.object)")
                #expect(again.object["id"] as? String == id)
                #expect(again.object["createdAt"] as? String == first.object["createdAt"] as? String)
                let seen = try #require(again.object["lastSeenAt"] as? String)
                #expect(seen >= (first.object["lastSeenAt"] as? String ?? ""))

                let fcm = try await api.call(
                    .post, "/v1/me/devices", token: ana.token, json: ["platform": "fcm", "token": "fcm:APA91b-x_y"])
                #expect(fcm.status == .created)
                #expect(fcm.object["environment"] as? String == "production")
                #expect(fcm.object["locale"] is NSNull)
                let listed = try await api.call(.get, "/v1/me/devices", token: ana.token)
                #expect(listed.items.compactMap { $0["id"] as? String } == [id, fcm.object["id"] as? String])
                #expect(!String(decoding: listed.bytes, as: UTF8.self).contains(token))

                // The phone changes hands: the token is Bo's now, as a new device of his.
                let moved = try await api.call(.post, "/v1/me/devices", token: bo.token, json: registration)
                #expect(moved.status == .created)
                #expect(moved.object["id"] as? String != id)
                let anas = try await api.call(.get, "/v1/me/devices", token: ana.token)
                #expect(anas.items.compactMap { $0["id"] as? String } == [fcm.object["id"] as? String])
                let bos = try await api.call(.get, "/v1/me/devices", token: bo.token)
                #expect(bos.items.compactMap { $0["id"] as? String } == [moved.object["id"] as? String])

                let movedID = try #require(moved.object["id"] as? String)
                let notHers = try await api.call(.delete, "/v1/me/devices/\(movedID)", token: ana.token)
                #expect(notHers.status == .notFound)
                #expect(try await api.call(.delete, "/v1/me/devices/\(movedID)", token: bo.token).status == .noContent)
                #expect(try await api.call(.delete, "/v1/me/devices/\(movedID)", token: bo.token).status == .notFound)
                #expect(try await api.call(.get, "/v1/me/devices", token: bo.token).items.isEmpty)

                // Sealed in the log: the file holds no byte of the token in plain.
                let log = try #require(FileManager.default.contents(atPath: directory + "/log/data.mdb"))
                #expect(log.range(of: Data(token.utf8)) == nil)
            }
        }
    }

    @Test("bad registrations are refused with a clear error and append nothing")
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head
            for (body, code) in [
                (["platform": "apns", "token": ""], "invalid_field"),
                (["platform": "apns", "token": "has space"], "invalid_field"),
                (["platform": "apns", "token": String(repeating: "a", count: 4097)], "invalid_field"),
                (["platform": "webpush", "token": "abc"], "invalid_field"),
                (["platform": "apns", "token": "abc", "environment": "staging"], "invalid_field"),
                (["platform": "fcm", "token": "abc", "environment": "sandbox"], "invalid_field"),
                (["platform": "apns", "token": "abc", "locale": "ko KR"], "invalid_field"),
                (["token": "abc"], "bad_request"),
                (["platform": "fcm", "token": "abc", "environment": NSNull()], "bad_request"),
                (["platform": "fcm", "token": "abc", "locale": NSNull()], "bad_request"),
            ] {
                let answer = try await api.call(.post, "/v1/me/devices", token: ana.token, json: body)
                #expect(answer.errorCode == code, "\(body): \(answer.status) \(answer.object)")
                #expect(answer.status == (code == "bad_request" ? .badRequest : .unprocessableContent))
            }
            #expect(
                try await api.call(.post, "/v1/me/devices", json: ["platform": "apns", "token": "a"]).status
                    == .unauthorized)
            #expect(try await api.call(.delete, "/v1/me/devices/nope", token: ana.token).status == .notFound)
            #expect(api.head == head)
        }
    }

    @Test("logging out with a device id forgets that device; without one, the devices stay")
    func logout() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let phone = try await api.logIn(ana)
            let first = try await api.call(
                .post, "/v1/me/devices", token: ana.token, json: ["platform": "apns", "token": Self.apnsToken()])
            let second = try await api.call(
                .post, "/v1/me/devices", token: phone, json: ["platform": "apns", "token": Self.apnsToken()])
            let firstID = try #require(first.object["id"] as? String)
            let secondID = try #require(second.object["id"] as? String)

            #expect(try await api.call(.post, "/v1/auth/logout", token: phone).status == .noContent)
            let laptop = try await api.logIn(ana)
            #expect(try await api.call(.get, "/v1/me/devices", token: laptop).items.count == 2)
            let out = try await api.call(.post, "/v1/auth/logout", token: ana.token, json: ["deviceId": firstID])
            #expect(out.status == .noContent)
            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .unauthorized)
            let left = try await api.call(.get, "/v1/me/devices", token: laptop)
            #expect(left.items.compactMap { $0["id"] as? String } == [secondID])
            for deviceID in ["x", NSNull()] as [Any] {
                let malformed = try await api.call(
                    .post, "/v1/auth/logout", token: laptop, json: ["deviceId": deviceID])
                #expect(malformed.status == .badRequest, "\(deviceID)")
            }
        }
    }

    @Test("push settings are all `all` until changed; a change sets the kinds named and keeps the others")
    func settings() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let kinds = ["likes", "comments", "follows", "reposts", "mentions", "messages"]
            let initial = try await api.call(.get, "/v1/me/push-settings", token: ana.token)
            #expect(initial.status == .ok)
            #expect(initial.object as? [String: String] == Dictionary(uniqueKeysWithValues: kinds.map { ($0, "all") }))

            let changed = try await api.call(
                .patch, "/v1/me/push-settings", token: ana.token, json: ["likes": "off", "messages": "followed"])
            #expect(changed.status == .ok)
            var expected = Dictionary(uniqueKeysWithValues: kinds.map { ($0, "all") })
            expected["likes"] = "off"
            expected["messages"] = "followed"
            #expect(changed.object as? [String: String] == expected)
            let later = try await api.call(.patch, "/v1/me/push-settings", token: ana.token, json: ["likes": "all"])
            expected["likes"] = "all"
            #expect(later.object as? [String: String] == expected)
            #expect(
                try await api.call(.get, "/v1/me/push-settings", token: ana.token).object as? [String: String]
                    == expected)

            let head = api.head
            for body in [["likes": "sometimes"], ["pokes": "off"]] as [[String: Any]] {
                let refused = try await api.call(.patch, "/v1/me/push-settings", token: ana.token, json: body)
                #expect(refused.status == .unprocessableContent && refused.errorCode == "invalid_field", "\(body)")
            }
            let notText = try await api.call(.patch, "/v1/me/push-settings", token: ana.token, json: ["likes": 1])
            #expect(notText.status == .badRequest)
            #expect(api.head == head)
        }
    }
}
