import ChorusBackend
import ChorusHTTP
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

@Suite("API: online rebuild")
struct OnlineRebuildTests {
    @Test(
        "through a whole online rebuild no request fails, no read goes back in position, and the result equals an offline rebuild"
    )
    func rebuildUnderLoad() async throws {
        var options = APIFixture.options
        options.server.adminToken = "admin"
        try await withAPI(options: options) { api in
            let users = [try await api.register("Ana"), try await api.register("Bo"), try await api.register("Cy")]
            for user in users { for index in 0..<30 { _ = try await api.post(user, "\(user.id) \(index)") } }
            let generation = try FileManager.default.destinationOfSymbolicLink(atPath: api.backend.data.projections)

            let load = Load()
            let work = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, user) in users.enumerated() {
                        group.addTask {
                            var count = 0
                            while load.running.load(ordering: .relaxed) {
                                count += 1
                                let other = users[(index + 1) % users.count]
                                let answer =
                                    count.isMultiple(of: 3)
                                    ? try await api.call(.put, "/v1/users/\(other.id)/follow", token: user.token)
                                    : try await api.call(
                                        .post, "/v1/posts", token: user.token, json: ["text": "during \(count)"])
                                if answer.status.code >= 300 {
                                    load.failures.withLock { $0.append("write \(answer.status)") }
                                }
                                load.requests.add(1, ordering: .relaxed)
                            }
                        }
                        group.addTask {
                            var last: UInt64 = 0
                            while load.running.load(ordering: .relaxed) {
                                let answer = try await api.call(.get, "/v1/feed/following?limit=5", token: user.token)
                                guard answer.status == .ok, let position = answer.position else {
                                    load.failures.withLock { $0.append("read \(answer.status)") }
                                    continue
                                }
                                if position < last {
                                    load.failures.withLock {
                                        $0.append("position went back from \(last) to \(position)")
                                    }
                                }
                                last = position
                                load.requests.add(1, ordering: .relaxed)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }

            // The rebuild starts under load, and ends under load.
            try await load.waitForRequests(30)
            let started = try await api.call(.post, "/v1/admin/projections/rebuild", token: "admin")
            #expect(started.status == .accepted)
            var state = ""
            for _ in 0..<600 {
                let status = try await api.call(.get, "/v1/admin/projections", token: "admin")
                state = ((status.object["projections"] as? [[String: Any]])?.first?["state"] as? String) ?? ""
                if state != "rebuilding" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(state != "rebuilding", "the rebuild ended")
            #expect(api.backend.readModels.rebuildState != .none)
            if case .failed(let reason) = api.backend.readModels.rebuildState {
                Issue.record("rebuild failed: \(reason)")
            }
            try await load.waitForRequests(load.requests.load(ordering: .relaxed) + 30)
            load.running.store(false, ordering: .relaxed)
            try await work.value
            #expect(load.failures.withLock { $0 }.isEmpty, "\(load.failures.withLock { $0 }.prefix(5))")
            #expect(
                try FileManager.default.destinationOfSymbolicLink(atPath: api.backend.data.projections) != generation)

            try await api.backend.readModels.waitUntilApplied(api.head, timeout: APIFixture.consistencyTimeout)
            let offline = api.backend.data.root + "/offline-check"
            _ = try ProjectionEngine.rebuild(
                log: api.backend.log, keys: api.backend.keys, into: offline, through: api.backend.projections.position)
            #expect(
                try dumpReadModels(atDirectory: offline) == dumpReadModels(api.backend.projections.store),
                "byte for byte")
        }
    }

    /// Whether the load runs, how many requests it made, and what failed in it.
    private final class Load: Sendable {
        let running = Atomic<Bool>(true)
        let requests = Atomic<Int>(0)
        let failures = Mutex<[String]>([])

        /// Returns once the load has made `count` requests.
        func waitForRequests(_ count: Int) async throws {
            try await eventually("\(count) requests of the load") { requests.load(ordering: .relaxed) >= count }
        }
    }
}
