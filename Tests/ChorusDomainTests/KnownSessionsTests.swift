import ChorusLog
import Testing

@testable import ChorusDomain

@Suite("Sessions found before")
struct KnownSessionsTests {
    @Test("one read before the newest removal is not answered; past the capacity all are forgotten")
    func removalAndCapacity() {
        let known = KnownSessions()
        let (ana, session) = (UserID.make(), SessionID.make())
        let expiry = EventTime(millisecondsSince1970: 1_000)
        known.keep(session, user: ana, expiresAt: expiry, readAt: LogPosition(10))
        #expect(known.found(session, removedAt: LogPosition(10))?.user == ana, "read at the removal's position")
        #expect(known.found(session, removedAt: LogPosition(11)) == nil, "read before a removal")
        #expect(known.found(SessionID.make(), removedAt: .start) == nil, "never found")

        let others = (0..<KnownSessions.capacity).map { _ in SessionID.make() }
        for other in others { known.keep(other, user: ana, expiresAt: expiry, readAt: LogPosition(10)) }
        #expect(known.found(session, removedAt: .start) == nil, "forgotten when the capacity was reached")
        #expect(known.found(others.last!, removedAt: .start)?.user == ana, "kept after")
    }
}
