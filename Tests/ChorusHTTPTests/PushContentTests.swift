import ChorusDelivery
import ChorusDomain
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("Push: what is pushed to whom")
struct PushContentTests {
    /// An outbox following the log as a server's does, from its start.
    final class Follower: Sendable {
        let outbox: DeliveryOutbox<Push>
        let api: APIFixture
        private let task: Task<Void, Never>

        init(_ api: APIFixture, in directory: String) throws {
            let outbox = try DeliveryOutbox<Push>(directory: directory + "/push-outbox", startingAt: .start)
            let content = PushEvents(keys: api.backend.keys)
            (self.outbox, self.api) = (outbox, api)
            task = Task {
                await outbox.follow(api.backend, logger: .init(label: "test"), what: "pushes") { event, view in
                    try content.pushes(of: event, in: view)
                }
            }
        }

        /// Waits until the outbox has taken in the log's head: what was pushed is decided as of each event, as it is
        /// while a server keeps up.
        func settle() async throws {
            let head = api.head
            try await eventually("the outbox taking in the log through \(head)") { try outbox.checkpoint >= head }
        }

        /// Every push pending, by device, in log order.
        func pushes() async throws -> [String: [PushPayload]] {
            try await settle()
            return Dictionary(grouping: try outbox.pending().map(\.item), by: \.device.rawValue).mapValues {
                $0.map(\.payload)
            }
        }

        func stop() {
            task.cancel()
            outbox.close()
        }
    }

    @Test(
        "notifications and messages go to every device of the recipient as their settings say, never their own acts nor a muted user's; reading sends a silent badge"
    )
    func whatIsPushed() async throws {
        try await withTemporaryDirectory { directory in
            try await withAPI(in: directory + "/server") { api in
                let ana = try await api.register("Ana")
                let bo = try await api.register("Bo")
                let cy = try await api.register("Cy")
                var anasDevices: [String] = []
                for registration in [
                    ["platform": "apns", "token": String(repeating: "a1", count: 32)],
                    ["platform": "fcm", "token": "fcm:ana-tablet"],
                ] {
                    let device = try await api.call(.post, "/v1/me/devices", token: ana.token, json: registration)
                    anasDevices.append(try #require(device.object["id"] as? String))
                }
                let bos = try await api.call(
                    .post, "/v1/me/devices", token: bo.token,
                    json: ["platform": "apns", "token": String(repeating: "b2", count: 32)])
                let boDevice = try #require(bos.object["id"] as? String)
                let post = try await api.post(ana, "hello")
                let follower = try Follower(api, in: directory)
                defer { follower.stop() }
                /// A request of `user`'s, once the outbox has taken in what it appended.
                func act(_ user: APIFixture.User, _ method: HTTPRequest.Method, _ path: String, _ json: Any? = nil)
                    async throws -> APIFixture.Answer
                {
                    let answer = try await api.call(method, path, token: user.token, json: json)
                    #expect(answer.status.code < 300, "\(method) \(path): \(answer.status) \(answer.object)")
                    try await follower.settle()
                    return answer
                }

                _ = try await act(bo, .put, "/v1/posts/\(post)/like")
                _ = try await act(ana, .put, "/v1/posts/\(post)/like")
                _ = try await act(ana, .patch, "/v1/me/push-settings", ["comments": "followed"])
                _ = try await act(bo, .post, "/v1/posts/\(post)/comments", ["text": "not followed yet"])
                _ = try await act(ana, .put, "/v1/users/\(bo.id)/follow")
                _ = try await act(bo, .post, "/v1/posts/\(post)/comments", ["text": "followed now"])
                _ = try await act(ana, .patch, "/v1/me/push-settings", ["likes": "off"])
                _ = try await act(cy, .put, "/v1/posts/\(post)/like")
                _ = try await act(ana, .put, "/v1/users/\(cy.id)/mute")
                _ = try await act(cy, .post, "/v1/messages", ["to": ana.id, "text": "muted"])
                let text = String(repeating: "가", count: 130)
                _ = try await act(bo, .post, "/v1/messages", ["to": ana.id, "text": text])
                let notifications = try await act(ana, .get, "/v1/notifications")
                let newest = try #require(notifications.items.first?["id"] as? String)
                _ = try await act(ana, .post, "/v1/notifications/read", ["upTo": newest])

                let pushes = try await follower.pushes()
                #expect(Set(pushes.keys) == Set(anasDevices + [boDevice]))
                for device in anasDevices {
                    let got = try #require(pushes[device])
                    #expect(
                        got.map(\.body) == [
                            "Bo liked your post", "Bo commented on your post", "Bo: " + String(text.prefix(120)), nil,
                        ])
                    #expect(got.map(\.kind) == [.like, .comment, .message, .badge])
                    #expect(got.first?.collapseID == "likes:\(post)")
                    #expect(got.first?.postID == post && got.first?.userID == bo.id)
                    // Unread notifications and conversations as of each: the like; with both comments; with Cy's
                    // like (hidden once muted) out and both conversations in; after reading, the conversations.
                    #expect(got.map(\.badge) == [1, 3, 5, 2])
                    #expect(got.map(\.position) == got.map(\.position).sorted())
                }
                #expect(pushes[boDevice]?.map(\.body) == ["Ana followed you"])

                // Bo's erasure takes every push to him or telling what he did; Ana's badge updates stay.
                try await follower.outbox.forget(
                    [UserID(unchecked: bo.id)], deletedThrough: api.head, timeout: .seconds(30))
                let left = try follower.outbox.pending().map(\.item)
                #expect(left.map(\.payload.kind) == [.badge, .badge] && left.allSatisfy { $0.user.rawValue == ana.id })
            }
        }
    }
}
