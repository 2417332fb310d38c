import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Crypto
import Dispatch
import Logging
import Synchronization
import Testing

@Suite("Projection service")
struct ProjectionServiceTests {
    @Test("two served read models in one process apply apart: one held mid-batch holds up nothing of the other")
    func servedReadModelsApplyApart() async throws {
        try await withProjections { app in
            let keys = GatedDataKeys(TestDataKeys.shared)
            defer { keys.open() }
            let logger = Logger(label: "test")
            let held = try ServedReadModels(
                log: app.log, keys: keys, dataDirectory: app.directory + "/held", logger: logger)
            let other = try ServedReadModels(
                log: app.log, keys: TestDataKeys.shared, dataDirectory: app.directory + "/other", logger: logger)
            defer {
                try? held.close()
                try? other.close()
            }
            var services = [Task { try await ProjectionService(readModels: held).run() }]
            defer { for service in services { service.cancel() } }

            // The sign-up's sealed fields are opened by each: the first read models wait at their key lookup.
            _ = try await app.register("Ana")
            let started = ContinuousClock.now
            while !keys.isWaitedOn, ContinuousClock.now - started < readModelsWait {
                try await Task.sleep(for: .milliseconds(1))
            }
            try #require(keys.isWaitedOn)
            services.append(Task { try await ProjectionService(readModels: other).run() })
            try await other.waitUntilApplied(app.log.head, timeout: readModelsWait)
            #expect(!keys.isOpen, "the other read models applied the sign-up while the first were held")
            #expect(held.current.position < app.log.head)

            keys.open()
            try await held.waitUntilApplied(app.log.head, timeout: readModelsWait)
            for service in services { service.cancel() }
            for service in services { try await service.value }
        }
    }
}

/// Data keys whose lookups wait until ``open()`` (or 120 s have passed, so that a failing test ends): a projection
/// batch that opens a sealed field is held mid-way.
private final class GatedDataKeys: PersonalDataKeys {
    private let inner: any PersonalDataKeys
    private let gate = DispatchGroup()
    private let opened = Atomic<Bool>(false)
    private let waitedOn = Atomic<Bool>(false)

    init(_ inner: any PersonalDataKeys) {
        self.inner = inner
        gate.enter()
    }

    var isOpen: Bool { opened.load(ordering: .sequentiallyConsistent) }
    var isWaitedOn: Bool { waitedOn.load(ordering: .sequentiallyConsistent) }

    func open() {
        guard !opened.exchange(true, ordering: .sequentiallyConsistent) else { return }
        gate.leave()
    }

    func key(of user: UserID) throws -> SymmetricKey? {
        waitedOn.store(true, ordering: .sequentiallyConsistent)
        if gate.wait(timeout: .now() + .seconds(120)) == .timedOut { open() }
        return try inner.key(of: user)
    }

    func makeKey(for user: UserID) throws -> SymmetricKey { try inner.makeKey(for: user) }
    func destroy(_ user: UserID) throws { try inner.destroy(user) }
}
