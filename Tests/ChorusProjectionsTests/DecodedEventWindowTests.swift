import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

@Suite("Decoded event window")
struct DecodedEventWindowTests {
    /// The texts of the messages `window` lends from `start` through `end`.
    private func messageTexts(_ window: DecodedEventWindow, from start: LogPosition, through end: LogPosition) throws
        -> [String]
    {
        try window.withEvents(from: start, through: end, limit: 1_000) { entries in
            entries.compactMap { entry in
                if case .messageSent(let message) = entry.event { message.text } else { nil }
            }
        }
    }

    /// Bo's message to Ana, read once through a window of `capacity` positions, which keeps it.
    private func withMessageKept(
        _ text: String, capacity: Int = 4_096,
        _ body: (ProjectionHarness, _ ana: UserID, _ bo: UserID, LogPosition, DecodedEventWindow) async throws -> Void
    ) async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            _ = try await app.chorus.execute(.sendMessage(from: bo, to: ana, text: text))
            let sent = app.log.head
            let window = DecodedEventWindow(log: app.log, keys: TestDataKeys.shared, capacity: capacity)
            #expect(try messageTexts(window, from: sent, through: sent) == [text])
            try await body(app, ana, bo, sent, window)
        }
    }

    @Test("a message kept decoded is never lent again in plain once its sender's deletion is in the log, read or not")
    func deletionNotYetRead() async throws {
        try await withMessageKept("secret words") { app, _, bo, sent, window in
            // Kept, and lent again while the log ends there.
            #expect(try messageTexts(window, from: sent, through: sent) == ["secret words"])

            _ = try await app.chorus.execute(.deleteAccount(user: bo, password: "secret1"))
            let deleted = app.log.head
            // No one has read the deletion yet: the first stream to walk past it starts at the message.
            #expect(try messageTexts(window, from: sent, through: deleted) == [""])
            #expect(try messageTexts(window, from: sent, through: deleted) == [""])
            // Emptied: a stream still behind the deletion reads the message afresh, under the key that is gone.
            #expect(try messageTexts(window, from: sent, through: sent) == [""])
        }
    }

    @Test("a window asked through a position further on than it keeps starts again from the log")
    func farBehind() async throws {
        try await withMessageKept("first", capacity: 4) { app, ana, bo, first, window in
            for index in 0..<6 { _ = try await app.chorus.execute(.sendMessage(from: ana, to: bo, text: "\(index)")) }
            _ = try await app.chorus.execute(.deleteAccount(user: bo, password: "secret1"))
            let texts = try messageTexts(window, from: first, through: app.log.head)
            #expect(texts == ["", "0", "1", "2", "3", "4", "5"], "Bo's message blank, Ana's kept")
            // Lent in pieces of `limit`, in order.
            let pieces = try window.withEvents(from: first, through: app.log.head, limit: 3) {
                $0.map(\.recorded.position)
            }
            #expect(pieces == [first, first.next, first.next.next])
        }
    }
}
