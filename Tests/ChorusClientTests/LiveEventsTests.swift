import Foundation
import OpenAPIRuntime
import Synchronization
import Testing

@testable import ChorusClient

@Suite("Client SDK: live streams")
struct LiveEventsTests {
    /// A server that answers each connection with the next script (SSE text), then drops it; records where each
    /// connection asked to start.
    final class ScriptedServer: Sendable {
        let scripts: Mutex<[String]>
        let starts = Mutex<[UInt64]>([])

        init(_ scripts: [String]) { self.scripts = Mutex(scripts) }

        func open(after: UInt64) async throws -> HTTPBody {
            starts.withLock { $0.append(after) }
            guard let script = scripts.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                // Nothing more to say: a connection that stays open.
                try await Task.sleep(for: .seconds(60))
                throw CancellationError()
            }
            return HTTPBody(script)
        }
    }

    static func event(_ id: UInt64, _ name: String, _ json: String) -> String {
        "id: \(id)\nevent: \(name)\ndata: \(json)\n\n"
    }

    @Test("a stream that drops in the middle of a position resumes one position back and delivers each event once")
    func resumesWithoutRepeatsOrGaps() async throws {
        let removedA = #"{"id":"a"}"#
        let removedB = #"{"id":"b"}"#
        let server = ScriptedServer([
            // The first connection: position 11 whole, then only the first of position 12's two events.
            ": open\n\n" + Self.event(11, "like", #"{"postId":"p","likes":1}"#)
                + Self.event(12, "post_removed", removedA),
            // The second: from 11 on, as asked: position 12 whole, then 13.
            ": open\n\n" + Self.event(12, "post_removed", removedA) + Self.event(12, "post_removed", removedB)
                + Self.event(13, "repost", #"{"postId":"p","reposts":2}"#),
        ])
        var live = LiveEvents(start: 10) { after in try await server.open(after: after) }
        live.firstDelay = .milliseconds(10)
        var delivered: [LiveUpdate] = []
        for try await update in live {
            delivered.append(update)
            if delivered.count == 4 { break }
        }
        #expect(delivered.map(\.position) == [11, 12, 12, 13])
        #expect(
            delivered.map(\.event) == [
                .likes(postID: "p", count: 1), .postRemoved(postID: "a"), .postRemoved(postID: "b"),
                .reposts(postID: "p", count: 2),
            ])
        // The second connection resumed one position back. Its body ends after 13, so the stream may already have
        // connected a third time, from one before 13, before the loop above broke off.
        let starts = server.starts.withLock { $0 }
        #expect(starts.prefix(2) == [10, 11])
        #expect(starts.dropFirst(2).allSatisfy { $0 == 12 })
    }

    @Test("a refusal (a 4xx) ends the stream with the server's error")
    func refusalEnds() async throws {
        let live = LiveEvents(start: 0) { _ in
            throw ChorusError(status: 403, code: "forbidden", message: "only members")
        }
        await #expect(throws: ChorusError(status: 403, code: "forbidden", message: "only members")) {
            for try await _ in live {}
        }
    }
}
