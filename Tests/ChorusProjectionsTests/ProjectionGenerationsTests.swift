import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Foundation
import Testing

@Suite("Projection generations")
struct ProjectionGenerationsTests {
    @Test("a rebuild is swapped in atomically; an engine still open on the old generation keeps reading it")
    func rebuildAndSwap() async throws {
        try await withProjections { app in
            _ = try await DemoWorkload(seed: 9, events: 300).run(on: app.chorus)
            // The harness's engine built `projections` as a plain directory: the first swap adopts it.
            try app.engine.catchUp()
            let generations = ProjectionGenerations(dataDirectory: app.directory)
            let first = try generations.rebuildAndSwap(log: app.log, keys: TestDataKeys.shared)
            #expect(first == app.log.head)
            let firstTarget = try FileManager.default.destinationOfSymbolicLink(atPath: generations.current)

            let old = try ProjectionEngine(log: app.log, keys: TestDataKeys.shared, directory: generations.current)
            defer { old.close() }
            let oldPosition = old.position

            let ana = try await app.register("Late Ana")
            let late = try await app.post(ana, "after the first rebuild")
            let second = try generations.rebuildAndSwap(log: app.log, keys: TestDataKeys.shared)
            #expect(second == app.log.head)
            let secondTarget = try FileManager.default.destinationOfSymbolicLink(atPath: generations.current)
            #expect(secondTarget != firstTarget)
            #expect(
                !FileManager.default.fileExists(atPath: app.directory + "/" + firstTarget), "the old generation is gone"
            )

            // The engine opened before the swap still reads its generation; a new one reads the rebuilt store.
            let stale = try old.snapshot { try $0.post(late, viewer: nil) }
            #expect(stale.answer == nil && stale.position == oldPosition)
            let new = try ProjectionEngine(log: app.log, keys: TestDataKeys.shared, directory: generations.current)
            defer { new.close() }
            #expect(new.position == app.log.head)
            #expect(try new.snapshot { try $0.post(late, viewer: nil)?.text }.answer == "after the first rebuild")

            let reference = app.directory + "/reference"
            _ = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: reference)
            #expect(try dumpReadModels(new.store) == dumpReadModels(atDirectory: reference))
        }
    }
}
