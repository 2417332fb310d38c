import ChorusLog
import ChorusTestSupport
import Testing

@testable import ChorusDomain

@Suite("Password resets")
struct PasswordResetTests {
    @Test("a reset past its hour, or revoked by a password change, is an invalid token and changes nothing")
    func expiredAndRevoked() async throws {
        try await withExecutor { chorus, _ in
            let ana = try await chorus.register("Ana")
            // A reset asked for two hours ago, recorded as the decision would have.
            let stale = PasswordResetRequested(
                user: ana, reset: .make(),
                expiresAt: EventTime(millisecondsSince1970: EventTime.now.millisecondsSince1970 - 3_600_000))
            try await chorus.log.append(.durable, eventCount: 1) { batch in
                let event = DomainEvent.passwordResetRequested(stale)
                let outcome = try batch.append(
                    AppendRequest(stream: event.stream, events: [try event.encoded(keys: TestDataKeys.shared)]))
                try DecisionState().apply(event, at: outcome.lastPosition, in: batch.state)
            }
            let head = chorus.log.head
            await #expect(throws: DomainError(.invalidToken, "the reset token is unknown, used or expired")) {
                try await chorus.execute(.resetPassword(user: ana, reset: stale.reset, newPassword: "new password"))
            }

            // A fresh one, then a password change: the change revokes it.
            _ = try await chorus.execute(.requestPasswordReset(email: "ana@example.com"))
            guard case .passwordResetRequested(let fresh) = try chorus.events().last else {
                Issue.record("no reset requested")
                return
            }
            let session = try await chorus.execute(.logIn(email: "ana@example.com", password: "secret-password"))
            let change = try await chorus.execute(
                .changePassword(
                    user: ana, session: session.session!.session, currentPassword: "secret-password",
                    newPassword: "changed password"))
            guard
                case .passwordChanged(let changed) = try chorus.events().first(where: {
                    if case .passwordChanged = $0 { true } else { false }
                })
            else {
                Issue.record("no password change")
                return
            }
            #expect(Set(changed.revokedResets) == [stale.reset, fresh.reset])
            #expect(change.appended)
            let afterChange = chorus.log.head
            await #expect(throws: DomainError.self) {
                try await chorus.execute(.resetPassword(user: ana, reset: fresh.reset, newPassword: "new password"))
            }
            #expect(chorus.log.head == afterChange && head < afterChange)
            var audit = DecisionStateAudit(log: chorus.log, keys: TestDataKeys.shared)
            let report = try audit.run()
            #expect(report.mismatch == nil && report.olderFormat == nil)
        }
    }
}
