import ChorusLog
import Synchronization
import Testing

@Suite("Position notifier")
struct PositionNotifierTests {
    @Test("a wait ends with the head once it passes, before the deadline")
    func publishedBeforeDeadline() async throws {
        let notifier = PositionNotifier(head: 3)
        let waiting = Task { try await notifier.waitForHead(after: 5, until: .now + .seconds(30)) }
        notifier.publish(5)
        notifier.publish(7)
        #expect(try await waiting.value == 7)
    }

    @Test("a deadline ends its wait with nil when nothing is published, and not before it")
    func deadlineWithoutPublish() async throws {
        let notifier = PositionNotifier(head: 1)
        let started = ContinuousClock.now
        let head = try await notifier.waitForHead(after: 1, until: started + .milliseconds(200))
        #expect(head == nil)
        #expect(ContinuousClock.now - started >= .milliseconds(200))
    }

    @Test("each wait ends at its own deadline: a near one ends while a far one still waits for the head")
    func deadlinesAreIndependent() async throws {
        let notifier = PositionNotifier(head: 1)
        let far = Task { try await notifier.waitForHead(after: 1, until: .now + .seconds(60)) }
        let near = try await notifier.waitForHead(after: 1, until: .now + .milliseconds(100))
        #expect(near == nil)
        // Publishing a position no wait is after ends nothing early: had it ended the far wait, that wait's answer
        // would be 1.
        notifier.publish(1)
        notifier.publish(2)
        #expect(try await far.value == 2)
    }

    @Test("a head already past answers at once, even past the deadline; a passed deadline answers nil at once")
    func immediateAnswers() async throws {
        let notifier = PositionNotifier(head: 9)
        #expect(try await notifier.waitForHead(after: 4, until: .now - .seconds(1)) == 9)
        #expect(try await notifier.waitForHead(after: 9, until: .now - .seconds(1)) == nil)
    }

    @Test("cancelling a wait with a deadline throws CancellationError; closing ends the others")
    func cancelAndClose() async throws {
        let notifier = PositionNotifier(head: 1)
        let cancelled = Task { try await notifier.waitForHead(after: 1, until: .now + .seconds(60)) }
        let closed = Task { try await notifier.waitForHead(after: 1, until: .now + .seconds(60)) }
        // Whether or not each task is waiting yet, cancelling and closing end it the same way.
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        notifier.close()
        await #expect(throws: EventLogError.self) { try await closed.value }
    }

    @Test("ending the shutdown waits ends those marked so, and each marked wait begun after, but no other")
    func shutdownWaits() async throws {
        let notifier = PositionNotifier(head: 1)
        let marked = Task {
            try await notifier.waitForHead(after: 1, until: .now + .seconds(60), endsOnShutdown: true)
        }
        let unmarked = Task { try await notifier.waitForHead(after: 1, until: .now + .seconds(60)) }
        // Whether or not the marked task waits yet, it ends the same way.
        notifier.endShutdownWaits()
        await #expect(throws: CancellationError.self) { try await marked.value }
        await #expect(throws: CancellationError.self) {
            try await notifier.waitForHead(after: 1, until: .now + .seconds(60), endsOnShutdown: true)
        }
        notifier.publish(2)
        #expect(try await unmarked.value == 2)
        #expect(try await notifier.waitForHead(after: 1, until: .now + .seconds(60), endsOnShutdown: true) == 2)
    }

    @Test("many waits with deadlines, most answered by the head, the rest by their deadline")
    func manyWaits() async throws {
        let notifier = PositionNotifier(head: 0)
        let answered = try await withThrowingTaskGroup(of: LogPosition?.self) { group in
            for target in 1...2_000 {
                group.addTask {
                    try await notifier.waitForHead(
                        after: LogPosition(UInt64(target - 1)), until: .now + .milliseconds(300))
                }
            }
            // A wait that starts after this publish is answered at once, as one already waiting is.
            notifier.publish(1_000)
            var answers: [LogPosition?] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answered.filter { $0 == 1_000 }.count == 1_000)
        #expect(answered.filter { $0 == nil }.count == 1_000)
    }
}
